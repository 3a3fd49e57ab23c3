//! The window: the eframe app ([`app::CocodeApp`]), what views ask for
//! ([`command`]), each panel's state, the views that draw it, and the
//! workers that keep the disk and the host off the UI thread.
//!
//! Views read state and push commands; they never import the app. The
//! window uses `host`, never `cli`.

pub mod agent;
pub mod app;
pub mod approvals;
pub mod brick_service;
pub mod catalog;
pub mod command;
pub mod crash_notice;
pub mod disk_watch;
pub mod editors;
pub mod explorer;
pub mod git_service;
pub mod io_worker;
pub mod keymap;
pub mod link;
pub mod lsp;
pub mod new_brick;
pub mod open_folder;
pub mod palette;
pub mod panel;
pub mod person_files;
pub mod providers;
pub mod quick_open;
pub mod review;
pub mod review_service;
pub mod saved;
pub mod scm;
pub mod search;
pub mod settings;
pub mod system_dialog;
pub mod terminals;
pub mod trace;
pub mod transcript;
pub mod views;
pub mod workspace_service;

#[cfg(all(test, target_os = "linux"))]
pub(crate) mod loopback;
#[cfg(test)]
pub(crate) mod raster;
#[cfg(test)]
pub(crate) mod testing;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::window::app::CocodeApp;

/// Opens the window (with `folder` open, if given) and runs it until it
/// closes.
pub fn run(folder: Option<&Path>, root: crate::host::root::HostRoot) -> ExitCode {
    match open(folder, root) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cocode: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn open(folder: Option<&Path>, root: crate::host::root::HostRoot) -> anyhow::Result<()> {
    let folder = match folder {
        Some(dir) => {
            let canonical = dunce::canonicalize(dir)
                .with_context(|| format!("cannot open folder {}", dir.display()))?;
            anyhow::ensure!(canonical.is_dir(), "not a folder: {}", canonical.display());
            Some(canonical)
        }
        None => None,
    };
    // What the last run left: with no folder asked for, its last one
    // (while it is still a folder), and the window's size and place.
    let file = saved::state_file();
    let loaded = file.as_deref().map(saved::SavedState::load);
    let folder = folder.or_else(|| {
        loaded
            .as_ref()
            .and_then(|l| l.state.last_workspace.clone())
            .filter(|p| p.is_dir())
    });
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("cocode")
        .with_app_id("cocode")
        .with_inner_size([1280.0, 800.0])
        .with_min_inner_size([480.0, 320.0])
        .with_icon(window_icon());
    if let Some(geometry) = loaded.as_ref().and_then(|l| l.state.window) {
        let [w, h] = geometry.size;
        if w >= 480.0 && h >= 320.0 && w.is_finite() && h.is_finite() {
            viewport = viewport.with_inner_size([w, h]);
        }
        if let Some(position) = geometry
            .position
            .filter(|p| p.iter().all(|v| v.is_finite()))
        {
            viewport = viewport.with_position(position);
        }
        viewport = viewport.with_maximized(geometry.maximized);
    }
    let options = eframe::NativeOptions {
        viewport,
        ..Default::default()
    };
    // Before the event loop starts: macOS sends the folder a launch was
    // made for as soon as the app finishes launching.
    let requests = cocode_platform::open_requests::OpenRequests::new();
    if let Err(e) = requests.listen_to_os() {
        tracing::warn!(code = e.code(), "{e}");
    }
    eframe::run_native(
        "cocode",
        options,
        Box::new(move |cc| {
            let mut app = CocodeApp::new(None, root)?;
            if let (Some(file), Some(loaded)) = (file, loaded) {
                app.adopt_saved(file, loaded);
            }
            if let Some(folder) = folder {
                app.open_workspace(folder);
            }
            app.open_requests = requests;
            app.bind(&cc.egui_ctx);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("the window could not start: {e}"))
}

/// The application icon (`assets/icon`, rendered by `cargo xtask icons`),
/// for the title bar and the task switcher.
fn window_icon() -> std::sync::Arc<egui::IconData> {
    const PNG: &[u8] = include_bytes!("../../../assets/icon/png/128.png");
    let icon = decode_png(PNG).unwrap_or_else(|e| {
        tracing::warn!("the window icon is not readable: {e}");
        egui::IconData::default()
    });
    std::sync::Arc::new(icon)
}

/// An RGBA icon from a PNG.
pub fn decode_png(bytes: &[u8]) -> Result<egui::IconData, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or("the image is too large")?;
    let mut rgba = vec![0; size];
    let info = reader.next_frame(&mut rgba).map_err(|e| e.to_string())?;
    if info.color_type != png::ColorType::Rgba || info.bit_depth != png::BitDepth::Eight {
        return Err("the image is not 8-bit RGBA".to_owned());
    }
    rgba.truncate(info.buffer_size());
    Ok(egui::IconData {
        rgba,
        width: info.width,
        height: info.height,
    })
}

#[cfg(test)]
mod icon_tests {
    #[test]
    fn the_window_icon_is_the_committed_128_pixel_png() {
        let icon = super::window_icon();
        assert_eq!((icon.width, icon.height), (128, 128));
        assert_eq!(icon.rgba.len(), 128 * 128 * 4);
        // The tile's dark blue at its centre-left edge, transparent corners.
        let at = |x: usize, y: usize| &icon.rgba[(y * 128 + x) * 4..(y * 128 + x) * 4 + 4];
        assert_eq!(at(0, 0)[3], 0);
        assert_eq!(at(8, 64), &[0x1E, 0x24, 0x30, 0xFF]);
    }
}
