//! cocode-acp (layer L2): the ACP host — external agents (Gemini CLI,
//! Claude Code, Codex, any ACP agent) launched through the toolchain's
//! launcher and driven over the Agent Client Protocol (client side). It
//! holds no policy: file access and permissions come back to the host as
//! `AgentRequest`s, completed through the same use cases as the built-in
//! agent's tool calls.

pub mod framing;
pub mod registry;
pub mod session;
pub mod updates;

/// The protocol's message types (for decoding tests and fuzzing).
pub use agent_client_protocol::v1::schema;

pub use registry::{AcpAgentConfig, AcpAgentRegistry};
pub use session::{AcpRuntime, AcpSession, CANCEL_GRACE};
pub use updates::UpdateMapper;
