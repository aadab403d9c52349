//! Serving over this process's stdin/stdout.

use std::io::{self, Read, Write};

use talaria_core::server::TransportInfo;

use super::LineSink;
use crate::server::{wait_for_running, Server, DRAIN_GRACE};

/// Serves `server` on this process's stdin/stdout until stdin ends, then lets running tools
/// finish (up to a grace period), flushes their answers and returns. Only protocol messages
/// go to stdout; write diagnostics to stderr.
///
/// # Errors
///
/// An I/O error starting the connection.
///
/// # Examples
///
/// ```no_run
/// use talaria::core::server::Router;
/// use talaria::server::Server;
///
/// let server = Server::new("quiet", "1.0", Router::<()>::builder().build());
/// talaria::stdio::serve(&server)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn serve<S: Send + 'static>(server: &Server<S>) -> io::Result<()> {
    serve_on(server, io::stdin().lock(), stdout_sink()?)
}

/// This process's stdout as a sink: its file descriptor written directly (std's `Stdout`
/// buffers lines, which would hide whether the pipe took them), by the thread that produced a
/// frame while the pipe has room.
#[cfg(unix)]
fn stdout_sink() -> io::Result<LineSink<std::fs::File>> {
    use std::os::fd::AsFd;
    let stdout = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    Ok(LineSink::shared_pipe(stdout))
}

#[cfg(not(unix))]
fn stdout_sink() -> io::Result<LineSink<io::Stdout>> {
    Ok(LineSink::new(io::stdout()))
}

/// [`serve`] for async code, under any executor: serving runs on a thread of its own and the
/// future resolves when stdin ends and the last answers are written.
///
/// # Errors
///
/// An I/O error starting the connection (or the thread).
///
/// # Examples
///
/// ```no_run
/// use talaria::core::server::Router;
/// use talaria::server::Server;
///
/// let server = Server::new("quiet", "1.0", Router::<()>::builder().build());
/// smol::block_on(talaria::stdio::serve_async(&server))?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn serve_async<S: Send + 'static>(server: &Server<S>) -> impl std::future::Future<Output = io::Result<()>> + Send {
    let server = server.clone();
    let (tx, rx) = crate::oneshot::channel();
    let spawned = std::thread::Builder::new().name("talaria-stdio-serve".into()).spawn(move || tx.send(serve(&server)));
    async move {
        spawned?;
        rx.await.unwrap_or_else(|| Err(io::Error::other("the serving thread ended without an answer")))
    }
}

/// Serves `server` on any byte streams: newline-delimited JSON in from `input`, out to
/// `output`. Returns when `input` ends, after running tools finish.
///
/// # Errors
///
/// An I/O error starting the connection.
pub fn serve_streams<S: Send + 'static, R: Read, W: Write + Send + 'static>(
    server: &Server<S>,
    input: R,
    output: W,
) -> io::Result<()> {
    serve_on(server, input, LineSink::new(output))
}

/// Serves `server` from `input` into `sink` until `input` ends (see [`serve_streams`]).
fn serve_on<S: Send + 'static, R: Read, W: Write + Send + 'static>(
    server: &Server<S>,
    mut input: R,
    sink: LineSink<W>,
) -> io::Result<()> {
    let events = server.peer_error_events("stdio");
    let conn = server.open(Box::new(sink), TransportInfo::new("stdio"), events)?;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                for (piece, more) in super::pieces(&buf[..n]) {
                    conn.with_input(more, |served, now| served.endpoint.handle_bytes(now, piece));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    wait_for_running(&conn, DRAIN_GRACE);
    conn.with(|served, now| served.endpoint.handle_closed(now));
    conn.close_sink();
    // The writer is a thread of its own: let it deliver the last answers before returning
    // (the caller may exit the process next), unless the client stopped reading.
    conn.wait_closed(DRAIN_GRACE);
    Ok(())
}
