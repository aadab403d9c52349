//! Shared helpers for Talaria's integration tests: fixture paths and loaders.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::path::PathBuf;

/// The folder of checked-in test fixtures (`tests/fixtures`).
///
/// # Examples
///
/// ```
/// assert!(talaria_tests::fixtures_dir().ends_with("fixtures"));
/// ```
#[must_use]
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

pub mod sim;
pub mod typed;
