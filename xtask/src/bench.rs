//! `cargo xtask bench`: runs the criterion benches and prints every peer
//! comparison as a ratio.
//!
//! Convention: a comparison is a criterion benchmark directory that holds an
//! `ours` and a `peer` benchmark (`group/ours`, `group/peer`, at any depth).
//! The ratio is ours ÷ peer of the mean estimate, both measured in the same
//! run; lower is better for time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use anyhow::{Context as _, Result};
use serde::Deserialize;

/// One comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    pub name: String,
    pub ours_ns: f64,
    pub peer_ns: f64,
}

impl Ratio {
    pub fn ratio(&self) -> f64 {
        self.ours_ns / self.peer_ns
    }
}

#[derive(Deserialize)]
struct Estimates {
    mean: Estimate,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
}

pub fn run(root: &Path, report_only: bool) -> Result<bool> {
    // Results a bench wrote before this run (a renamed or removed bench
    // leaves its old estimates behind) are not reported as this run's.
    let started = (!report_only).then(SystemTime::now);
    if !report_only {
        if crates_with_benches(root).is_empty() {
            println!("bench: no crate has benches");
        } else {
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["bench", "--workspace", "--locked"])
                .current_dir(root)
                .status()
                .context("running cargo bench")?;
            if !status.success() {
                return Ok(false);
            }
        }
    }
    let criterion = target_dir(root).join("criterion");
    let ratios = collect(&criterion, started)?;
    if ratios.is_empty() {
        println!("bench: no ours/peer comparisons in {}", criterion.display());
    }
    for r in &ratios {
        println!(
            "ratio {}: ours/peer = {:.3} (ours {}, peer {})",
            r.name,
            r.ratio(),
            human_ns(r.ours_ns),
            human_ns(r.peer_ns)
        );
    }
    Ok(true)
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

fn crates_with_benches(root: &Path) -> Vec<PathBuf> {
    ["crates", "apps"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root.join(d)).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("benches").is_dir())
        .collect()
}

/// Every `ours`/`peer` pair under a criterion output directory; with
/// `since`, only pairs whose both estimates were written from then on.
pub fn collect(criterion: &Path, since: Option<SystemTime>) -> Result<Vec<Ratio>> {
    let mut out = Vec::new();
    if !criterion.is_dir() {
        return Ok(out);
    }
    walk(criterion, criterion, since, &mut out)?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn written_since(path: &Path, since: Option<SystemTime>) -> bool {
    since.is_none_or(|t| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|m| m >= t)
    })
}

fn walk(base: &Path, dir: &Path, since: Option<SystemTime>, out: &mut Vec<Ratio>) -> Result<()> {
    let ours = dir.join("ours/new/estimates.json");
    let peer = dir.join("peer/new/estimates.json");
    if ours.is_file()
        && peer.is_file()
        && written_since(&ours, since)
        && written_since(&peer, since)
    {
        let name = dir.strip_prefix(base).unwrap_or(dir).display().to_string();
        out.push(Ratio {
            name,
            ours_ns: mean(&ours)?,
            peer_ns: mean(&peer)?,
        });
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir()
            && path
                .file_name()
                .is_some_and(|n| n != "report" && n != "new" && n != "base")
        {
            walk(base, &path, since, out)?;
        }
    }
    Ok(())
}

fn mean(path: &Path) -> Result<f64> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let estimates: Estimates =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    Ok(estimates.mean.point_estimate)
}

fn human_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_estimate(dir: &Path, mean: f64) {
        std::fs::create_dir_all(dir.join("new")).unwrap();
        std::fs::write(
            dir.join("new/estimates.json"),
            format!(r#"{{"mean":{{"point_estimate":{mean},"standard_error":1.0}},"median":{{"point_estimate":{mean}}}}}"#),
        )
        .unwrap();
    }

    #[test]
    fn pairs_ours_and_peer_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path();
        write_estimate(&c.join("gate_writes/ours"), 800.0);
        write_estimate(&c.join("gate_writes/peer"), 1000.0);
        write_estimate(&c.join("editor/keystroke/100k/ours"), 2.0e6);
        write_estimate(&c.join("editor/keystroke/100k/peer"), 1.0e6);
        write_estimate(&c.join("lonely/ours"), 5.0);
        let ratios = collect(c, None).unwrap();
        let summary: Vec<(String, f64)> =
            ratios.iter().map(|r| (r.name.clone(), r.ratio())).collect();
        assert_eq!(
            summary,
            vec![
                ("editor/keystroke/100k".to_owned(), 2.0),
                ("gate_writes".to_owned(), 0.8)
            ]
        );
    }

    #[test]
    fn estimates_from_before_the_run_are_not_reported() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path();
        write_estimate(&c.join("old/ours"), 1.0);
        write_estimate(&c.join("old/peer"), 2.0);
        write_estimate(&c.join("half/ours"), 1.0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let started = SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_estimate(&c.join("half/peer"), 2.0);
        write_estimate(&c.join("fresh/ours"), 3.0);
        write_estimate(&c.join("fresh/peer"), 4.0);
        let names = |since| -> Vec<String> {
            collect(c, since)
                .unwrap()
                .into_iter()
                .map(|r| r.name)
                .collect()
        };
        assert_eq!(names(Some(started)), vec!["fresh".to_owned()]);
        assert_eq!(
            names(None),
            vec!["fresh".to_owned(), "half".to_owned(), "old".to_owned()]
        );
    }

    #[test]
    fn a_corrupt_estimate_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write_estimate(&dir.path().join("x/ours"), 1.0);
        std::fs::create_dir_all(dir.path().join("x/peer/new")).unwrap();
        std::fs::write(dir.path().join("x/peer/new/estimates.json"), "{").unwrap();
        assert!(collect(dir.path(), None).is_err());
    }

    #[test]
    fn durations_are_readable() {
        assert_eq!(human_ns(12.0), "12 ns");
        assert_eq!(human_ns(1500.0), "1.50 µs");
        assert_eq!(human_ns(2.5e6), "2.50 ms");
        assert_eq!(human_ns(3.0e9), "3.00 s");
    }
}
