//! Paths the running app is asked to open after it started.
//!
//! On macOS a folder dropped on the Dock icon, or opened in Finder with
//! "Open With → cocode", does not come on the command line: the system
//! sends the running app an "open documents" Apple event, also right after
//! a launch it made for that folder. [`OpenRequests::listen_to_os`]
//! receives those events and queues their paths. On Linux and Windows the
//! desktop starts a new process with the folder as its argument, so there
//! is nothing to listen to. The window also queues what is dropped on it,
//! so both arrive the same way.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// What wakes the window when a request arrives.
type Wake = Box<dyn Fn() + Send + Sync>;

/// A queue of paths to open, shared between whoever asks (the system, a
/// drop) and the window, which takes them on its next frame.
#[derive(Clone, Default)]
pub struct OpenRequests {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    queue: Mutex<Vec<PathBuf>>,
    wake: Mutex<Option<Wake>>,
}

impl fmt::Debug for OpenRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenRequests")
            .field("waiting", &self.lock_queue().len())
            .finish_non_exhaustive()
    }
}

/// Why the system's requests cannot be listened to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenError {
    /// Apple events are delivered on the main thread only.
    NotMainThread,
    /// This process listens already (each event would be queued twice).
    AlreadyListening,
}

impl ListenError {
    /// A stable code for logs and tests.
    pub const fn code(self) -> &'static str {
        match self {
            Self::NotMainThread => "not_main_thread",
            Self::AlreadyListening => "already_listening",
        }
    }
}

impl fmt::Display for ListenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotMainThread => {
                "folders opened from the Dock or Finder are received on the main thread only"
            }
            Self::AlreadyListening => "this process already receives the folders the system opens",
        })
    }
}

impl std::error::Error for ListenError {}

impl OpenRequests {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        self.inner
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `paths` in order and wakes the window (nothing to wake before
    /// it set its waker: it takes what waits on its first frame).
    pub fn push(&self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        self.lock_queue().extend(paths);
        self.wake();
    }

    /// What wakes the window from now on. Requests that came before it
    /// (the system's, while the window was being made) wake it at once.
    pub fn set_waker(&self, wake: impl Fn() + Send + Sync + 'static) {
        *self
            .inner
            .wake
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Box::new(wake));
        if !self.lock_queue().is_empty() {
            self.wake();
        }
    }

    fn wake(&self) {
        if let Some(wake) = self
            .inner
            .wake
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            wake();
        }
    }

    /// Every path asked for since the last call, oldest first.
    pub fn take(&self) -> Vec<PathBuf> {
        std::mem::take(&mut *self.lock_queue())
    }

    /// Receives, for as long as the process runs, the folders the system
    /// asks this app to open (macOS: a drop on the Dock icon, Finder's
    /// Open With), including the one it was launched for. Call it on the
    /// main thread before the window's event loop starts. Elsewhere there
    /// is nothing to receive and it returns `Ok`.
    pub fn listen_to_os(&self) -> Result<(), ListenError> {
        #[cfg(target_os = "macos")]
        {
            macos::listen(self)
        }
        #[cfg(not(target_os = "macos"))]
        {
            Ok(())
        }
    }
}

#[cfg(target_os = "macos")]
#[allow(
    unsafe_code,
    reason = "an Objective-C class the system calls back; objc2's macros expand to unsafe code"
)]
mod macos {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicBool, Ordering};

    use objc2::rc::Retained;
    use objc2::runtime::{AnyObject, NSObject};
    use objc2::{DefinedClass as _, MainThreadMarker, MainThreadOnly, define_class, msg_send, sel};
    use objc2_app_kit::NSApplicationWillFinishLaunchingNotification;
    use objc2_foundation::{
        NSAppleEventDescriptor, NSAppleEventManager, NSNotification, NSNotificationCenter,
        NSObjectProtocol,
    };

    use super::{ListenError, OpenRequests};

    /// `kCoreEventClass`, `kAEOpenDocuments` and `keyDirectObject`.
    const CORE_EVENT_CLASS: u32 = u32::from_be_bytes(*b"aevt");
    const OPEN_DOCUMENTS: u32 = u32::from_be_bytes(*b"odoc");
    const DIRECT_OBJECT: u32 = u32::from_be_bytes(*b"----");

    static LISTENING: AtomicBool = AtomicBool::new(false);

    #[derive(Debug)]
    struct Ivars {
        requests: OpenRequests,
    }

    define_class!(
        // SAFETY: NSObject has no subclassing requirements, and `Listener`
        // does not implement `Drop`.
        #[unsafe(super(NSObject))]
        #[thread_kind = MainThreadOnly]
        #[name = "CocodeOpenRequestsListener"]
        #[ivars = Ivars]
        struct Listener;

        // SAFETY: `NSObjectProtocol` has no safety requirements.
        unsafe impl NSObjectProtocol for Listener {}

        impl Listener {
            // SAFETY: the signature a notification observer is called with.
            #[unsafe(method(applicationWillFinishLaunching:))]
            fn will_finish_launching(&self, _note: &NSNotification) {
                // AppKit installs its own handler for "open documents" as
                // it starts (it would hand the folder to a document
                // controller cocode does not have); this one replaces it
                // before the event of the launch is delivered.
                self.install();
            }

            // SAFETY: the signature `NSAppleEventManager` calls a handler
            // with (`handleAppleEvent:withReplyEvent:`).
            #[unsafe(method(openDocuments:withReplyEvent:))]
            fn open_documents(
                &self,
                event: &NSAppleEventDescriptor,
                _reply: &NSAppleEventDescriptor,
            ) {
                self.ivars().requests.push(paths_of(event));
            }
        }
    );

    impl Listener {
        fn new(mtm: MainThreadMarker, requests: OpenRequests) -> Retained<Self> {
            let this = Self::alloc(mtm).set_ivars(Ivars { requests });
            // SAFETY: NSObject's `init`, which takes no arguments.
            unsafe { msg_send![super(this), init] }
        }

        /// Makes this object the handler of "open documents" events.
        fn install(&self) {
            let handler: &AnyObject = self;
            // SAFETY: the selector is this class's method with the
            // handler's signature, and the object lives as long as the
            // process (see `listen`).
            unsafe {
                NSAppleEventManager::sharedAppleEventManager()
                    .setEventHandler_andSelector_forEventClass_andEventID(
                        handler,
                        sel!(openDocuments:withReplyEvent:),
                        CORE_EVENT_CLASS,
                        OPEN_DOCUMENTS,
                    );
            }
        }
    }

    /// The file paths of an "open documents" event: its direct object is a
    /// list of file URLs (or one URL).
    fn paths_of(event: &NSAppleEventDescriptor) -> Vec<PathBuf> {
        let Some(direct) = event.paramDescriptorForKeyword(DIRECT_OBJECT) else {
            return Vec::new();
        };
        let count = direct.numberOfItems();
        let items: Vec<Retained<NSAppleEventDescriptor>> = if count > 0 {
            // Apple event lists count from 1.
            (1..=count)
                .filter_map(|i| direct.descriptorAtIndex(i))
                .collect()
        } else {
            vec![direct]
        };
        items
            .iter()
            .filter_map(|item| item.fileURLValue())
            .filter_map(|url| url.to_file_path())
            .collect()
    }

    pub(super) fn listen(requests: &OpenRequests) -> Result<(), ListenError> {
        let mtm = MainThreadMarker::new().ok_or(ListenError::NotMainThread)?;
        if LISTENING.swap(true, Ordering::AcqRel) {
            return Err(ListenError::AlreadyListening);
        }
        let listener = Listener::new(mtm, requests.clone());
        let observer: &AnyObject = &listener;
        // SAFETY: the selector is the listener's method taking one
        // notification; the name is AppKit's constant; the listener lives
        // as long as the process.
        unsafe {
            NSNotificationCenter::defaultCenter().addObserver_selector_name_object(
                observer,
                sel!(applicationWillFinishLaunching:),
                Some(NSApplicationWillFinishLaunchingNotification),
                None,
            );
        }
        // Already launched (nothing to wait for): handle events from now on.
        listener.install();
        // Neither the notification center nor the event manager keeps the
        // object alive, and it must answer for the rest of the process.
        std::mem::forget(listener);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn requests_wait_in_order_until_taken_and_are_taken_once() {
        let requests = OpenRequests::new();
        requests.push(vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        requests.clone().push(vec![PathBuf::from("/c")]);
        assert_eq!(
            requests.take(),
            vec![
                PathBuf::from("/a"),
                PathBuf::from("/b"),
                PathBuf::from("/c")
            ]
        );
        assert_eq!(requests.take(), Vec::<PathBuf>::new());
    }

    #[test]
    fn the_window_is_woken_by_each_request_and_by_those_that_came_before_it() {
        let requests = OpenRequests::new();
        // Before the window exists: queued, nobody to wake.
        requests.push(vec![PathBuf::from("/early")]);
        let woken = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&woken);
        requests.set_waker(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(woken.load(Ordering::SeqCst), 1, "woken for the early one");
        requests.push(vec![PathBuf::from("/late")]);
        assert_eq!(woken.load(Ordering::SeqCst), 2);
        // Nothing to open wakes nobody.
        requests.push(Vec::new());
        assert_eq!(woken.load(Ordering::SeqCst), 2);
        assert_eq!(
            requests.take(),
            vec![PathBuf::from("/early"), PathBuf::from("/late")]
        );
        // A waker set with nothing waiting does not wake.
        requests.set_waker(|| panic!("woken with nothing to open"));
    }

    #[test]
    #[cfg(not(target_os = "macos"))]
    fn outside_macos_there_is_nothing_to_listen_to() {
        let requests = OpenRequests::new();
        assert_eq!(requests.listen_to_os(), Ok(()));
        assert_eq!(requests.take(), Vec::<PathBuf>::new());
    }

    #[test]
    fn listen_errors_read_as_words_with_stable_codes() {
        assert_eq!(ListenError::NotMainThread.code(), "not_main_thread");
        assert_eq!(ListenError::AlreadyListening.code(), "already_listening");
        assert_eq!(
            ListenError::AlreadyListening.to_string(),
            "this process already receives the folders the system opens"
        );
    }
}
