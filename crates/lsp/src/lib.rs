//! cocode-lsp (layer L2): the place of the language-server client (JSON-RPC
//! over stdio through the launcher, document sync, diagnostics, hover,
//! completion, definition, semantic tokens); no code yet.
