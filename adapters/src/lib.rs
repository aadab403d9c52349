//! Talaria, a Model Context Protocol SDK for Rust: the drivers that move bytes and time
//! between the outside world and the sans-IO protocol core, [`talaria_core`] (re-exported as
//! [`core`]), and the handles applications use.
//!
//! - [`client::Client`] / [`client::AsyncClient`]: typed MCP calls, blocking or as futures.
//! - [`server::Server`]: a router served over any transport.
//! - [`stdio`]: child-process clients and serving on this process's stdin/stdout.
//! - [`memory`]: a connected client and server in one process.
//! - [`ws`]: WebSocket clients and servers.
//! - [`http`]: Streamable HTTP (both eras on one endpoint).
//! - [`smol`](mod@smol): the async flavour (smol tasks read, everything is awaited): stdio,
//!   and the HTTP clients (`smol::http`, `smol::sse`, `smol::http_or_sse`).
//!
//! Every transport runs the same loop (see `talaria_core::session` for the contract): read ->
//! `handle_*`, drain `poll_output` -> write, wait on `poll_timeout`. No protocol logic lives
//! here.
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

#[cfg(feature = "http")]
pub mod auth;
#[cfg(feature = "cli")]
pub mod cli;
pub mod client;
mod conn;
pub mod demo;
#[cfg(feature = "http")]
pub mod http;
pub mod memory;
mod oneshot;
pub mod server;
#[cfg(all(feature = "smol", feature = "stdio", unix))]
pub mod smol;
#[cfg(feature = "stdio")]
pub mod stdio;
mod timers;
#[cfg(feature = "ws")]
pub mod ws;
