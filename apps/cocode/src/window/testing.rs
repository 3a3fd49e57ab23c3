//! The one helper UI tests go through: fixed size, theme and OS.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use egui_kittest::Harness;

use crate::window::app::CocodeApp;

/// The runtime every harness of this test process shares, built the way
/// `main` builds the app's one runtime.
pub fn runtime() -> tokio::runtime::Handle {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| crate::host::runtime::build().expect("the runtime starts"))
        .handle()
        .clone()
}

/// A harness around the whole app, 1200×800, dark theme, Linux conventions.
pub fn harness(folder: Option<PathBuf>) -> Harness<'static, CocodeApp> {
    let mut app = CocodeApp::new(folder, runtime()).expect("io thread starts");
    app.os = cocode_platform::Os::Linux;
    Harness::builder()
        .with_size(egui::vec2(1200.0, 800.0))
        .with_os(egui::os::OperatingSystem::Nix)
        .build_ui_state(|ui, app: &mut CocodeApp| app.ui(ui), app)
}

/// Steps frames until `done` holds (the IO thread answers asynchronously).
pub fn run_until(
    harness: &mut Harness<'_, CocodeApp>,
    what: &str,
    done: impl Fn(&Harness<'_, CocodeApp>) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        harness.step();
        if done(harness) {
            harness.run_steps(2);
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {:?} {:?}",
            harness.state().dialog,
            harness.state().agent
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
