//! cocode-editor (layer L2): the editor's model — rope-backed documents with
//! change sets (`apply` / `invert`), undo and redo that group typing, and
//! the open-document set the host reads unsaved text from and language
//! servers publish semantic tokens to. Drawing lives in the app.

pub mod change;
pub mod document;
pub mod documents;

pub use change::{Change, ChangeSet, EditError};
pub use document::{Document, EditKind, LineEnding};
pub use documents::OpenDocuments;
