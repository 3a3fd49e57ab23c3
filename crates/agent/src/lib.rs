//! cocode-agent (layer L2): the built-in agent runtime — provider adapters (Anthropic, OpenAI-compatible, local), streaming, the tool loop and its limits, retries, and model catalogs.
