//! cocode-acp (layer L2): the Agent Client Protocol host — runs external agents under the same gate, sandbox and approvals and maps ACP to the `AgentRuntime` contract.
