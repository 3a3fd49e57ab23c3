//! cocode-lsp (layer L2): the language-server client — JSON-RPC over stdio through the launcher, lifecycle, document sync, diagnostics, hover, completion, definition and semantic tokens.
