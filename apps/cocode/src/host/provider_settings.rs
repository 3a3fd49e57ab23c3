//! The person's provider settings: a base URL and a model per provider, in
//! `<config dir>/cocode/providers.json`. Keys are never here (they live in
//! the OS credential store). The file is replaced whole and atomically (a
//! temporary file beside it, synced, then renamed), so a crash leaves the
//! old settings or the new ones, never half of either.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cocode_agent::LlmProviderRegistry;
use serde::{Deserialize, Serialize};

/// One provider's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSetting {
    /// Replaces the preset's base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model the composer picks for this provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its models' context window in tokens (over cocode's table of known
    /// models): the conversation is compacted before a request would pass
    /// most of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// What its models cost, by model name, in US dollars per million
    /// tokens: each request's and task's cost (none: not shown).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, cocode_agent::ModelPrice>,
}

/// Every provider's settings, by provider id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderSetting>,
}

/// `<config dir>/cocode/providers.json`.
pub fn settings_file() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.config_dir().join("cocode").join("providers.json"))
}

/// Why a base URL is refused (`None`: it can be used).
pub fn base_url_problem(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        None => Some(format!(
            "“{url}” is not an address: it starts with http:// or https://"
        )),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            Some(format!("“{url}” names no host"))
        }
        Some(_) if url.chars().any(|c| c.is_whitespace() || c.is_control()) => {
            Some(format!("“{url}” holds a space or a control character"))
        }
        Some(_) => None,
    }
}

impl ProviderSettings {
    /// The settings in `file` (none when it does not exist; an unreadable
    /// or malformed file is an error, never silently ignored).
    pub fn load(file: &Path) -> anyhow::Result<Self> {
        match std::fs::read_to_string(file) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{} is not provider settings", file.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(e).with_context(|| format!("{} cannot be read", file.display())),
        }
    }

    /// Writes the settings to `file`, replacing it atomically.
    pub fn save(&self, file: &Path) -> anyhow::Result<()> {
        crate::host::config_file::replace_json(file, self)
    }

    /// The presets with these settings' base URLs.
    pub fn registry(&self) -> anyhow::Result<LlmProviderRegistry> {
        let mut providers = LlmProviderRegistry::with_presets()?.providers().to_vec();
        for p in &mut providers {
            let Some(setting) = self.providers.get(p.id.as_str()) else {
                continue;
            };
            if let Some(url) = &setting.base_url {
                if let Some(problem) = base_url_problem(url) {
                    anyhow::bail!("{}: {problem}", p.display_name);
                }
                p.base_url = Some(url.clone());
            }
            if setting.context_window.is_some() {
                p.context_window = setting.context_window;
            }
            p.prices.clone_from(&setting.prices);
        }
        Ok(LlmProviderRegistry::new(providers)?)
    }

    /// The model remembered for `provider`.
    pub fn model(&self, provider: &str) -> Option<&str> {
        self.providers.get(provider)?.model.as_deref()
    }

    /// Sets (or, with `None`, clears) a provider's base URL.
    pub fn set_base_url(&mut self, provider: &str, url: Option<String>) {
        let entry = self.providers.entry(provider.to_owned()).or_default();
        entry.base_url = url;
        self.forget_empty(provider);
    }

    /// Remembers (or forgets) the model picked for `provider`.
    pub fn set_model(&mut self, provider: &str, model: Option<String>) {
        let entry = self.providers.entry(provider.to_owned()).or_default();
        entry.model = model;
        self.forget_empty(provider);
    }

    fn forget_empty(&mut self, provider: &str) {
        if self.providers.get(provider) == Some(&ProviderSetting::default()) {
            self.providers.remove(provider);
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests lay out and break the file"
)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn settings_round_trip_and_change_the_registrys_base_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cocode").join("providers.json");
        assert_eq!(
            ProviderSettings::load(&file).unwrap(),
            ProviderSettings::default()
        );
        let mut s = ProviderSettings::default();
        s.set_base_url("openai", Some("http://127.0.0.1:9/v1".into()));
        s.set_model("openai", Some("gpt-test".into()));
        s.set_model("ollama", Some("llama3".into()));
        s.save(&file).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\n  \"providers\": {\n    \"ollama\": {\n      \"model\": \"llama3\"\n    },\n    \"openai\": {\n      \"base_url\": \"http://127.0.0.1:9/v1\",\n      \"model\": \"gpt-test\"\n    }\n  }\n}\n"
        );
        let loaded = ProviderSettings::load(&file).unwrap();
        assert_eq!(loaded, s);
        let id = cocode_core::ProviderId::new("openai").unwrap();
        assert_eq!(
            loaded
                .registry()
                .unwrap()
                .get(&id)
                .unwrap()
                .base_url
                .as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        assert_eq!(loaded.model("ollama"), Some("llama3"));
        // Clearing both leaves no entry behind.
        let mut cleared = loaded;
        cleared.set_base_url("openai", None);
        cleared.set_model("openai", None);
        assert_eq!(cleared.providers.keys().collect::<Vec<_>>(), vec!["ollama"]);
        // Only the settings file is left in the folder (no temporary).
        assert_eq!(
            std::fs::read_dir(file.parent().unwrap()).unwrap().count(),
            1
        );
    }

    #[test]
    fn a_malformed_file_or_a_bad_address_is_an_error_not_a_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("providers.json");
        std::fs::write(&file, "{\"providers\": {\"openai\": {\"base\": 1}}}").unwrap();
        let e = ProviderSettings::load(&file).unwrap_err();
        assert_eq!(
            format!("{e}"),
            format!("{} is not provider settings", file.display())
        );
        for (url, why) in [
            (
                "ftp://x",
                "“ftp://x” is not an address: it starts with http:// or https://",
            ),
            ("https://", "“https://” names no host"),
            (
                "http://a b",
                "“http://a b” holds a space or a control character",
            ),
        ] {
            assert_eq!(base_url_problem(url).as_deref(), Some(why));
            let mut s = ProviderSettings::default();
            s.set_base_url("openai", Some(url.into()));
            assert_eq!(
                format!("{}", s.registry().unwrap_err()),
                format!("OpenAI: {why}")
            );
        }
        assert_eq!(base_url_problem("http://127.0.0.1:1234/v1"), None);
    }
}
