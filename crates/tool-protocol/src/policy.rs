//! Call policy: `allow | ask | deny`, decided by a pure function.

use serde::{Deserialize, Serialize};

use crate::types::{ToolCallContext, ToolDefinition, ToolMode, ToolSource};

/// What happens to a call that passed validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyDecision {
    /// Run the handler.
    Allow,
    /// Ask a person through the approval queue first.
    Ask,
    /// Refuse with `TOOL_POLICY_DENIED`.
    Deny,
}

/// Decides the policy of a call.
pub trait ToolPolicy: Send + Sync {
    fn decide(&self, definition: &ToolDefinition, ctx: &ToolCallContext) -> PolicyDecision;
}

/// The default rules: read-only tools are allowed; a mutation is allowed
/// only when a person invoked it directly from the palette; every other
/// mutation (model, local agent, ACP agent, tests in agent mode) asks.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultPolicy;

impl ToolPolicy for DefaultPolicy {
    fn decide(&self, definition: &ToolDefinition, ctx: &ToolCallContext) -> PolicyDecision {
        if definition.annotations.read_only {
            return PolicyDecision::Allow;
        }
        match (ctx.source, ctx.mode) {
            (ToolSource::Palette, ToolMode::Direct) => PolicyDecision::Allow,
            _ => PolicyDecision::Ask,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::{context as ctx, definition};

    fn def(read_only: bool) -> ToolDefinition {
        definition("workspace.writeFile", read_only)
    }

    #[test]
    fn default_rules() {
        use ToolMode::{Agent, Direct};
        use ToolSource::{Acp, LocalFallback, Model, Palette, Test};
        for source in [Model, LocalFallback, Palette, Acp, Test] {
            for mode in [Agent, Direct] {
                assert_eq!(
                    DefaultPolicy.decide(&def(true), &ctx(source, mode)),
                    PolicyDecision::Allow
                );
                let expected = if (source, mode) == (Palette, Direct) {
                    PolicyDecision::Allow
                } else {
                    PolicyDecision::Ask
                };
                assert_eq!(
                    DefaultPolicy.decide(&def(false), &ctx(source, mode)),
                    expected,
                    "{source:?} {mode:?}"
                );
            }
        }
    }
}
