//! `cocode provider …`: the built-in agent's model providers, and their API
//! keys in the OS credential store (the key is read from standard input, so
//! it never appears in the command line or the shell's history).

use std::io::{BufRead, Write};

use anyhow::{Context as _, bail};
use cocode_agent::LlmProviderRegistry;
use cocode_core::services::{CredentialVault, Secret};

use crate::cli::args::ProviderCommand;

fn vault_error(e: &cocode_core::services::VaultError) -> anyhow::Error {
    anyhow::anyhow!("{}: {e}", e.code())
}

/// The provider named `name`, or a list of the known ones.
fn provider<'a>(
    registry: &'a LlmProviderRegistry,
    name: &str,
) -> anyhow::Result<&'a cocode_agent::providers::ProviderConfig> {
    let known = || {
        registry
            .providers()
            .iter()
            .map(|p| p.id.as_str().to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let id = cocode_core::ProviderId::new(name).map_err(|_| {
        anyhow::anyhow!(
            "“{name}” is not a provider name; the providers are {}",
            known()
        )
    })?;
    registry
        .get(&id)
        .ok_or_else(|| anyhow::anyhow!("no provider “{name}”; the providers are {}", known()))
}

/// Runs `cocode provider …` against `vault` (the OS credential store in
/// the binary).
pub fn provider_command(
    action: &ProviderCommand,
    vault: &dyn CredentialVault,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let registry = LlmProviderRegistry::with_presets().context("the provider presets")?;
    match action {
        ProviderCommand::List => {
            for p in registry.providers() {
                let key = if p.requires_key {
                    match vault.get(&p.id) {
                        Ok(Some(_)) => "key stored".to_owned(),
                        Ok(None) => "no key stored".to_owned(),
                        Err(e) => format!("credential store unavailable: {} {e}", e.code()),
                    }
                } else {
                    "no key needed".to_owned()
                };
                let url = match &p.base_url {
                    Some(url) => url.as_str(),
                    None if !p.requires_key => "runs inside cocode, offline",
                    None => "the provider's own API",
                };
                writeln!(out, "{}\t{}\t{key}\t{url}", p.id.as_str(), p.display_name)?;
            }
            Ok(0)
        }
        ProviderCommand::SetKey { name } => {
            let p = provider(&registry, name)?;
            let mut line = String::new();
            input.read_line(&mut line).context("reading the key")?;
            let key = line.trim_end_matches(['\r', '\n']).trim();
            if key.is_empty() {
                bail!("no key on standard input for {}", p.display_name);
            }
            vault
                .set(&p.id, &Secret::new(key))
                .map_err(|e| vault_error(&e))?;
            writeln!(
                out,
                "stored the API key of {} in the credential store",
                p.display_name
            )?;
            Ok(0)
        }
        ProviderCommand::DeleteKey { name } => {
            let p = provider(&registry, name)?;
            vault.delete(&p.id).map_err(|e| vault_error(&e))?;
            writeln!(
                out,
                "removed the API key of {} from the credential store",
                p.display_name
            )?;
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn run(
        action: &ProviderCommand,
        vault: &dyn CredentialVault,
        input: &str,
    ) -> anyhow::Result<String> {
        let mut out = Vec::new();
        provider_command(action, vault, &mut input.as_bytes(), &mut out)?;
        Ok(String::from_utf8(out)?)
    }

    #[test]
    fn keys_are_stored_listed_without_their_value_and_removed() {
        let vault = cocode_toolchain::vault::SessionVault::default();
        let listed = run(&ProviderCommand::List, &vault, "").unwrap();
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with("anthropic\t") && l.contains("\tno key stored\t")),
            "{listed}"
        );
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with("ollama\t") && l.contains("\tno key needed\t")),
            "{listed}"
        );
        let set = ProviderCommand::SetKey {
            name: "anthropic".into(),
        };
        let said = run(&set, &vault, "sk-ant-secret\n").unwrap();
        assert!(said.starts_with("stored the API key of "), "{said}");
        let id = cocode_core::ProviderId::new("anthropic").unwrap();
        assert_eq!(
            vault.get(&id).unwrap().map(|s| s.expose().to_owned()),
            Some("sk-ant-secret".to_owned())
        );
        let listed = run(&ProviderCommand::List, &vault, "").unwrap();
        assert!(!listed.contains("sk-ant-secret"), "{listed}");
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with("anthropic\t") && l.contains("\tkey stored\t")),
            "{listed}"
        );
        run(
            &ProviderCommand::DeleteKey {
                name: "anthropic".into(),
            },
            &vault,
            "",
        )
        .unwrap();
        assert_eq!(vault.get(&id).unwrap(), None);
    }

    #[test]
    fn an_empty_key_or_an_unknown_provider_is_refused_and_nothing_is_stored() {
        let vault = cocode_toolchain::vault::SessionVault::default();
        let set = |name: &str| ProviderCommand::SetKey { name: name.into() };
        let empty = run(&set("openai"), &vault, "\n").unwrap_err().to_string();
        assert!(
            empty.starts_with("no key on standard input for "),
            "{empty}"
        );
        let unknown = run(&set("nope"), &vault, "k\n").unwrap_err().to_string();
        assert!(
            unknown.starts_with("no provider “nope”; the providers are "),
            "{unknown}"
        );
        let id = cocode_core::ProviderId::new("openai").unwrap();
        assert_eq!(vault.get(&id).unwrap(), None);
    }
}
