//! `cargo xtask screenshot`: builds the release app, runs it in a virtual X
//! server with a folder open, and captures the screen to a PNG.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// A small demo folder with Korean names and text.
fn demo_workspace(root: &Path) -> Result<PathBuf> {
    let dir = root.join("target/screenshot-demo");
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::create_dir_all(dir.join("docs"))?;
    std::fs::write(dir.join(".gitignore"), "build/\n")?;
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    // 인사말을 출력합니다\n    println!(\"안녕하세요, cocode!\");\n}\n",
    )?;
    std::fs::write(
        dir.join("안녕하세요.md"),
        "# 안녕하세요\n\ncocode 작업 공간입니다. 한글이 잘 보입니다.\n",
    )?;
    std::fs::write(dir.join("docs/설계.md"), "# 설계\n")?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )?;
    Ok(dir)
}

pub fn run(root: &Path, workspace: Option<PathBuf>, out: &Path) -> Result<()> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--locked", "-p", "cocode"])
        .current_dir(root)
        .status()
        .context("building the release app")?;
    if !status.success() {
        bail!("release build failed");
    }
    let workspace = match workspace {
        Some(w) => w,
        None => demo_workspace(root)?,
    };
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let binary = target.join("release/cocode");
    let out = if out.is_absolute() {
        out.to_path_buf()
    } else {
        root.join(out)
    };
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // Select the file whose preview shows Korean text once the window is up:
    // the app opens the folder; the capture shows the Explorer and Preview.
    let script = r#"
        "$0" open "$1" & app=$!
        for i in $(seq 1 80); do
            if xwininfo -root -tree | grep -q '"cocode"'; then break; fi
            sleep 0.25
        done
        sleep 2
        import -window root "$2"
        kill $app
    "#;
    let status = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24", "sh", "-c", script])
        .arg(&binary)
        .arg(&workspace)
        .arg(&out)
        .status()
        .context("running xvfb-run (install xvfb, xauth, x11-utils and imagemagick)")?;
    if !status.success() || !out.is_file() {
        bail!("no screenshot was taken");
    }
    println!("screenshot: {}", out.display());
    Ok(())
}
