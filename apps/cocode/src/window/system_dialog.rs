//! The system's own dialogs: the folder picker (File → Open Folder…) and
//! the save dialog (the Trace panel's Save). Linux asks the desktop portal
//! (`org.freedesktop.portal.FileChooser`, through `ashpd`, over D-Bus: no
//! helper process is started); Windows and macOS show their native dialogs
//! (`rfd`). Where the system has no picker (no portal running, no session
//! bus), the answer says so and the window's typed-path dialog stays, so a
//! folder can always be opened.

use std::path::PathBuf;

use futures_util::future::BoxFuture;

/// What a system dialog answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    /// The person chose this path.
    Chosen(PathBuf),
    /// The person closed the dialog without choosing.
    Cancelled,
    /// The system has no such dialog here; why, in words.
    Unavailable(String),
}

/// The dialogs the window asks the system for. Each runs off the UI
/// thread (on the runtime) and answers once.
pub trait SystemDialogs: Send + Sync {
    /// A folder to open, starting in `start`.
    fn pick_folder(&self, title: String, start: Option<PathBuf>) -> BoxFuture<'static, Picked>;
    /// Where to save a file first named `name`, starting in `start`.
    fn save_file(
        &self,
        title: String,
        name: String,
        start: Option<PathBuf>,
    ) -> BoxFuture<'static, Picked>;
}

/// Asks the system's dialogs for the window, one at a time, and hands
/// each answer back as what it becomes (`A`: the window's command).
pub struct DialogRunner<A> {
    dialogs: std::sync::Arc<dyn SystemDialogs>,
    answers: (std::sync::mpsc::Sender<A>, std::sync::mpsc::Receiver<A>),
    /// A dialog is open (its answer has not come).
    pub open: bool,
    /// Why the system has no folder picker, once a request found out: the
    /// typed-path dialog is used from then on.
    pub unavailable: Option<String>,
}

impl<A> std::fmt::Debug for DialogRunner<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DialogRunner")
            .field("open", &self.open)
            .field("unavailable", &self.unavailable)
            .finish_non_exhaustive()
    }
}

impl<A: Send + 'static> DialogRunner<A> {
    pub fn new(dialogs: std::sync::Arc<dyn SystemDialogs>) -> Self {
        Self {
            dialogs,
            answers: std::sync::mpsc::channel(),
            open: false,
            unavailable: None,
        }
    }

    /// No system dialogs: the typed-path dialog from the start.
    pub fn off() -> Self {
        let mut runner = Self::new(std::sync::Arc::new(NoDialogs));
        runner.unavailable = Some(OFF.to_owned());
        runner
    }

    pub fn dialogs(&self) -> &dyn SystemDialogs {
        self.dialogs.as_ref()
    }

    /// Shows `dialog` on `runtime`; its answer comes back as `then(answer)`
    /// and wakes the window. False (nothing shown) while another is open.
    pub fn ask(
        &mut self,
        runtime: &tokio::runtime::Handle,
        waker: &crate::window::link::Waker,
        dialog: BoxFuture<'static, Picked>,
        then: impl FnOnce(Picked) -> A + Send + 'static,
    ) -> bool {
        if self.open {
            return false;
        }
        self.open = true;
        let tx = self.answers.0.clone();
        let waker = waker.clone();
        runtime.spawn(async move {
            let picked = dialog.await;
            let _ = tx.send(then(picked));
            waker.wake();
        });
        true
    }

    /// The answers that came since the last call.
    pub fn drain(&mut self) -> Vec<A> {
        let answers: Vec<_> = self.answers.1.try_iter().collect();
        if !answers.is_empty() {
            self.open = false;
        }
        answers
    }
}

/// No system dialogs (tests, and a window told not to use them): every
/// request is answered as unavailable, so the typed path is used.
#[derive(Debug, Default)]
pub struct NoDialogs;

/// Why [`NoDialogs`] shows none.
const OFF: &str = "system dialogs are off in this window";

impl SystemDialogs for NoDialogs {
    fn pick_folder(&self, _: String, _: Option<PathBuf>) -> BoxFuture<'static, Picked> {
        Box::pin(async { Picked::Unavailable(OFF.into()) })
    }

    fn save_file(&self, _: String, _: String, _: Option<PathBuf>) -> BoxFuture<'static, Picked> {
        Box::pin(async { Picked::Unavailable(OFF.into()) })
    }
}

/// The system's dialogs.
#[derive(Debug, Default)]
pub struct Native;

#[cfg(target_os = "linux")]
impl SystemDialogs for Native {
    fn pick_folder(&self, title: String, start: Option<PathBuf>) -> BoxFuture<'static, Picked> {
        Box::pin(async move {
            use ashpd::desktop::file_chooser::SelectedFiles;
            let request = match SelectedFiles::open_file()
                .title(title.as_str())
                .accept_label("Open")
                .modal(true)
                .multiple(false)
                .directory(true)
                .current_folder::<&std::path::Path>(start.as_deref())
            {
                Ok(request) => request,
                Err(e) => return Picked::Unavailable(portal_words(&e)),
            };
            portal_answer(request.send().await)
        })
    }

    fn save_file(
        &self,
        title: String,
        name: String,
        start: Option<PathBuf>,
    ) -> BoxFuture<'static, Picked> {
        Box::pin(async move {
            use ashpd::desktop::file_chooser::SelectedFiles;
            let request = match SelectedFiles::save_file()
                .title(title.as_str())
                .accept_label("Save")
                .modal(true)
                .current_name(name.as_str())
                .current_folder::<&std::path::Path>(start.as_deref())
            {
                Ok(request) => request,
                Err(e) => return Picked::Unavailable(portal_words(&e)),
            };
            portal_answer(request.send().await)
        })
    }
}

/// What the portal's answer means for the person.
#[cfg(target_os = "linux")]
fn portal_answer(
    sent: Result<
        ashpd::desktop::Request<ashpd::desktop::file_chooser::SelectedFiles>,
        ashpd::Error,
    >,
) -> Picked {
    use ashpd::desktop::ResponseError;
    match sent.and_then(|request| request.response()) {
        Ok(files) => match files.uris().first() {
            Some(uri) => match path_of_uri(uri.as_str()) {
                Some(path) => Picked::Chosen(path),
                None => Picked::Unavailable(format!(
                    "the system picker chose {uri}, which is not a local folder"
                )),
            },
            None => Picked::Cancelled,
        },
        Err(ashpd::Error::Response(ResponseError::Cancelled)) => Picked::Cancelled,
        Err(e) => Picked::Unavailable(portal_words(&e)),
    }
}

#[cfg(target_os = "linux")]
fn portal_words(e: &ashpd::Error) -> String {
    format!("The system's file chooser is not available here: no desktop portal answered ({e})")
}

/// The local path of a `file://` URI (percent-decoded, any bytes).
#[cfg(target_os = "linux")]
pub fn path_of_uri(uri: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt as _;
    let rest = uri.strip_prefix("file://")?;
    // `file:///x` (no host) or `file://localhost/x`.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// An `rfd` dialog starting in `start`, its answer as [`Picked`].
#[cfg(any(windows, target_os = "macos"))]
fn rfd_dialog(
    dialog: rfd::AsyncFileDialog,
    start: Option<PathBuf>,
    show: impl FnOnce(rfd::AsyncFileDialog) -> BoxFuture<'static, Option<rfd::FileHandle>>,
) -> BoxFuture<'static, Picked> {
    let dialog = match start {
        Some(start) => dialog.set_directory(start),
        None => dialog,
    };
    let picked = show(dialog);
    Box::pin(async move {
        match picked.await {
            Some(handle) => Picked::Chosen(handle.path().to_path_buf()),
            None => Picked::Cancelled,
        }
    })
}

#[cfg(any(windows, target_os = "macos"))]
impl SystemDialogs for Native {
    fn pick_folder(&self, title: String, start: Option<PathBuf>) -> BoxFuture<'static, Picked> {
        rfd_dialog(rfd::AsyncFileDialog::new().set_title(title), start, |d| {
            Box::pin(d.pick_folder())
        })
    }

    fn save_file(
        &self,
        title: String,
        name: String,
        start: Option<PathBuf>,
    ) -> BoxFuture<'static, Picked> {
        let dialog = rfd::AsyncFileDialog::new()
            .set_title(title)
            .set_file_name(name);
        rfd_dialog(dialog, start, |d| Box::pin(d.save_file()))
    }
}

#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
impl SystemDialogs for Native {
    fn pick_folder(&self, title: String, start: Option<PathBuf>) -> BoxFuture<'static, Picked> {
        NoDialogs.pick_folder(title, start)
    }

    fn save_file(
        &self,
        title: String,
        name: String,
        start: Option<PathBuf>,
    ) -> BoxFuture<'static, Picked> {
        NoDialogs.save_file(title, name, start)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_file_uri_is_its_path_with_every_byte_decoded() {
        use std::os::unix::ffi::OsStrExt as _;
        assert_eq!(
            path_of_uri("file:///home/me/My%20Project"),
            Some(PathBuf::from("/home/me/My Project"))
        );
        assert_eq!(
            path_of_uri("file://localhost/tmp/%ED%95%9C%EA%B8%80"),
            Some(PathBuf::from("/tmp/한글"))
        );
        assert_eq!(
            path_of_uri("file:///tmp/%FF")
                .unwrap()
                .as_os_str()
                .as_bytes(),
            b"/tmp/\xff"
        );
        assert_eq!(path_of_uri("https://example.com/x"), None);
        assert_eq!(path_of_uri("file://server/share"), None);
    }
}
