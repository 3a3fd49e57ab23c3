//! cocode-tool-protocol (layer L0): the canonical tool protocol — every
//! action an agent, the local agent, the command palette or a test takes goes
//! through one [`ToolRegistry`]: `tools/list → tools/call → validation →
//! policy → handler → structured result`. Provider formats are projections
//! of the canonical definitions, never a second source.

pub mod approval;
pub mod args;
pub mod catalog;
pub mod durable;
pub mod error;
pub mod limits;
pub mod observe;
pub mod policy;
pub mod projection;
pub mod registry;
pub mod types;

#[cfg(test)]
mod test_fixtures;

pub use approval::{
    ApprovalDecision, ApprovalEvent, ApprovalPreview, ApprovalPreviewer, ApprovalQueue,
    ApprovalSnapshot, ChangeKind, ChangePreview,
};
pub use durable::{
    DurableOperationStore, InMemoryOperationStore, OperationRecord, OperationState, Resolution,
};
pub use error::{ToolError, ToolErrorCode};
pub use policy::{DefaultPolicy, PolicyDecision, ToolPolicy};
pub use registry::{
    ExportFormat, HandlerContext, OutputSink, RegistrationError, RegistryOptions, ToolCallOptions,
    ToolHandler, ToolOutput, ToolRegistry,
};
pub use types::{
    ContentBlock, ToolAnnotations, ToolCallContext, ToolCallRequest, ToolCallResult,
    ToolDefinition, ToolListRequest, ToolListResult, ToolMode, ToolSource, stringify_tool_content,
};
