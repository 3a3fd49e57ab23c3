//! Provider projections of the canonical definitions. Hosted providers accept
//! tool names matching `^[a-zA-Z0-9_-]{1,64}$`, so canonical names are
//! encoded (`.` → `__`) and decoded back through the registry.

use serde_json::{Value, json};

use crate::types::ToolDefinition;

/// The provider-safe name of a canonical name, or `None` if it cannot be one.
pub fn encode_tool_name(name: &str) -> Option<String> {
    let encoded = name.replace('.', "__");
    let ok = !encoded.is_empty()
        && encoded.len() <= 64
        && encoded
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then_some(encoded)
}

/// `OpenAI` Chat Completions `tools`.
pub fn to_openai_tools(definitions: &[ToolDefinition]) -> Vec<Value> {
    definitions
        .iter()
        .filter_map(|d| {
            let name = encode_tool_name(&d.name)?;
            Some(json!({
                "type": "function",
                "function": {"name": name, "description": d.description, "parameters": d.input_schema}
            }))
        })
        .collect()
}

/// Anthropic Messages `tools`.
pub fn to_anthropic_tools(definitions: &[ToolDefinition]) -> Vec<Value> {
    definitions
        .iter()
        .filter_map(|d| {
            let name = encode_tool_name(&d.name)?;
            Some(
                json!({"name": name, "description": d.description, "input_schema": d.input_schema}),
            )
        })
        .collect()
}

/// MCP `tools/list` entries (MCP accepts canonical names).
pub fn to_mcp_tools(definitions: &[ToolDefinition]) -> Vec<Value> {
    definitions
        .iter()
        .map(|d| {
            let mut tool = json!({
                "name": d.name,
                "title": d.title,
                "description": d.description,
                "inputSchema": d.input_schema,
                "annotations": {
                    "readOnlyHint": d.annotations.read_only,
                    "destructiveHint": d.annotations.destructive,
                    "idempotentHint": d.annotations.idempotent,
                    "openWorldHint": d.annotations.open_world,
                },
            });
            if let (Some(schema), Some(obj)) = (&d.output_schema, tool.as_object_mut()) {
                obj.insert("outputSchema".into(), schema.clone());
            }
            tool
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_encode_to_the_provider_alphabet() {
        assert_eq!(
            encode_tool_name("workspace.readFile").as_deref(),
            Some("workspace__readFile")
        );
        assert_eq!(encode_tool_name("a.b-c").as_deref(), Some("a__b-c"));
        assert_eq!(encode_tool_name("bad name"), None);
        assert_eq!(encode_tool_name(&format!("x.{}", "y".repeat(70))), None);
    }
}
