//! cocode-editor (layer L2): the editor's model — rope-backed documents with
//! change sets (`apply` / `invert`), selections with several cursors that
//! survive edits, editing commands, search, undo and redo that group typing,
//! and the open-document set the host reads unsaved text from and language
//! servers publish semantic tokens to. Drawing lives in the app.

pub mod change;
pub mod commands;
pub mod document;
pub mod documents;
pub mod markup;
pub mod search;
pub mod selection;
pub mod syntax;

pub use change::{Change, ChangeSet, EditError};
pub use commands::Motion;
pub use document::{Document, EditKind, Indent, LineEnding};
pub use documents::OpenDocuments;
pub use search::{SearchError, SearchQuery};
pub use selection::{Range, Selection};
pub use syntax::{Highlight, Language, Syntax, SyntaxState};
