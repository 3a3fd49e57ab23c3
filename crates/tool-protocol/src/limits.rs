//! The limits the workspace tools publish and enforce, in one place: the
//! catalog states them to models and the argument types check them.

/// The largest text (UTF-8 bytes) one read returns or one mutation writes.
/// Shared by `readFile`, `writeFile`, `createFile` and `applyPatch`.
pub const SOURCE_LIMIT_BYTES: usize = 1024 * 1024;
/// The most edits one `applyEdits` call carries.
pub const EDIT_BATCH_LIMIT: u64 = 1000;
/// The most text (UTF-8 bytes, all results together) one `applyEdits` writes.
pub const EDIT_BATCH_BYTES_LIMIT: usize = 16 * SOURCE_LIMIT_BYTES;
/// The most entries one `listFiles` page returns.
pub const LIST_PAGE_LIMIT: u64 = 1000;
/// The most matches one `search` returns.
pub const SEARCH_RESULT_LIMIT: u64 = 500;
/// The most files one whole-workspace `lsp.diagnostics` call checks.
pub const LSP_QUERY_FILES: usize = 200;
/// The longest a `terminal.run` command may run, in seconds.
pub const COMMAND_TIMEOUT_LIMIT_SECS: u64 = 1200;
/// The default and largest output a `terminal.run` returns, in bytes (the
/// start is trimmed first).
pub const COMMAND_OUTPUT_LIMIT_BYTES: u64 = 256 * 1024;
