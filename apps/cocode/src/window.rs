//! The window: the eframe app ([`app::CocodeApp`]), what views ask for
//! ([`command`]), each panel's state, the views that draw it, and the
//! workers that keep the disk and the host off the UI thread.
//!
//! Views read state and push commands; they never import the app. The
//! window uses `host`, never `cli`.

pub mod agent;
pub mod app;
pub mod brick_service;
pub mod command;
pub mod crash_notice;
pub mod disk_watch;
pub mod editors;
pub mod explorer;
pub mod io_worker;
pub mod link;
pub mod lsp;
pub mod new_brick;
pub mod open_folder;
pub mod quick_open;
pub mod search;
pub mod task_service;
pub mod terminals;
pub mod transcript;
pub mod views;

#[cfg(test)]
pub(crate) mod testing;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::window::app::CocodeApp;

/// Opens the window (with `folder` open, if given) and runs it until it
/// closes.
pub fn run(folder: Option<&Path>, runtime: tokio::runtime::Handle) -> ExitCode {
    match open(folder, runtime) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cocode: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn open(folder: Option<&Path>, runtime: tokio::runtime::Handle) -> anyhow::Result<()> {
    let folder = match folder {
        Some(dir) => {
            let canonical = std::fs::canonicalize(dir)
                .with_context(|| format!("cannot open folder {}", dir.display()))?;
            anyhow::ensure!(canonical.is_dir(), "not a folder: {}", canonical.display());
            Some(canonical)
        }
        None => None,
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("cocode")
            .with_app_id("cocode")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([480.0, 320.0]),
        ..Default::default()
    };
    eframe::run_native(
        "cocode",
        options,
        Box::new(move |cc| {
            let app = CocodeApp::new(folder, runtime)?;
            app.bind(&cc.egui_ctx);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("the window could not start: {e}"))
}
