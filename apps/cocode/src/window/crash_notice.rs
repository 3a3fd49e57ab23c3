//! The notice a start after a crash shows once: when, where the report
//! is, and a way to open that folder.

use std::path::{Path, PathBuf};

use egui::Ui;

use crate::window::command::{Command, WindowCommand};

/// Crash reports not announced yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashNotice {
    pub dir: PathBuf,
    pub reports: Vec<PathBuf>,
}

impl CrashNotice {
    /// The reports in `dir` no start has announced; `None` when there are
    /// none.
    pub fn scan(dir: &Path) -> Option<Self> {
        let reports = crate::host::crash::unseen(dir);
        (!reports.is_empty()).then(|| Self {
            dir: dir.to_path_buf(),
            reports,
        })
    }
}

pub fn show(ui: &mut Ui, notice: &CrashNotice, commands: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        cocode_ui::badge(ui, "cocode stopped unexpectedly", cocode_ui::Tone::Warning);
        let n = notice.reports.len();
        ui.label(if n == 1 {
            format!("A crash report was saved in {}.", notice.dir.display())
        } else {
            format!("{n} crash reports were saved in {}.", notice.dir.display())
        });
        if ui.button("Open Folder").clicked() {
            commands.push(Command::Window(WindowCommand::OpenCrashFolder));
        }
        if ui.button("Dismiss").clicked() {
            commands.push(Command::Window(WindowCommand::DismissCrashNotice));
        }
    });
}
