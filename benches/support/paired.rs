//! Both sides of a comparison measured in alternation, and their ratio taken
//! within one stretch of time.
//!
//! Criterion measures a group's `ours` and `peer` one after the other, each
//! for seconds. This machine's speed drifts over such stretches (one frame
//! of the editor took from 0.43 to 0.79 ms within a minute, while ours ÷
//! peer timed in alternation stayed between 1.05 and 1.10), so a ratio of
//! two stretches carries the drift. Here every run of ours is followed by a
//! run of the peer, whichever side criterion is measuring, and the means of
//! both sides over the runs made while criterion measured `ours` are
//! written beside its estimates (`<group>/paired.json`). `cargo xtask
//! bench` takes a comparison's ratio from that file when it is as new as
//! the estimates.

use std::cell::Cell;
use std::path::PathBuf;
use std::time::Duration;

/// What the runs made for `ours` timed of both sides.
#[derive(Default)]
pub struct Paired {
    ours: Cell<Duration>,
    peer: Cell<Duration>,
    runs: Cell<u64>,
}

impl Paired {
    /// `iters` runs of ours, each followed by a run of the peer (each run
    /// times its own work); the total of the side asked for. The runs made
    /// for `ours` are kept for [`Paired::write`].
    pub fn alternate(
        &self,
        iters: u64,
        mut ours: impl FnMut() -> Duration,
        mut peer: impl FnMut() -> Duration,
        want_ours: bool,
    ) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let (o, p) = (ours(), peer());
            if want_ours {
                self.ours.set(self.ours.get() + o);
                self.peer.set(self.peer.get() + p);
                self.runs.set(self.runs.get() + 1);
            }
            total += if want_ours { o } else { p };
        }
        total
    }

    /// Writes the means of both sides to `<criterion's folder>/<name>/paired.json`,
    /// `name` being the comparison's folder (`group` or `group/function`);
    /// nothing when criterion did not measure `ours` (a filter left it out)
    /// or wrote no estimates (`cargo test` runs each bench once without
    /// `--bench`; `--profile-time` measures nothing).
    ///
    /// # Panics
    /// When the file cannot be written.
    #[expect(
        clippy::disallowed_methods,
        clippy::expect_used,
        reason = "a bench writes its result beside criterion's, or stops"
    )]
    pub fn write(&self, name: &str) {
        let runs = self.runs.get();
        let args: Vec<String> = std::env::args().collect();
        let estimated =
            args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--profile-time");
        if runs == 0 || !estimated {
            return;
        }
        #[expect(clippy::cast_precision_loss, reason = "a count of runs")]
        let mean = |d: Duration| d.as_secs_f64() * 1e9 / runs as f64;
        let dir = criterion_home().join(name);
        std::fs::create_dir_all(&dir).expect("the comparison's folder");
        let text = format!(
            "{{\"runs\":{runs},\"ours_ns\":{},\"peer_ns\":{}}}\n",
            mean(self.ours.get()),
            mean(self.peer.get())
        );
        std::fs::write(dir.join("paired.json"), text).expect("paired.json written");
    }
}

/// Where criterion writes its estimates, found as criterion finds it:
/// `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`; run by cargo, the
/// `criterion` folder of the target folder this bench was built in
/// (`<target>/<profile>/deps/<bench>`, what `cargo metadata` names); run
/// by hand, `target/criterion` in the current folder.
#[expect(
    clippy::expect_used,
    reason = "a bench that cannot find its folder stops"
)]
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    if std::env::var_os("CARGO").is_none() {
        return PathBuf::from("target/criterion");
    }
    let exe = std::env::current_exe().expect("the bench's own path");
    exe.ancestors()
        .nth(3)
        .expect("a bench built in <target>/<profile>/deps")
        .join("criterion")
}
