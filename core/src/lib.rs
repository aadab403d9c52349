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
//!
//! # The run loop
//!
//! A [`session::Session`] never waits and never reads a clock: the host does both, in one
//! loop. After every input (bytes, a closed transport, a deadline) and every command, drain
//! `poll_output` (frames to write, events to act on); then wait for exactly one thing: bytes
//! from the peer, or the deadline `poll_timeout` names, and feed what came (`handle_bytes`,
//! `handle_closed` or `handle_timeout`). Here over a TCP socket carrying newline-delimited
//! JSON, with the read timeout as the wait:
//!
//! ```no_run
//! use std::io::{ErrorKind, Read, Write};
//! use std::net::TcpStream;
//! use std::time::{Duration, Instant};
//! use talaria_core::schema::Implementation;
//! use talaria_core::session::{Client, ClientConfig, ClientMode, Event, Output, RequestOptions, Session};
//!
//! let mut socket = TcpStream::connect("127.0.0.1:7000")?;
//! let config = ClientConfig::new(Implementation::new("me", "1.0")).with_mode(ClientMode::Legacy);
//! // The handshake starts at once: its `initialize` is the first output.
//! let mut client = Session::<Client>::new(config, Instant::now());
//! let mut buffer = vec![0; 64 * 1024];
//! loop {
//!     // 1. Drain everything the session has to say.
//!     while let Some(output) = client.poll_output() {
//!         match output {
//!             Output::Transmit { mut payload, .. } => {
//!                 payload.push(b'\n');
//!                 socket.write_all(&payload)?;
//!             }
//!             Output::Event(Event::Ready(_)) => {
//!                 client.send_request(Instant::now(), "tools/list", None, RequestOptions::default())?;
//!             }
//!             Output::Event(Event::Response { outcome, .. }) => {
//!                 println!("{outcome:?}");
//!                 client.close();
//!             }
//!             Output::Event(Event::Closed { .. }) => return Ok(()),
//!             _ => {}
//!         }
//!     }
//!     // 2. Wait for one thing: bytes, or the session's next deadline (none: wait for bytes).
//!     let wait = client.poll_timeout().map(|at| at.saturating_duration_since(Instant::now()));
//!     socket.set_read_timeout(wait.map(|left| left.max(Duration::from_millis(1))))?;
//!     // 3. Feed it in, with the time it happened.
//!     match socket.read(&mut buffer) {
//!         Ok(0) => client.handle_closed(Instant::now()),
//!         Ok(n) => client.handle_bytes(Instant::now(), &buffer[..n]),
//!         Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
//!             client.handle_timeout(Instant::now());
//!         }
//!         Err(e) => return Err(e.into()),
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A real host also sends the application's commands (`send_request`, `respond`, `cancel`)
//! from other threads: it wakes the wait for them, and drains again after each. The
//! `talaria` crate's drivers are such hosts, for every transport.
//!
//! # Without `std`
//!
//! With `default-features = false` the crate is `#![no_std]` + `alloc`, for bare-metal
//! targets and `wasm32-unknown-unknown` (CI builds it for `thumbv7em-none-eabihf`). Everything
//! above works the same; what changes:
//!
//! - time is a [`time::Timestamp`] the host builds from its own clock
//!   ([`time::Timestamp::from_origin`]), where `std` has `std::time::Instant`; see [`time`];
//! - task timestamps read a [`time::WallTime`], through the wall clock the host sets
//!   ([`server::TaskBoard::set_wall_clock`]);
//! - the router's locks spin, and work that would block a thread (a blocking tool's question
//!   to the client, an async tool run where no executor is) polls in place: give async work
//!   an executor of your own.
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `std` | yes | `std::time::Instant` as the core's time, OS locks, parked waits |
//! | `schemars` | | `JsonSchema`-derived tool schemas (`Tool::for_args`, `RouterBuilder::typed_tool`); needs `std` |
//! | `fuzzing` | | `talaria_core::fuzzing`, the bodies of the cargo-fuzz targets; needs `std` |
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

pub mod auth;
pub mod client;
pub mod codec;
mod float;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod http;
pub mod jsonrpc;
pub mod schema;
pub mod server;
pub mod session;
mod sync;
#[cfg(test)]
mod test_clock;
pub mod time;
pub mod version;

/// What every module of a `#![no_std]` crate imports by hand: the `alloc` half of std's prelude.
mod alloc_prelude {
    pub(crate) use alloc::borrow::ToOwned;
    pub(crate) use alloc::boxed::Box;
    pub(crate) use alloc::string::{String, ToString};
    pub(crate) use alloc::vec::Vec;
    pub(crate) use alloc::{format, vec};
}

/// What macros expanded in other crates name (`talaria::args!`): serde and schemars, through
/// this crate, so that the caller needs no dependency of its own on them. Not public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "schemars")]
    pub use schemars;
    pub use serde;
}
