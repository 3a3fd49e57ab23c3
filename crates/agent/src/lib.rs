//! cocode-agent (layer L2): the built-in agent runtime — provider adapters
//! (Anthropic Messages, OpenAI-compatible Chat Completions, the offline local
//! agent), streaming, the tool loop and its limits, retries, and model
//! catalogs. It holds no policy: every action is a call through the app's
//! `ToolRegistry`, which applies policy and approvals.

pub mod context;
pub mod conversation;
pub mod error;
pub mod local;
pub mod prompt;
pub mod providers;
pub mod session;
pub mod transport;
pub mod wire;

pub use error::{ProviderError, ProviderErrorCode};
pub use providers::{
    AdapterKind, CatalogKind, LlmProviderRegistry, ModelInfo, ModelPrice, ProviderConfig,
    RegistryBuildError, fetch_models,
};
pub use session::{BuiltInRuntime, BuiltInSession, LoopLimits};
pub use transport::{RetryPolicy, Transport, UpstreamProxies};
