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
//! # A server
//!
//! A router of tools (prompts, resources, templates too), served over stdio; the same
//! [`server::Server`] serves Streamable HTTP ([`http::HttpServer`]) or WebSocket
//! ([`ws::WsServer`]). Arguments are typed (any `Deserialize`; with the `schemars` feature,
//! `typed_tool` derives the schema too). Handlers that wait use `async_tool`,
//! `async_prompt` or `async_resource` (a future, polled on the server's executor, with an
//! [`AsyncJob`](talaria_core::server::AsyncJob) for progress, cancellation and awaited asks) or
//! `blocking_tool` (a worker thread, with a [`Job`](talaria_core::server::Job)). [`prelude`] has the
//! names a server needs.
//!
//! ```no_run
//! use serde::Deserialize;
//! use talaria::core::schema::tools::{CallToolResult, Tool};
//! use talaria::core::server::Router;
//! use talaria::server::Server;
//!
//! #[derive(Deserialize)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! let schema = serde_json::json!({"type": "object", "required": ["a", "b"],
//!     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
//! let add = Tool::new("add", schema.as_object().cloned().unwrap_or_default()).with_description("Adds two integers");
//! let router = Router::<()>::builder()
//!     .tool(add, |_ctx, args: Add| Ok(CallToolResult::text((args.a + args.b).to_string())))
//!     .build();
//! let server = Server::new("adder", "1.0", router);
//! talaria::stdio::serve(&server)?;
//! // Or over HTTP: talaria::http::HttpServer::bind(&server, "127.0.0.1:8080", Default::default())?.wait();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # A client
//!
//! A client of any MCP server: a child process over stdio here, or
//! `Client::http("https://host/mcp", &[], options)`, `Client::websocket(...)`. Calls are
//! blocking; [`client::AsyncClient`] has the same calls as futures for any executor.
//!
//! ```no_run
//! use talaria::client::{Client, ClientOptions};
//! use talaria::stdio::StdioCommand;
//!
//! let client = Client::stdio(StdioCommand::new("adder"), ClientOptions::new("me", "1.0"))?;
//! for tool in client.list_all_tools()? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let sum = client.call_tool("add", serde_json::json!({"a": 2, "b": 3}))?;
//! assert_eq!(sum.content[0].as_text(), Some("5"));
//! # Ok::<(), talaria::client::ClientError>(())
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `stdio` | yes | child-process clients, serving on this process's stdin/stdout |
//! | `ws` | yes | WebSocket clients and servers (tungstenite) |
//! | `http` | yes | Streamable HTTP and legacy HTTP+SSE: the hyper server (blocking façade, or on smol) and the clients |
//! | `smol` | yes | the async flavour on smol |
//! | `tls` | yes | `https://` and `wss://` for the clients (rustls), TLS and HTTP/2 for the HTTP server |
//! | `tower` | | the MCP endpoint as a `tower` service, to mount in axum or hyper on tokio |
//! | `jwt` | | `private_key_jwt` client authentication for OAuth |
//! | `keyring` | | OAuth tokens in the operating system's keyring |
//! | `schemars` | | tool schemas derived with `schemars` (`talaria-core`'s feature), and [`args!`](crate::args) to declare argument types in a line |
//!
//! `talaria-core`'s other features are set here for you: `std` is always on (every adapter
//! needs threads, sockets and a clock), and `fuzzing` is for the fuzz targets alone. For a
//! target without `std`, depend on `talaria-core` with `default-features = false`.
//!
//! Every transport runs the same loop (see `talaria_core::session` for the contract): read ->
//! `handle_*`, drain `poll_output` -> write, wait on `poll_timeout`. No protocol logic lives
//! here.
//!
//! # Reading never waits for writing
//!
//! Every connection hands its outgoing frames to a bounded outbox that a writer of its own
//! empties, so a reader never blocks because its peer is slow to read, and two peers sending
//! to each other cannot deadlock however much is in flight. While a connection's outbox holds
//! its limit ([`ClientOptions::outbox_limit`](client::ClientOptions::outbox_limit),
//! [`Server::outbox_limit`](server::Server::outbox_limit); [`DEFAULT_OUTBOX_LIMIT`] is
//! 32 MiB), a client's new calls fail at once with
//! [`ClientError::OutboxFull`](client::ClientError::OutboxFull) and a server stops reading
//! that client until its writer catches up.
//!
//! # Threads, and which executor runs what
//!
//! Nothing here needs an async runtime, and nothing starts one behind your back.
//!
//! | what | threads it starts |
//! |---|---|
//! | any connection | one process-wide `talaria-timers` thread (request deadlines) |
//! | a stdio, WebSocket or in-memory connection, either side | a reader (`talaria-stdio-read`, `talaria-ws-read`, `talaria-wss-read`, `talaria-ws-conn`, `talaria-memory-*`; [`stdio::serve`] reads on the calling thread) and a writer (`talaria-write`) |
//! | a blocking HTTP client (`Client::http`, `Client::sse`) | a writer, `talaria-worker` pool threads for requests, `talaria-http-get` or `talaria-sse-read` for the server's stream |
//! | a server | up to 64 `talaria-worker` pool threads for `blocking_tool`s, ending after 10 s idle; with `smol`, one process-wide executor of 1 to 4 `talaria-async-N` threads for `async_tool`s, started by the first |
//! | an [`http::HttpServer`] | 2 to 8 `talaria-http-N` threads (one per core) running its connections as tasks, and async-io's reactor thread; none per connection |
//! | [`AsyncClient`](client::AsyncClient) connects (`AsyncClient::stdio`, `websocket`, `http`, `memory`) | one short-lived `talaria-connect` thread while connecting |
//! | dropping the last client handle | one short-lived `talaria-close` thread that shuts the transport down |
//! | [`stdio::serve_async`] | one `talaria-stdio-serve` thread for the connection's reader |
//! | an HTTP server with a relay ([`http::HttpServerOptions::relay`]) | one `talaria-lease` thread renewing the process's lease (and the relay's own, e.g. `talaria-redis-relay`) |
//!
//! An [`AsyncClient`](client::AsyncClient) call queues its request and at most writes what the
//! transport takes without waiting (the polling thread is held for microseconds; with a few
//! calls in flight it leaves the write to the writer thread), and its future only waits on a
//! completion: the same futures run under tokio, smol or any executor. The HTTP clients and server of the [`smol`](mod@smol)
//! module are the exception: they read async-io sockets in smol tasks, so they use smol's
//! global executor (or the one you pass to `SmolHttpServer::bind_on`) and async-io's reactor
//! thread.
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

pub use outbox::DEFAULT_OUTBOX_LIMIT;

#[cfg(feature = "schemars")]
mod args;
#[cfg(feature = "http")]
pub mod auth;
mod caller_runs;
pub mod client;
mod conn;
#[cfg(feature = "http")]
pub mod http;
pub mod memory;
mod oneshot;
mod outbox;
#[cfg(all(unix, any(feature = "stdio", all(feature = "ws", feature = "tls"))))]
mod poll;
pub mod prelude;
pub mod server;
#[cfg(all(feature = "smol", feature = "stdio", unix))]
pub mod smol;
#[cfg(feature = "stdio")]
pub mod stdio;
mod timers;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(feature = "ws")]
pub mod ws;
