//! Sans-IO core of Talaria, a Model Context Protocol SDK.
//!
//! The crate does no I/O, reads no clock, spawns no thread: it turns bytes into typed MCP
//! messages and back. Layers, bottom to top:
//!
//! - [`jsonrpc`]: JSON-RPC 2.0 messages, ids, error codes, batches, strict validation.
//! - [`codec`]: framing (newline-delimited JSON for stdio, Server-Sent Events for HTTP).
//! - [`version`]: the MCP protocol revisions, negotiation and the feature table.
//! - [`schema`]: typed MCP requests, results and notifications of every revision.
//! - [`session`]: the sans-IO session state machine (`Session<Client>`, `Session<Server>`).
//! - [`server`]: the typed server layer: a router of tools, prompts and resources.
//! - [`client`]: the typed client layer: typed calls and list pagination.
//!
//! # Examples
//!
//! ```
//! use talaria_core::codec::LineDecoder;
//! use talaria_core::jsonrpc::Message;
//!
//! let mut lines = LineDecoder::new();
//! let mut methods = Vec::new();
//! lines.decode(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":", |frame| {
//!     let msg = Message::from_slice(frame.unwrap()).unwrap();
//!     methods.push(msg.method().unwrap().to_owned());
//! });
//! assert_eq!(methods, ["a"]);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod auth;
pub mod client;
pub mod codec;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod http;
pub mod jsonrpc;
pub mod schema;
pub mod server;
pub mod session;
#[cfg(test)]
mod test_clock;
pub mod version;
