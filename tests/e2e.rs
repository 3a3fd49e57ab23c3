//! Cross-crate end-to-end tests: one binary, suites in `suite/`.

mod suite;
