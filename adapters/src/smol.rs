//! The smol flavour: connecting and serving without blocking the executor.
//!
//! stdio and in-memory clients are the executor-neutral [`AsyncClient::stdio`] and
//! [`AsyncClient::memory`] under their old names: a reader thread and a writer thread per
//! connection, futures that only await completions, no smol executor or reactor started.
//! The HTTP clients here (`http`, `sse`, `http_or_sse`) read on async-io sockets with smol
//! tasks, so they run smol's global executor and async-io's reactor thread. Long-running
//! tools run on the server's worker pool, as in the blocking flavour. Handles are the same
//! [`AsyncClient`]s, usable from any executor.

use std::io;

use smol::io::AsyncReadExt;
use talaria_core::server::TransportInfo;

#[cfg(feature = "http")]
pub use crate::http::smol_client::{http, http_or_sse, probe_http, sse};

use crate::client::{AsyncClient, ClientError, ClientOptions, Connecting, Handshake};
use crate::server::{wait_for_running_async, Server, DRAIN_GRACE};
use crate::stdio::{LineSink, StdioCommand};

/// Waits for the handshake without blocking the executor.
pub(crate) async fn handshake(connecting: Connecting, handshake: Handshake) -> Result<AsyncClient, ClientError> {
    connecting.finish(handshake.await).map(|client| client.to_async())
}

/// Starts `command` and connects to it over its stdin/stdout: the same as
/// [`AsyncClient::stdio`], kept under this name. Teardown is as for
/// [`Client::stdio`](crate::client::Client::stdio).
///
/// # Errors
///
/// As [`Client::stdio`](crate::client::Client::stdio).
///
/// # Examples
///
/// ```no_run
/// use talaria::client::ClientOptions;
/// use talaria::stdio::StdioCommand;
///
/// smol::block_on(async {
///     let client = talaria::smol::stdio(StdioCommand::new("everything-server"), ClientOptions::new("me", "1")).await?;
///     let tools = client.list_all_tools().await?;
///     # let _ = tools;
///     Ok::<(), talaria::client::ClientError>(())
/// })?;
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
pub async fn stdio(command: StdioCommand, options: ClientOptions) -> Result<AsyncClient, ClientError> {
    AsyncClient::stdio(command, options).await
}

/// Serves `server` on this process's stdin/stdout until stdin ends, then lets running tools
/// finish, flushes and returns: the same as [`stdio::serve_async`](crate::stdio::serve_async).
///
/// # Errors
///
/// An I/O error starting the connection.
pub async fn serve_stdio<S: Send + 'static>(server: &Server<S>) -> io::Result<()> {
    crate::stdio::serve_async(server).await
}

/// Serves `server` on any async byte stream in and blocking writer out.
///
/// # Errors
///
/// An I/O error starting the connection.
pub async fn serve_streams<S: Send + 'static>(
    server: &Server<S>,
    mut input: impl AsyncReadExt + Unpin,
    output: impl io::Write + Send + 'static,
) -> io::Result<()> {
    let events = server.peer_error_events("stdio");
    let conn = server.open(Box::new(LineSink::new(output)), TransportInfo::new("stdio"), events)?;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match input.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                for (piece, more) in crate::stdio::pieces(&buf[..n]) {
                    conn.with_input_async(more, |served, now| served.endpoint.handle_bytes(now, piece)).await;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    wait_for_running_async(&conn, DRAIN_GRACE).await;
    conn.with(|served, now| served.endpoint.handle_closed(now));
    conn.close_sink();
    // The last answers leave through the writer thread; wait for it without blocking.
    let grace = async {
        smol::Timer::after(DRAIN_GRACE).await;
    };
    smol::future::or(conn.closed(), grace).await;
    Ok(())
}

/// Starts an executor run by `threads` threads of its own (at least one), which live as long
/// as the process: somewhere to spawn a busy server's tasks so that it uses every core
/// ([`SmolHttpServer::bind_on`](crate::http::SmolHttpServer::bind_on)), where smol's global
/// executor runs on one thread unless `SMOL_THREADS` says otherwise.
///
/// # Examples
///
/// ```
/// let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
/// let executor = talaria::smol::executor(cores);
/// assert_eq!(smol::block_on(executor.spawn(async { 1 + 1 })), 2);
/// ```
#[must_use]
pub fn executor(threads: usize) -> std::sync::Arc<smol::Executor<'static>> {
    crate::server::async_tools::executor_on_threads("talaria-smol", threads)
}

/// Connects a new client to `server` in memory, awaiting the handshake.
///
/// # Errors
///
/// As [`memory::connect`](crate::memory::connect).
pub async fn memory<S: Send + 'static>(server: &Server<S>, options: ClientOptions) -> Result<AsyncClient, ClientError> {
    AsyncClient::memory(server, options).await
}
