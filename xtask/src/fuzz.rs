//! `cargo xtask fuzz`: short libFuzzer runs of the fuzz targets in `fuzz/`
//! (nightly toolchain and cargo-fuzz, both installed on demand).
//!
//! New inputs go to a scratch corpus under the target directory, so a run
//! never changes the checked-in seeds; a crashing input is kept under
//! `target/fuzz-artifacts/<target>/` and its path printed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result};

use crate::suite::have;

/// Every fuzz target, with the seed corpus it starts from.
pub const TARGETS: [&str; 2] = ["provider_decoders", "acp_inbound"];

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

fn nightly_ready() -> bool {
    Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn cargo_fuzz_ready() -> bool {
    Command::new("cargo-fuzz")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Installs the nightly toolchain and cargo-fuzz when missing.
pub fn install() {
    if !nightly_ready() && have("rustup") {
        println!("fuzz: installing the nightly toolchain");
        let _ = Command::new("rustup")
            .args(["toolchain", "install", "nightly", "--profile", "minimal"])
            .status();
    }
    if !cargo_fuzz_ready() {
        println!("fuzz: installing cargo-fuzz");
        let _ = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
            .args(["install", "cargo-fuzz", "--locked"])
            .status();
    }
}

/// Runs every target for `seconds`; true when none crashed.
pub fn run(root: &Path, seconds: u32) -> Result<bool> {
    if !nightly_ready() || !cargo_fuzz_ready() {
        println!(
            "fuzz: FAILED — needs `rustup toolchain install nightly` and `cargo install cargo-fuzz` \
             (`cargo xtask test` installs both)"
        );
        return Ok(false);
    }
    let mut ok = true;
    for target in TARGETS {
        let scratch = target_dir(root).join("fuzz-corpus").join(target);
        let artifacts = target_dir(root).join("fuzz-artifacts").join(target);
        for dir in [&scratch, &artifacts] {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let seeds = root.join("fuzz").join("corpus").join(target);
        println!("fuzz: {target} for {seconds} s");
        // libFuzzer reports every new input; the log keeps that out of the
        // suite's output, and its end is printed.
        let log_path = target_dir(root).join(format!("fuzz-{target}.log"));
        let log = std::fs::File::create(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        let status = Command::new("rustup")
            .args([
                "run",
                "nightly",
                "cargo",
                "fuzz",
                "run",
                "--sanitizer",
                "none",
            ])
            .arg("--target-dir")
            .arg(target_dir(root).join("fuzz"))
            .arg(target)
            .arg(&scratch)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .current_dir(root)
            // The stable toolchain's `cargo` in CARGO would pin the wrong compiler.
            .env_remove("CARGO")
            .env_remove("RUSTC")
            .env_remove("RUSTUP_TOOLCHAIN")
            .stderr(log.try_clone().context("duplicating the log handle")?)
            .stdout(log)
            .status()
            .context("running cargo fuzz")?;
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for line in &lines[lines
            .len()
            .saturating_sub(if status.success() { 3 } else { 60 })..]
        {
            println!("  {line}");
        }
        println!("fuzz: full log in {}", log_path.display());
        if !status.success() {
            println!(
                "fuzz: {target} FAILED; the crashing input is in {}",
                artifacts.display()
            );
            ok = false;
        }
    }
    Ok(ok)
}
