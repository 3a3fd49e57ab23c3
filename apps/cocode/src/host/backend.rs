//! Backend selection: the name a person gives (`local`, a provider id, or
//! `acp:AGENT`) becomes a `TaskBackend`.

use anyhow::{Context as _, bail};
use cocode_agent::LlmProviderRegistry;
use cocode_core::ProviderId;
use cocode_core::task::TaskBackend;

/// The backend a name picks: `local`, a provider id, or `acp:AGENT`.
pub fn backend_of(
    name: &str,
    model: Option<&str>,
    providers: &LlmProviderRegistry,
) -> anyhow::Result<TaskBackend> {
    if name == "local" {
        return Ok(TaskBackend::Local);
    }
    if let Some(agent) = name.strip_prefix("acp:") {
        let agent_id = cocode_core::AcpAgentId::new(agent)
            .with_context(|| format!("“{agent}” is not an ACP agent id"))?;
        return Ok(TaskBackend::Acp { agent_id });
    }
    let id = ProviderId::new(name).with_context(|| format!("“{name}” is not a provider id"))?;
    let Some(provider) = providers.get(&id) else {
        let known: Vec<String> = providers
            .providers()
            .iter()
            .map(|p| p.id.to_string())
            .collect();
        bail!(
            "unknown backend “{name}”; known: local, {}",
            known.join(", ")
        );
    };
    let model = match model {
        Some(m) => m.to_owned(),
        None => provider
            .models
            .first()
            .cloned()
            .with_context(|| format!("{name} has no default model; pass --model"))?,
    };
    Ok(TaskBackend::BuiltIn {
        provider: id,
        model,
    })
}
