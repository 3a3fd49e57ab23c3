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
    /// Each tool's sample arguments as typed (JSON), once its entry opened.
    pub samples: std::collections::HashMap<String, String>,
    /// What each tool run from the panel returned (pretty JSON), or why it
    /// did not run.
    pub results: std::collections::HashMap<String, Result<String, String>>,
    /// The tool whose sample runs now.
    pub running: Option<String>,
}

impl Default for CatalogPanel {
    fn default() -> Self {
        Self {
            tools: crate::host::tools::served_tools(),
            scope: Scope::All,
            samples: std::collections::HashMap::new(),
            results: std::collections::HashMap::new(),
            running: None,
        }
    }
}

/// What is wrong with `text` as `tool`'s arguments: not JSON, not an
/// object, or not what its schema asks for (empty: they fit).
pub fn sample_problems(tool: &ToolDefinition, text: &str) -> Vec<String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => vec![format!("not JSON: {e}")],
        Ok(value) if !value.is_object() => vec!["the arguments are a JSON object".to_owned()],
        Ok(value) => cocode_tool_protocol::registry::argument_problems(&tool.input_schema, &value),
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
