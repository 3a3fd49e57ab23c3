//! The suites.

mod persisted_formats;
