//! Talaria, a Model Context Protocol SDK for Rust.
//!
//! This crate re-exports the sans-IO protocol core, [`talaria_core`], and will hold the blocking
//! and `smol` drivers for each MCP transport (stdio, Streamable HTTP, legacy HTTP+SSE,
//! WebSocket). Until the drivers land, everything lives in the core.
//!
//! ```
//! use talaria::core::jsonrpc::Message;
//!
//! let msg = Message::from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
//! assert_eq!(msg.method(), Some("ping"));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use talaria_core as core;
