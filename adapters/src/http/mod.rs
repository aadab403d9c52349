//! Streamable HTTP: a server (hyper on smol, blocking or async) serving both eras on one endpoint, and a
//! client (`ureq`, or smol: see [`crate::smol::http`]). What each exchange means is decided in `talaria_core::http`; this module moves
//! the bytes.

mod body;
mod chan;
mod client;
mod exchange;
mod inflight;
mod one_write;
mod options;
mod processes;
mod record;
mod server;
#[cfg(feature = "tower")]
mod service;
mod session_log;
mod session_store;
mod shared;
#[cfg(all(feature = "smol", feature = "stdio", unix))]
pub(crate) mod smol_client;
mod sse_client;
mod store_pool;
pub use sse_client::HttpTransport;
mod sse_out;
mod streams;
mod traced;

pub use options::{Authorize, HttpServerOptions, VerifyToken};
pub use session_store::SharedSessionStore;
pub use store_pool::{SharedEventStore, StorePool};

/// The largest JSON reply a client reads (the session enforces its own frame limit on what it
/// decodes); a larger one fails its call as a transport error.
pub(crate) const MAX_REPLY: usize = 64 * 1024 * 1024;

/// The most of an unwanted body (a refusal, a drained answer) a client reads; the rest is
/// left unread and the connection closed.
pub(crate) const MAX_DRAIN: usize = 1024 * 1024;
pub use server::{HttpServer, SmolHttpServer};
#[cfg(feature = "tower")]
pub use service::{McpService, ResponseBody};

/// When both attempts of the backwards-compatibility probe fail: the legacy attempt's error,
/// unless it is only the legacy transport missing too (400, 404, 405), in which case the
/// Streamable HTTP refusal, which says more (a modern server's reason), is the one to report.
pub(crate) fn worse_refusal(
    streamable: crate::client::ClientError,
    legacy: crate::client::ClientError,
) -> crate::client::ClientError {
    match legacy {
        crate::client::ClientError::HttpStatus { status: 400 | 404 | 405, .. } => streamable,
        other => other,
    }
}
