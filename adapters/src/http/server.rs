//! The Streamable HTTP server: hyper (HTTP/1.1) on smol, one task per connection, serving both
//! eras, JSON or SSE replies, resumable streams and the legacy HTTP+SSE transport on one
//! endpoint. [`HttpServer`] runs it on threads of its own (the application writes no async
//! code); [`SmolHttpServer`] runs it on a smol executor. The code path is the same.
//!
//! Limits, all in [`HttpServerOptions`]: the request head's size and field count (431), the
//! body's size whatever its framing (413), the time to send a head and then a body (the
//! connection is closed, or 408), and the connections held at once (503).

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::server::conn::http1;
use smol::io::AsyncWriteExt;
use smol::{Async, Timer};
use smol_hyper::rt::{FuturesIo, SmolTimer};

use super::exchange::{handle, Context, Spawner};
use super::options::HttpServerOptions;
use super::shared::{expire_due, Shared};
use crate::server::Server;

/// The smallest read buffer hyper takes.
const MIN_BUFFER: usize = 8192;

/// What a connection's read buffer holds besides the largest head.
const READ_ROOM: usize = 16 * 1024;

/// hyper's own limit on header fields.
const DEFAULT_MAX_HEADERS: usize = 100;

/// A Streamable HTTP server on threads of its own: `bind` returns once it listens, and it
/// serves until [`shutdown`](Self::shutdown) (or drop). Connections are tasks on a small pool
/// of threads (as many as the machine has cores, 2 to 8), not a thread each.
///
/// # Examples
///
/// ```
/// use talaria::core::server::Router;
/// use talaria::http::{HttpServer, HttpServerOptions};
/// use talaria::server::Server;
///
/// let server = Server::new("http-demo", "1.0", Router::<()>::builder().build());
/// let listening = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default())?;
/// println!("serving http://{}/mcp", listening.local_addr());
/// listening.shutdown();
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct HttpServer {
    listening: Listening,
    /// Closed to stop the threads.
    stop: Option<smol::channel::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer").field("addr", &self.listening.addr).finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Listens on `addr` (with `TCP_NODELAY` on each connection) and serves `server` at the
    /// options' path.
    ///
    /// # Errors
    ///
    /// If the address cannot be bound, or no thread can be started.
    pub fn bind<S: Send + 'static>(
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: HttpServerOptions,
    ) -> io::Result<Self> {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        let executor = Arc::new(smol::Executor::new());
        let (stop, stopped) = smol::channel::bounded::<()>(1);
        let mut threads = Vec::new();
        for n in 0..cores.clamp(2, 8) {
            let (running, stopped) = (Arc::clone(&executor), stopped.clone());
            let thread = std::thread::Builder::new().name(format!("talaria-http-{n}")).spawn(move || {
                let _ = smol::block_on(running.run(stopped.recv()));
            });
            match thread {
                Ok(thread) => threads.push(thread),
                Err(e) if threads.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        let listening = listen(Spawner::Own(Arc::downgrade(&executor)), server, addr, options)?;
        Ok(Self { listening, stop: Some(stop), threads })
    }

    /// The address it listens on.
    #[must_use]
    pub const fn local_addr(&self) -> SocketAddr {
        self.listening.addr
    }

    /// How many legacy sessions are live.
    #[must_use]
    pub fn sessions(&self) -> usize {
        self.listening.sessions()
    }

    /// Blocks while the server runs.
    pub fn wait(mut self) {
        if let Some(accept) = self.listening.accept.take() {
            smol::block_on(accept);
        }
    }

    /// Stops the server: it accepts no more connections, and those still open are closed
    /// (their sessions' streams end as if the clients had gone).
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.listening.stop();
        drop(self.stop.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// The same server as [`HttpServer`], its connections tasks on smol's global executor
/// ([`bind`](Self::bind), as many threads as `SMOL_THREADS` says, one by default) or on an
/// executor of yours ([`bind_on`](Self::bind_on); `talaria::smol::executor` starts one run
/// by every core, which is what a busy server wants).
///
/// # Examples
///
/// ```
/// use talaria::core::server::Router;
/// use talaria::http::{HttpServerOptions, SmolHttpServer};
/// use talaria::server::Server;
///
/// let server = Server::new("http-demo", "1.0", Router::<()>::builder().build());
/// let listening = SmolHttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default())?;
/// println!("serving http://{}/mcp", listening.local_addr());
/// listening.shutdown();
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct SmolHttpServer {
    listening: Listening,
}

impl std::fmt::Debug for SmolHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmolHttpServer").field("addr", &self.listening.addr).finish_non_exhaustive()
    }
}

impl SmolHttpServer {
    /// Listens on `addr` (with `TCP_NODELAY` on each connection) and serves `server` at the
    /// options' path, accepting on smol's global executor.
    ///
    /// # Errors
    ///
    /// If the address cannot be bound.
    pub fn bind<S: Send + 'static>(
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: HttpServerOptions,
    ) -> io::Result<Self> {
        Ok(Self { listening: listen(Spawner::Global, server, addr, options)? })
    }

    /// [`bind`](Self::bind), with the accept loop and every connection a task on `executor`
    /// (whichever threads run it).
    ///
    /// # Errors
    ///
    /// If the address cannot be bound.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::server::Router;
    /// use talaria::http::{HttpServerOptions, SmolHttpServer};
    /// use talaria::server::Server;
    ///
    /// let server = Server::new("http-demo", "1.0", Router::<()>::builder().build());
    /// let executor = std::sync::Arc::new(smol::Executor::new());
    /// let listening = SmolHttpServer::bind_on(&executor, &server, "127.0.0.1:0", HttpServerOptions::default())?;
    /// # listening.shutdown();
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind_on<S: Send + 'static>(
        executor: &Arc<smol::Executor<'static>>,
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: HttpServerOptions,
    ) -> io::Result<Self> {
        Ok(Self { listening: listen(Spawner::On(Arc::clone(executor)), server, addr, options)? })
    }

    /// The address it listens on.
    #[must_use]
    pub const fn local_addr(&self) -> SocketAddr {
        self.listening.addr
    }

    /// How many legacy sessions are live.
    #[must_use]
    pub fn sessions(&self) -> usize {
        self.listening.sessions()
    }

    /// Serves until the task awaiting this is dropped.
    pub async fn wait(mut self) {
        if let Some(accept) = self.listening.accept.take() {
            accept.await;
        }
    }

    /// Stops accepting connections; connections and sessions under way go on until they end.
    pub fn shutdown(mut self) {
        self.listening.stop();
    }
}

/// A listening server: its accept loop and session expiry, as tasks.
struct Listening {
    addr: SocketAddr,
    accept: Option<smol::Task<()>>,
    expiry: Option<smol::Task<()>>,
    sessions: Arc<dyn Fn() -> usize + Send + Sync>,
}

impl Listening {
    fn sessions(&self) -> usize {
        (self.sessions)()
    }

    fn stop(&mut self) {
        drop(self.accept.take());
        drop(self.expiry.take());
    }
}

/// Binds `addr` and starts accepting, each connection served by hyper as a task of `spawner`.
fn listen<S: Send + 'static>(
    spawner: Spawner,
    server: &Server<S>,
    addr: impl ToSocketAddrs,
    options: HttpServerOptions,
) -> io::Result<Listening> {
    let listener = Async::new(TcpListener::bind(addr)?)?;
    let addr = listener.get_ref().local_addr()?;
    let mut http = http1::Builder::new();
    http.timer(SmolTimer::new())
        .header_read_timeout(options.read_timeout)
        .max_header_size(options.max_head)
        // Room for the head and some of what follows it; bodies are read as they come.
        .max_buf_size(options.max_head.saturating_add(READ_ROOM).max(MIN_BUFFER));
    if options.max_headers != DEFAULT_MAX_HEADERS {
        // (hyper keeps the default count's slots on the stack, any other on the heap.)
        http.max_headers(options.max_headers);
    }
    let max_connections = options.max_connections;
    let shared = Arc::new(Shared::new(server, addr, options));
    let accepting = spawner.clone();
    let context = Arc::new(Context { shared: Arc::clone(&shared), spawner });
    let open = Arc::new(AtomicUsize::new(0));
    let spawning = context.spawner.clone();
    let accept = accepting.spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                // Out of descriptors, say: wait a little rather than spin.
                Timer::after(Duration::from_millis(10)).await;
                continue;
            };
            let _ = stream.get_ref().set_nodelay(true);
            if open.fetch_add(1, Ordering::AcqRel) >= max_connections {
                open.fetch_sub(1, Ordering::AcqRel);
                spawning.detach(turn_away(stream));
                continue;
            }
            let counted = Arc::clone(&open);
            let context = Arc::clone(&context);
            let connection = http.serve_connection(
                FuturesIo::new(stream),
                hyper::service::service_fn(move |request| handle(Arc::clone(&context), request, peer)),
            );
            spawning.detach(async move {
                let _ = connection.await;
                counted.fetch_sub(1, Ordering::AcqRel);
            });
        }
    });
    let expiring = Arc::clone(&shared);
    let expiry = accepting.spawn(async move {
        loop {
            Timer::after(expire_due(&expiring)).await;
        }
    });
    let sessions = Arc::new(move || shared.session_count());
    Ok(Listening { addr, accept, expiry, sessions })
}

/// Answers a connection past [`HttpServerOptions::max_connections`] with `503` and closes it.
async fn turn_away(stream: Async<TcpStream>) {
    let answer =
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
    let _ = (&stream).write_all(answer).await;
}
