//! Runnable examples for Talaria. Each binary under `src/bin` is one example.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod conformance;
pub mod everything;
