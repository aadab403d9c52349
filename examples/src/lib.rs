//! Runnable examples for Talaria. Each binary under `src/bin` is one example.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The README's code blocks, compiled (and the runnable ones run) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

pub mod child;
pub mod conformance;
pub mod conformance_auth;
pub mod everything;
pub mod mounted;

use std::net::{SocketAddr, ToSocketAddrs};

use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};
use talaria::server::Server;

/// Reads a `--runtime` value: `false` for `blocking`, `true` for `smol`.
///
/// # Errors
///
/// A message naming an unknown runtime.
///
/// # Examples
///
/// ```
/// assert_eq!(talaria_examples::parse_runtime("smol"), Ok(true));
/// assert!(talaria_examples::parse_runtime("tokio").is_err());
/// ```
pub fn parse_runtime(value: &str) -> Result<bool, String> {
    match value {
        "blocking" => Ok(false),
        "smol" => Ok(true),
        other => Err(format!("unknown runtime {other:?}")),
    }
}

/// An executor run by `threads` threads (by default one per core), for the smol server's
/// tasks (smol's global executor has one thread) and for whatever should run beside them, such
/// as a Redis connection's.
#[must_use]
pub fn smol_executor(threads: Option<usize>) -> std::sync::Arc<smol::Executor<'static>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    talaria::smol::executor(threads.unwrap_or(cores))
}

/// Serves `server` over Streamable HTTP on `addr` with the smol server, its tasks on `smol`
/// (see [`smol_executor`]), or else with the blocking one, telling `listening` the bound
/// address, until the process ends. `options` makes the server's options, given the executor
/// its requests run on (`smol`, or the blocking server's own: see [`HttpServer::bind_with`]),
/// so that a store's connection can run its task there.
///
/// # Errors
///
/// If the address cannot be bound, or `options` fails.
pub fn serve_http<S: Send + 'static>(
    server: &Server<S>,
    addr: impl ToSocketAddrs,
    options: impl FnOnce(&std::sync::Arc<smol::Executor<'static>>) -> std::io::Result<HttpServerOptions>,
    smol: Option<&std::sync::Arc<smol::Executor<'static>>>,
    listening: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    if let Some(executor) = smol {
        let served = SmolHttpServer::bind_on(executor, server, addr, options(executor)?)?;
        listening(served.local_addr());
        smol::block_on(served.wait());
    } else {
        let served = HttpServer::bind_with(server, addr, options)?;
        listening(served.local_addr());
        served.wait();
    }
    Ok(())
}
