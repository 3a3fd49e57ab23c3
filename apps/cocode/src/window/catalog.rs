//! The Tool catalog panel's state: which tools it shows. The definitions
//! are the canonical catalog the workspace host serves; the exports are
//! the same text `cocode tools list --format` prints.

use cocode_tool_protocol::ToolDefinition;

/// Which tools the panel lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    All,
    /// Tools that only read.
    ReadOnly,
    /// Tools that change the workspace or run commands.
    Changing,
}

impl Scope {
    pub const ALL: [Self; 3] = [Self::All, Self::ReadOnly, Self::Changing];

    pub fn label(self) -> &'static str {
        match self {
            Self::All => "All",
            Self::ReadOnly => "Read-only",
            Self::Changing => "Changes the workspace",
        }
    }
}

/// What the Tool catalog panel shows.
#[derive(Debug)]
pub struct CatalogPanel {
    pub tools: Vec<ToolDefinition>,
    pub scope: Scope,
}

impl Default for CatalogPanel {
    fn default() -> Self {
        Self {
            tools: crate::host::tools::served_tools(),
            scope: Scope::All,
        }
    }
}

impl CatalogPanel {
    /// The tools the scope lets through, in catalog order.
    pub fn shown(&self) -> Vec<&ToolDefinition> {
        self.tools
            .iter()
            .filter(|t| match self.scope {
                Scope::All => true,
                Scope::ReadOnly => t.annotations.read_only,
                Scope::Changing => !t.annotations.read_only,
            })
            .collect()
    }
}

/// What the policy does with a call of `tool` from an agent, in words.
pub fn policy_words(tool: &ToolDefinition) -> &'static str {
    if tool.annotations.read_only {
        "runs without asking (it only reads)"
    } else {
        "asks a person first, unless they approved the same action or allowed the tool for the task"
    }
}
