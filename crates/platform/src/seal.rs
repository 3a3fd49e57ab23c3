//! Keeping this process's secrets from other processes.
//!
//! A process's environment as it started stays readable in
//! `/proc/<pid>/environ` to anyone who may inspect the process — on Linux,
//! root, even from inside a sandbox — however the variables are changed
//! afterwards, because the kernel reads the block the process started with.
//! [`seal`] therefore (1) marks the process undumpable on Linux, so that
//! other processes of the same user can neither read that file nor attach,
//! and (2) takes every secret variable out of the environment *and*
//! overwrites its value in that original block, keeping the values for the
//! process's own use in [`Sealed`].
//!
//! Elsewhere than Linux the variables are removed from the environment;
//! what the operating system kept of the starting block is not touched.

use std::collections::BTreeMap;

/// The secret variables taken out of the environment, for this process's
/// own reads (`--api-key-env NAME`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Sealed {
    secrets: BTreeMap<String, String>,
}

impl std::fmt::Debug for Sealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealed")
            .field("names", &self.secrets.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Sealed {
    /// A variable's value: a sealed secret, or else the environment's.
    pub fn var(&self, name: &str) -> Option<String> {
        self.secrets
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }

    /// The names taken out of the environment.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.secrets.keys().map(String::as_str)
    }
}

/// Whether the process is marked undumpable (always false elsewhere than
/// Linux, where the mark does not exist).
pub fn undumpable() -> bool {
    #[cfg(target_os = "linux")]
    {
        matches!(
            rustix::process::dumpable_behavior(),
            Ok(rustix::process::DumpableBehavior::NotDumpable)
        )
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// Marks the process undumpable (Linux) and takes every variable for which
/// `is_secret(name, value)` holds out of the environment, wiping its value
/// from the starting block.
///
/// # Safety
/// No other thread may exist yet: the environment is changed, which races
/// with any concurrent read (call this first thing in `main`).
#[expect(
    unsafe_code,
    reason = "changes the process environment before any thread exists"
)]
pub unsafe fn seal(is_secret: impl Fn(&str, &str) -> bool) -> Sealed {
    #[cfg(target_os = "linux")]
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::warn!("the process could not be marked undumpable: {e}");
    }
    let mut secrets = BTreeMap::new();
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if value.is_empty() || !is_secret(name, value) {
            continue;
        }
        secrets.insert(name.to_owned(), value.to_owned());
    }
    #[cfg(target_os = "linux")]
    let blocks = linux::value_spans(&secrets);
    for name in secrets.keys() {
        // SAFETY: the caller guarantees no other thread exists.
        unsafe { std::env::remove_var(name) };
    }
    #[cfg(target_os = "linux")]
    // SAFETY: the spans point into strings the C library never frees (the
    // starting block, or copies `setenv` leaks by design); no thread reads
    // them, and `remove_var` dropped every pointer to them.
    unsafe {
        linux::wipe(&blocks);
    };
    Sealed { secrets }
}

#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "reads and wipes the C library's environment strings"
)]
mod linux {
    use std::collections::BTreeMap;
    use std::ffi::CStr;

    unsafe extern "C" {
        static environ: *const *mut libc::c_char;
    }

    /// Where each secret's value lies in memory: (start, length).
    pub(super) fn value_spans(secrets: &BTreeMap<String, String>) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        // SAFETY: `environ` is the C library's NULL-terminated array of
        // NUL-terminated strings; no thread changes it now (see `seal`).
        unsafe {
            let mut entry = environ;
            while !entry.is_null() && !(*entry).is_null() {
                let text = CStr::from_ptr(*entry).to_bytes();
                if let Some(eq) = text.iter().position(|b| *b == b'=')
                    && let Ok(name) = std::str::from_utf8(&text[..eq])
                    && secrets.contains_key(name)
                {
                    spans.push(((*entry).add(eq + 1) as usize, text.len() - eq - 1));
                }
                entry = entry.add(1);
            }
        }
        spans
    }

    /// Overwrites each span with NUL bytes.
    ///
    /// # Safety
    /// Each span lies in the process's environment block as [`value_spans`]
    /// found it, and no other thread reads the environment meanwhile.
    pub(super) unsafe fn wipe(spans: &[(usize, usize)]) {
        for &(start, len) in spans {
            // SAFETY: the caller guarantees the spans are live, writable and
            // unread (see `seal`).
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, len) };
        }
    }
}
