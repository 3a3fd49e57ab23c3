//! cocode-lsp (layer L2): the language-server client. Servers start through
//! the launcher (`tool` profile) and speak JSON-RPC over stdio
//! ([`framing`], [`connection`]); [`LanguageServers`] keeps the open
//! documents in sync, restarts crashed servers and answers hover,
//! completion, definition, semantic tokens and diagnostics in character
//! positions ([`encoding`]).

pub mod connection;
pub mod encoding;
mod error;
pub mod features;
pub mod framing;
pub mod registry;
mod servers;
mod spec;
pub mod typescript;

pub use cocode_platform::programs::find_program;
pub use encoding::{PositionEncoding, TextPos, TextRange};
pub use error::LspError;
pub use features::{Completion, Diagnostic, Edit, FileDiagnostics, HoverText, Location, Severity};
pub use registry::{ServerRegistry, ServerSpec, language_id};
pub use servers::{
    LanguageServers, LspEvent, LspSetup, MAX_RESTARTS, Scope, ServerState, ServerStatus, Timeouts,
    path_of_uri, uri_of,
};
