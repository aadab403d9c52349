//! Streamable HTTP: a server (`tiny_http`, or smol) serving both eras on one endpoint, and a
//! client (`ureq`, or smol: see [`crate::smol::http`]). What each exchange means is decided in `talaria_core::http`; this module moves
//! the bytes.

mod chan;
mod client;
mod inflight;
mod one_write;
mod options;
mod server;
mod shared;
#[cfg(all(feature = "smol", feature = "stdio", unix))]
pub(crate) mod smol_client;
#[cfg(feature = "smol")]
mod smol_server;
mod sse_client;
mod sse_out;
mod streams;
mod traced;
#[cfg(feature = "smol")]
mod watchdog;

pub use options::{Authorize, HttpServerOptions, SharedSessionStore, VerifyToken};
pub use server::HttpServer;
#[cfg(feature = "smol")]
pub use smol_server::SmolHttpServer;
pub use streams::SharedEventStore;
