//! Command-line interface. With no subcommand, `cocode` opens the window.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// cocode — an Agentic Development Environment.
#[derive(Debug, Parser, PartialEq, Eq)]
#[command(name = "cocode", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

/// Subcommands.
#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum CliCommand {
    /// Open a folder in the window.
    Open {
        /// The folder to open.
        dir: PathBuf,
    },
    /// Run self-verification over a workspace and print the records and the verdict.
    Verify {
        /// The workspace folder.
        dir: PathBuf,
    },
    /// Check confinement, the credential store, the policy proxy and a
    /// workspace's history.
    Doctor {
        /// The workspace folder.
        dir: PathBuf,
    },
}

impl Cli {
    /// The folder the window should open with, if any.
    pub fn folder(&self) -> Option<&PathBuf> {
        match &self.command {
            Some(CliCommand::Open { dir }) => Some(dir),
            Some(CliCommand::Verify { .. } | CliCommand::Doctor { .. }) | None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_the_window_forms() {
        assert_eq!(
            Cli::try_parse_from(["cocode"]).unwrap(),
            Cli { command: None }
        );
        let open = Cli::try_parse_from(["cocode", "open", "/tmp/x"]).unwrap();
        assert_eq!(open.folder(), Some(&PathBuf::from("/tmp/x")));
        assert!(Cli::try_parse_from(["cocode", "open"]).is_err());
        assert!(Cli::try_parse_from(["cocode", "frobnicate"]).is_err());
        assert_eq!(
            Cli::try_parse_from(["cocode", "verify", "ws"])
                .unwrap()
                .command,
            Some(CliCommand::Verify {
                dir: PathBuf::from("ws")
            })
        );
        assert_eq!(
            Cli::try_parse_from(["cocode", "doctor", "ws"])
                .unwrap()
                .folder(),
            None
        );
        Cli::command().debug_assert();
    }
}
