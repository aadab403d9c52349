//! Streamable HTTP and the legacy HTTP+SSE transport, as pure decisions: what a request means
//! (which era, which session, which status), which stream gets which frame, when a session
//! expires. Adapters parse sockets and write what this module decides.
//!
//! - [`headers`]: the MCP header names, the Base64 sentinel encoding of header values, and the
//!   stateless era's header/body checks (`-32020`); [`Headers`], a request's header fields as
//!   received.
//! - [`ids`]: session ids minted from an injected random source.
//! - [`sessions`]: the table of live sessions with idle expiry as timer deadlines and a cap.
//! - [`client`]: the Streamable HTTP client's decisions (headers, answers, resumption).
//! - [`post`]: one POST of the Streamable HTTP client as a step machine (what to read, what to
//!   feed, when to resume), which the client adapters carry out.
//! - [`exchange`]: classifying one HTTP request and the error replies the transport owes.
//! - [`legacy`]: the 2024-11-05 HTTP+SSE transport's `endpoint` event and URLs.
//! - [`reply`]: shaping a POST's reply: 202, a JSON body, or an SSE stream.
//! - [`stream_start`]: how a POST's SSE response starts on a logged session (when its log
//!   opens, whether a priming event goes first).
//! - [`outcome`]: what follows a POST exchange (the session ended, or saved; a dropped
//!   request cancelled).
//! - [`streams`]: which response stream gets which frame (a POST's, its log once detached,
//!   the GET stream or its backlog), and who owns a resumed stream.
//! - [`event_log`]: the SSE event log (`EventStore`) and session records (`SessionStore`)
//!   behind resumable streams and multi-process servers, with in-memory defaults.
//! - [`conformance`]: the checks every store implementation must pass.
//! - [`relay`]: what passes between processes sharing sessions: client answers that reach
//!   another process than the one that asked, resource-update notices, leases and claims.

pub mod client;
pub mod conformance;
pub mod event_log;
pub mod exchange;
pub mod get_stream;
mod header_map;
pub mod headers;
pub mod ids;
pub mod legacy;
pub mod outcome;
pub mod param_headers;
pub mod post;
pub mod relay;
pub mod reply;
pub mod sessions;
pub mod stream_start;
pub mod streams;

pub use header_map::{Headers, Iter as HeaderIter};
