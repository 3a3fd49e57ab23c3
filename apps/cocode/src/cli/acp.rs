//! `cocode acp …`: the external agents a workspace can run, and their
//! secret variables in the OS credential store.

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::{Context as _, bail};
use cocode_acp::{AcpAgentConfig, AcpAgentRegistry};
use cocode_core::AcpAgentId;
use cocode_core::services::{CredentialVault, Secret};

use crate::cli::args::AcpCommand;

/// The presets and the workspace's own `acp_agents` entries (which replace
/// presets of the same id), read without creating anything in the folder.
fn agents(workspace: &Path) -> anyhow::Result<AcpAgentRegistry> {
    let folder = cocode_workspace::peek(workspace)
        .with_context(|| format!("reading {}", workspace.display()))?;
    Ok(AcpAgentRegistry::with_entries(folder.config.acp_agents))
}

/// The agent `id` and its declared secret variable `name`.
fn declared<'a>(
    agents: &'a AcpAgentRegistry,
    id: &str,
    name: &str,
) -> anyhow::Result<(&'a AcpAgentConfig, cocode_core::ProviderId)> {
    let id = AcpAgentId::new(id).with_context(|| format!("agent id “{id}”"))?;
    let agent = agents
        .get(&id)
        .with_context(|| format!("no ACP agent {id} is configured"))?;
    if !agent.secret_env.iter().any(|n| n == name) {
        bail!(
            "{} declares no secret variable {name} (it declares: {})",
            agent.display_name,
            if agent.secret_env.is_empty() {
                "none".to_owned()
            } else {
                agent.secret_env.join(", ")
            }
        );
    }
    Ok((agent, cocode_acp::registry::secret_account(&id, name)?))
}

/// A credential store failure with its stable code.
fn vault_error(e: &cocode_core::services::VaultError) -> anyhow::Error {
    anyhow::anyhow!("{}: {e}", e.code())
}

/// Runs `cocode acp …` against `vault` (the OS credential store in the
/// binary). A secret's value is read from the first line of `input`, so it
/// never appears in the command line or the shell's history.
pub fn acp_command(
    action: &AcpCommand,
    vault: &dyn CredentialVault,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    match action {
        AcpCommand::List { workspace } => {
            let path_var = std::env::var_os("PATH");
            for agent in agents(workspace)?.agents() {
                writeln!(
                    out,
                    "{}\t{}\t{}",
                    agent.id,
                    agent.display_name,
                    agent.command.join(" ")
                )?;
                writeln!(
                    out,
                    "  program: {}",
                    cocode_acp::registry::program(agent, path_var.as_deref())
                )?;
                for name in &agent.secret_env {
                    let state = match cocode_acp::registry::secret_account(&agent.id, name) {
                        Err(e) => format!("invalid name: {e}"),
                        Ok(account) => match vault.get(&account) {
                            Ok(Some(_)) => "stored".to_owned(),
                            Ok(None) => "not stored".to_owned(),
                            Err(e) => format!("store unavailable: {} {e}", e.code()),
                        },
                    };
                    writeln!(out, "  secret {name}: {state}")?;
                }
                if !agent.model_hosts.is_empty() {
                    writeln!(out, "  model hosts: {}", agent.model_hosts.join(", "))?;
                }
            }
            Ok(0)
        }
        AcpCommand::SetSecret {
            agent,
            name,
            workspace,
        } => {
            let agents = agents(workspace)?;
            let (agent, account) = declared(&agents, agent, name)?;
            let mut line = String::new();
            input.read_line(&mut line).context("reading the value")?;
            let value = line.trim_end_matches(['\r', '\n']);
            if value.is_empty() {
                bail!("no value on standard input for {name}");
            }
            vault
                .set(&account, &Secret::new(value))
                .map_err(|e| vault_error(&e))?;
            writeln!(
                out,
                "stored {name} for {} in the credential store",
                agent.display_name
            )?;
            Ok(0)
        }
        AcpCommand::DeleteSecret {
            agent,
            name,
            workspace,
        } => {
            let agents = agents(workspace)?;
            let (agent, account) = declared(&agents, agent, name)?;
            vault.delete(&account).map_err(|e| vault_error(&e))?;
            writeln!(
                out,
                "removed {name} of {} from the credential store",
                agent.display_name
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
        action: &AcpCommand,
        vault: &dyn CredentialVault,
        input: &str,
    ) -> anyhow::Result<String> {
        let mut out = Vec::new();
        acp_command(action, vault, &mut input.as_bytes(), &mut out)?;
        Ok(String::from_utf8(out)?)
    }

    #[test]
    fn secrets_are_stored_for_declared_names_only_and_listed_without_their_value() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().to_path_buf();
        let vault = cocode_toolchain::vault::SessionVault::default();
        let list = || AcpCommand::List {
            workspace: ws.clone(),
        };
        let listed = run(&list(), &vault, "").unwrap();
        assert!(
            listed.contains("gemini\tGemini CLI\tgemini --acp\n  program: "),
            "{listed}"
        );
        assert!(
            listed.contains("\n  secret GEMINI_API_KEY: not stored\n  model hosts: generativelanguage.googleapis.com\n"),
            "{listed}"
        );
        let set = |name: &str| AcpCommand::SetSecret {
            agent: "gemini".into(),
            name: name.into(),
            workspace: ws.clone(),
        };
        assert_eq!(
            run(&set("GEMINI_API_KEY"), &vault, "k-123\n").unwrap(),
            "stored GEMINI_API_KEY for Gemini CLI in the credential store\n"
        );
        let account = cocode_acp::registry::secret_account(
            &AcpAgentId::new("gemini").unwrap(),
            "GEMINI_API_KEY",
        )
        .unwrap();
        assert_eq!(
            vault.get(&account).unwrap().map(|s| s.expose().to_owned()),
            Some("k-123".to_owned())
        );
        let listed = run(&list(), &vault, "").unwrap();
        assert!(
            listed.contains("  secret GEMINI_API_KEY: stored\n"),
            "{listed}"
        );
        assert!(!listed.contains("k-123"), "{listed}");
        assert_eq!(
            run(&set("OPENAI_API_KEY"), &vault, "x\n")
                .unwrap_err()
                .to_string(),
            "Gemini CLI declares no secret variable OPENAI_API_KEY (it declares: GEMINI_API_KEY)"
        );
        assert_eq!(
            run(&set("GEMINI_API_KEY"), &vault, "")
                .unwrap_err()
                .to_string(),
            "no value on standard input for GEMINI_API_KEY"
        );
        let delete = AcpCommand::DeleteSecret {
            agent: "gemini".into(),
            name: "GEMINI_API_KEY".into(),
            workspace: ws.clone(),
        };
        run(&delete, &vault, "").unwrap();
        assert_eq!(vault.get(&account).unwrap(), None);
    }
}
