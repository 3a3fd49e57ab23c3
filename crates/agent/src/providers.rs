//! `LlmProviderRegistry`: the providers a user can pick, built from
//! adapters rather than keys, and their model catalogs.

use std::collections::BTreeSet;

use cocode_core::ProviderId;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::error::{ProviderError, ProviderErrorCode};
use crate::transport::Transport;
use crate::wire::{anthropic, openai};

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdapterKind {
    Anthropic,
    /// Chat Completions at a `base_url`.
    OpenAiCompatible,
    /// The deterministic offline agent.
    Local,
}

/// Which model list a provider offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CatalogKind {
    /// The configured model names only.
    Fixed,
    Anthropic,
    /// `OpenRouter`'s list, filtered to tool-capable models.
    OpenRouter,
    /// Ollama's locally pulled models (`/api/tags`).
    Ollama,
    /// `GET {base_url}/models` (`OpenAI`, LM Studio, vLLM).
    OpenAiModels,
}

/// What a model costs, in US dollars per million tokens: the person's own
/// table (providers change prices; cocode ships none), empty for local
/// servers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub input: f64,
    pub output: f64,
    /// Prompt tokens read from the provider's cache (unset: as `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Prompt tokens written to the provider's cache (unset: as `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl ModelPrice {
    /// What a request's tokens cost, in millionths of a US dollar (a
    /// dollar per million tokens is a millionth of a dollar per token).
    pub fn cost_micros(&self, usage: &crate::conversation::Usage) -> u64 {
        let plain = usage
            .input
            .saturating_sub(usage.cache_read + usage.cache_write);
        #[expect(clippy::cast_precision_loss, reason = "token counts far below 2^52")]
        let micros = plain as f64 * self.input
            + usage.cache_read as f64 * self.cache_read.unwrap_or(self.input)
            + usage.cache_write as f64 * self.cache_write.unwrap_or(self.input)
            + usage.output as f64 * self.output;
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a non-negative amount far below 2^63 millionths"
        )]
        let rounded = micros.round().max(0.0) as u64;
        rounded
    }
}

/// One provider entry. Keys are never part of it: they live in the OS
/// keyring under the provider's id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderConfig {
    pub id: ProviderId,
    pub display_name: String,
    pub adapter: AdapterKind,
    /// Required for OpenAI-compatible providers; Anthropic defaults to its API.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Whether requests need a key (local servers usually do not).
    pub requires_key: bool,
    #[serde(default)]
    pub models: Vec<String>,
    pub catalog: CatalogKind,
    #[serde(default)]
    pub options: openai::ServerOptions,
    /// Anthropic's `max_tokens` (required by its API).
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// The models' context window in tokens, when the person sets it;
    /// otherwise Ollama's `context_size`, then cocode's table of known
    /// models. The conversation is compacted before a request would pass
    /// most of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Prices by model name, for the cost of each request and task.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub prices: std::collections::BTreeMap<String, ModelPrice>,
}

const fn default_max_tokens() -> u32 {
    8192
}

fn id(s: &str) -> ProviderId {
    // The preset ids are constant and valid.
    ProviderId::new(s).unwrap_or_else(|_| unreachable!("preset provider id {s} is valid"))
}

impl ProviderConfig {
    /// The local agent: always available, no key, no network.
    pub fn local() -> Self {
        Self {
            id: id("local"),
            display_name: "Local agent (offline)".into(),
            adapter: AdapterKind::Local,
            base_url: None,
            requires_key: false,
            models: vec!["local".into()],
            catalog: CatalogKind::Fixed,
            options: openai::ServerOptions::default(),
            max_tokens: default_max_tokens(),
            context_window: None,
            prices: std::collections::BTreeMap::new(),
        }
    }

    pub fn anthropic() -> Self {
        Self {
            id: id("anthropic"),
            display_name: "Anthropic".into(),
            adapter: AdapterKind::Anthropic,
            base_url: Some(anthropic::DEFAULT_BASE_URL.into()),
            requires_key: true,
            models: vec!["claude-sonnet-4-5".into()],
            catalog: CatalogKind::Anthropic,
            options: openai::ServerOptions::default(),
            max_tokens: default_max_tokens(),
            context_window: None,
            prices: std::collections::BTreeMap::new(),
        }
    }

    pub fn openai() -> Self {
        Self {
            id: id("openai"),
            display_name: "OpenAI".into(),
            adapter: AdapterKind::OpenAiCompatible,
            base_url: Some("https://api.openai.com/v1".into()),
            requires_key: true,
            models: vec!["gpt-4.1".into()],
            catalog: CatalogKind::OpenAiModels,
            // OpenAI reports a stream's token counts when asked.
            options: openai::ServerOptions {
                include_usage: true,
                ..openai::ServerOptions::default()
            },
            max_tokens: default_max_tokens(),
            context_window: None,
            prices: std::collections::BTreeMap::new(),
        }
    }

    /// `OpenRouter` with a data policy sent as routing options.
    pub fn openrouter(policy: openai::DataPolicy) -> Self {
        Self {
            id: id("openrouter"),
            display_name: "OpenRouter".into(),
            adapter: AdapterKind::OpenAiCompatible,
            base_url: Some("https://openrouter.ai/api/v1".into()),
            requires_key: true,
            models: Vec::new(),
            catalog: CatalogKind::OpenRouter,
            options: openai::ServerOptions {
                data_policy: Some(policy),
                ..openai::ServerOptions::default()
            },
            max_tokens: default_max_tokens(),
            context_window: None,
            prices: std::collections::BTreeMap::new(),
        }
    }

    /// A local Ollama server; `context_size` is sent as `options.num_ctx`.
    pub fn ollama(context_size: u32) -> Self {
        Self {
            id: id("ollama"),
            display_name: "Ollama".into(),
            adapter: AdapterKind::OpenAiCompatible,
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            requires_key: false,
            models: Vec::new(),
            catalog: CatalogKind::Ollama,
            options: openai::ServerOptions {
                context_size: Some(context_size),
                ..openai::ServerOptions::default()
            },
            max_tokens: default_max_tokens(),
            context_window: None,
            prices: std::collections::BTreeMap::new(),
        }
    }

    /// LM Studio's local server.
    pub fn lm_studio() -> Self {
        Self {
            id: id("lmstudio"),
            display_name: "LM Studio".into(),
            adapter: AdapterKind::OpenAiCompatible,
            base_url: Some("http://127.0.0.1:1234/v1".into()),
            requires_key: false,
            models: Vec::new(),
            catalog: CatalogKind::OpenAiModels,
            options: openai::ServerOptions::default(),
            max_tokens: default_max_tokens(),
            context_window: None,
            prices: std::collections::BTreeMap::new(),
        }
    }

    /// The base URL, checked: OpenAI-compatible providers must name one.
    pub fn endpoint(&self) -> Result<&str, ProviderError> {
        match (&self.base_url, self.adapter) {
            (Some(url), _) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(url.trim_end_matches('/'))
            }
            (Some(url), _) => Err(ProviderError::new(
                ProviderErrorCode::Config,
                format!(
                    "provider {}: base_url {url:?} is not an http(s) URL",
                    self.id
                ),
            )),
            (None, AdapterKind::Anthropic) => Ok(anthropic::DEFAULT_BASE_URL),
            (None, _) => Err(ProviderError::new(
                ProviderErrorCode::Config,
                format!(
                    "provider {}: an OpenAI-compatible provider needs a base_url",
                    self.id
                ),
            )),
        }
    }
}

/// Why a registry cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryBuildError {
    #[error("a provider registry needs at least two distinct adapters, got {0:?}")]
    TooFewAdapters(Vec<AdapterKind>),
    #[error("provider id {0} appears twice")]
    DuplicateId(ProviderId),
    #[error("{0}")]
    Invalid(ProviderError),
}

/// The providers on offer.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmProviderRegistry {
    providers: Vec<ProviderConfig>,
}

impl LlmProviderRegistry {
    /// Fails with fewer than two distinct adapters (the user always has a
    /// choice), duplicate ids or an OpenAI-compatible entry without a URL.
    pub fn new(providers: Vec<ProviderConfig>) -> Result<Self, RegistryBuildError> {
        let adapters: BTreeSet<AdapterKind> = providers.iter().map(|p| p.adapter).collect();
        if adapters.len() < 2 {
            return Err(RegistryBuildError::TooFewAdapters(
                adapters.into_iter().collect(),
            ));
        }
        let mut ids = BTreeSet::new();
        for p in &providers {
            if !ids.insert(&p.id) {
                return Err(RegistryBuildError::DuplicateId(p.id.clone()));
            }
            if p.adapter != AdapterKind::Local {
                p.endpoint().map_err(RegistryBuildError::Invalid)?;
            }
        }
        Ok(Self { providers })
    }

    /// The presets: local, Anthropic, `OpenAI`, `OpenRouter`, Ollama, LM Studio.
    pub fn with_presets() -> Result<Self, RegistryBuildError> {
        Self::new(vec![
            ProviderConfig::local(),
            ProviderConfig::anthropic(),
            ProviderConfig::openai(),
            ProviderConfig::openrouter(openai::DataPolicy::Deny),
            ProviderConfig::ollama(32_768),
            ProviderConfig::lm_studio(),
        ])
    }

    pub fn providers(&self) -> &[ProviderConfig] {
        &self.providers
    }

    pub fn get(&self, id: &ProviderId) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| &p.id == id)
    }
}

/// A model a catalog offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub id: String,
    pub name: String,
    /// `OpenRouter` only: zero prompt and completion price.
    pub free: bool,
}

impl ModelInfo {
    fn named(id: String) -> Self {
        Self {
            name: id.clone(),
            id,
            free: false,
        }
    }
}

/// Fetches a provider's model list. `free_only` applies to `OpenRouter`.
pub async fn fetch_models(
    transport: &Transport,
    provider: &ProviderConfig,
    api_key: Option<&str>,
    free_only: bool,
    cancel: &CancellationToken,
) -> Result<Vec<ModelInfo>, ProviderError> {
    let named = |ids: Vec<String>| ids.into_iter().map(ModelInfo::named).collect();
    match provider.catalog {
        CatalogKind::Fixed => Ok(named(provider.models.clone())),
        CatalogKind::Anthropic => {
            let key = api_key.ok_or_else(|| missing_key(provider))?;
            let body = transport
                .get_json(
                    &anthropic::models_request(provider.endpoint()?, key),
                    cancel,
                )
                .await?;
            Ok(named(anthropic::decode_models(&body)?))
        }
        CatalogKind::OpenRouter => {
            let body = transport
                .get_json(
                    &openai::models_request(provider.endpoint()?, api_key),
                    cancel,
                )
                .await?;
            Ok(openai::decode_openrouter_models(&body, free_only)?
                .into_iter()
                .map(|m| ModelInfo {
                    id: m.id,
                    name: m.name,
                    free: m.free,
                })
                .collect())
        }
        CatalogKind::Ollama => {
            // The native API lives beside the OpenAI-compatible `/v1`.
            let base = provider.endpoint()?;
            let root = base.strip_suffix("/v1").unwrap_or(base);
            let spec = crate::wire::HttpRequestSpec {
                url: format!("{root}/api/tags"),
                headers: Vec::new(),
                body: serde_json::Value::Null,
            };
            let body = transport.get_json(&spec, cancel).await?;
            Ok(named(openai::decode_ollama_tags(&body)?))
        }
        CatalogKind::OpenAiModels => {
            let body = transport
                .get_json(
                    &openai::models_request(provider.endpoint()?, api_key),
                    cancel,
                )
                .await?;
            Ok(named(openai::decode_models(&body)?))
        }
    }
}

/// Whether the model a server says answered is the one asked for: the same
/// name (case aside), or a dated or versioned snapshot the name stands for
/// (`gpt-4.1` answered by `gpt-4.1-2025-04-14`, `claude-sonnet-4-5` by
/// `claude-sonnet-4-5-20250929`, `llama3.2` by `llama3.2:latest`), or a
/// provider's prefix around the same name (`models/gemini-2.5-pro`).
pub fn same_model(asked: &str, answered: &str) -> bool {
    let (asked, answered) = (asked.trim().to_lowercase(), answered.trim().to_lowercase());
    let base = |m: &str| {
        let m = m.rsplit('/').next().unwrap_or(m).to_owned();
        let m = m.strip_suffix(":latest").map_or(m.clone(), str::to_owned);
        m.strip_suffix("-latest").map_or(m.clone(), str::to_owned)
    };
    let (asked, answered) = (base(&asked), base(&answered));
    if asked == answered {
        return true;
    }
    // A snapshot: the asked name, then a separator and a version that
    // starts with a digit.
    answered
        .strip_prefix(asked.as_str())
        .and_then(|rest| rest.strip_prefix(['-', '@', ':']))
        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
}

impl ProviderConfig {
    /// The context window of `model` on this provider (tokens), when known:
    /// the person's setting, the size an Ollama server is told to use, or
    /// the table of known models.
    pub fn window_of(&self, model: &str) -> Option<u64> {
        self.context_window
            .or_else(|| self.options.context_size.map(u64::from))
            .or_else(|| crate::context::known_window(model))
    }
}

pub(crate) fn missing_key(provider: &ProviderConfig) -> ProviderError {
    ProviderError::new(
        ProviderErrorCode::Auth,
        format!(
            "no API key is stored for {}; add one in Settings → Providers",
            provider.display_name
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_needs_two_distinct_adapters() {
        let err =
            LlmProviderRegistry::new(vec![ProviderConfig::openai(), ProviderConfig::ollama(8192)])
                .unwrap_err();
        assert_eq!(
            err,
            RegistryBuildError::TooFewAdapters(vec![AdapterKind::OpenAiCompatible])
        );
        assert_eq!(
            LlmProviderRegistry::new(vec![]).unwrap_err(),
            RegistryBuildError::TooFewAdapters(vec![])
        );
        let ok =
            LlmProviderRegistry::new(vec![ProviderConfig::local(), ProviderConfig::anthropic()])
                .unwrap();
        assert_eq!(ok.providers().len(), 2);
        assert_eq!(
            LlmProviderRegistry::with_presets()
                .unwrap()
                .providers()
                .len(),
            6
        );
    }

    #[test]
    fn a_requests_cost_prices_cached_tokens_apart_and_unset_cache_prices_as_input() {
        let price = ModelPrice {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: Some(3.75),
        };
        let usage = crate::conversation::Usage {
            input: 10_000,
            output: 500,
            cache_read: 6_000,
            cache_write: 2_000,
        };
        // 2,000 × 3 + 6,000 × 0.3 + 2,000 × 3.75 + 500 × 15 millionths.
        assert_eq!(price.cost_micros(&usage), 6_000 + 1_800 + 7_500 + 7_500);
        let plain = ModelPrice {
            cache_read: None,
            cache_write: None,
            ..price
        };
        assert_eq!(plain.cost_micros(&usage), 30_000 + 7_500);
        let parsed: ModelPrice = serde_json::from_str(r#"{"input": 2, "output": 8}"#).unwrap();
        assert_eq!(
            parsed,
            ModelPrice {
                input: 2.0,
                output: 8.0,
                cache_read: None,
                cache_write: None
            }
        );
        assert!(
            serde_json::from_str::<ModelPrice>(r#"{"input": 2, "output": 8, "per": "k"}"#).is_err()
        );
    }

    #[test]
    fn a_snapshot_of_the_asked_model_is_the_same_model_and_another_is_not() {
        for (asked, answered) in [
            ("gpt-4.1", "gpt-4.1"),
            ("gpt-4.1", "gpt-4.1-2025-04-14"),
            ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
            ("llama3.2", "llama3.2:latest"),
            ("qwen2.5-coder:7b", "qwen2.5-coder:7b"),
            ("claude-3-5-haiku-latest", "claude-3-5-haiku-20241022"),
            ("gemini-2.5-pro", "models/gemini-2.5-pro"),
            ("GPT-4o", "gpt-4o"),
        ] {
            assert!(same_model(asked, answered), "{asked} / {answered}");
        }
        for (asked, answered) in [
            ("gpt-4.1", "gpt-4.1-mini"),
            ("gpt-4.1", "gpt-4o-mini"),
            ("openrouter/auto", "anthropic/claude-sonnet-4.5"),
            ("claude-sonnet-4-5", "claude-haiku-4-5-20251001"),
            ("m", "mistral"),
        ] {
            assert!(!same_model(asked, answered), "{asked} / {answered}");
        }
    }

    #[test]
    fn an_openai_compatible_provider_needs_a_base_url() {
        let mut p = ProviderConfig::openai();
        p.base_url = None;
        let err = LlmProviderRegistry::new(vec![ProviderConfig::local(), p.clone()]).unwrap_err();
        let RegistryBuildError::Invalid(e) = err else {
            panic!("{err:?}")
        };
        assert_eq!(e.code, ProviderErrorCode::Config);
        p.base_url = Some("ftp://x".into());
        assert!(LlmProviderRegistry::new(vec![ProviderConfig::local(), p]).is_err());
        let dup = LlmProviderRegistry::new(vec![
            ProviderConfig::local(),
            ProviderConfig::anthropic(),
            ProviderConfig::anthropic(),
        ]);
        assert!(matches!(dup, Err(RegistryBuildError::DuplicateId(_))));
    }
}
