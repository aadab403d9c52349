//! The Streamable HTTP server: hyper on smol, one task per connection, serving both eras, JSON
//! or SSE replies, resumable streams and the legacy HTTP+SSE transport on one endpoint.
//! [`HttpServer`] runs it on threads of its own (the application writes no async code);
//! [`SmolHttpServer`] runs it on a smol executor. The code path is the same.
//!
//! It speaks HTTP/1.1, and HTTP/2 where TLS negotiates it: with
//! [`HttpServerOptions::tls`], a connection whose ALPN settles on `h2` is served by hyper's
//! HTTP/2 connection (each request a stream; SSE replies stream the same), any other by
//! HTTP/1.1. Plain connections are HTTP/1.1 only (no `h2c`).
//!
//! Limits, all in [`HttpServerOptions`]: the request head's size and field count (431), the
//! body's size whatever its framing (413), the time to send a head and then a body (the
//! connection is closed, or 408), and the connections held at once, in all and from one peer
//! address (503). Over HTTP/2 the same, with `max_head` as the header list size, at most 100
//! streams at once on one connection, and a connection idle for `read_timeout` shut down.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::server::conn::http1;
use smol::io::AsyncWriteExt;
use smol::{Async, Timer};
use smol_hyper::rt::{FuturesIo, SmolTimer};

use super::exchange::{handle, Context, Spawner};
use super::options::HttpServerOptions;
use super::processes::listen_to_relay;
use super::shared::{expire_due, Shared};
use crate::server::Server;

#[cfg(feature = "tls")]
mod h2;

/// Serves one connection's requests with hyper's HTTP/1.1 until it closes.
async fn serve<S, T>(http: &http1::Builder, stream: T, context: Arc<Context<S>>, peer: SocketAddr)
where
    S: Send + 'static,
    T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| handle(Arc::clone(&context), request, Some(peer)));
    let _ = http.serve_connection(FuturesIo::new(stream), service).await;
}

/// How many connections the kernel queues before they are accepted.
const ACCEPT_BACKLOG: i32 = 1024;

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
/// It speaks HTTP/1.1, and, with [`HttpServerOptions::tls`], HTTP/2 to clients whose TLS
/// handshake negotiates `h2` by ALPN ([`crate::tls::server_config`] offers `h2` and
/// `http/1.1`); plain connections are HTTP/1.1 only.
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
        Self::bind_with(server, addr, |_| Ok(options))
    }

    /// [`bind`](Self::bind), with the options made once the server's executor runs, from that
    /// executor: give it to a store that runs tasks of its own (`talaria-redis`'s
    /// `AsyncRedisSessionStore::connect_on`), and its round trips are handled on the threads
    /// that serve the requests rather than handed to smol's global executor and back.
    ///
    /// # Errors
    ///
    /// As [`bind`](Self::bind), or the error `options` returns (the server's threads are
    /// stopped then).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::core::server::Router;
    /// use talaria::http::{HttpServer, HttpServerOptions};
    /// use talaria::server::Server;
    ///
    /// let server = Server::new("http-demo", "1.0", Router::<()>::builder().build());
    /// let listening = HttpServer::bind_with(&server, "127.0.0.1:0", |executor| {
    ///     // With talaria-redis: `smol::block_on(AsyncRedisSessionStore::connect_on(
    ///     // executor.clone(), url, RedisOptions::default()))`, then `.session_store(...)`.
    ///     let ran = smol::block_on(executor.spawn(async { 1 + 1 }));
    ///     assert_eq!(ran, 2);
    ///     Ok(HttpServerOptions::default())
    /// })?;
    /// listening.shutdown();
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind_with<S: Send + 'static>(
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: impl FnOnce(&Arc<smol::Executor<'static>>) -> io::Result<HttpServerOptions>,
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
        let listening = options(&executor)
            .and_then(|options| listen(Spawner::Own(Arc::downgrade(&executor)), server, addr, options));
        match listening {
            Ok(listening) => Ok(Self { listening, stop: Some(stop), threads }),
            Err(e) => {
                // Closing the channel stops the threads.
                drop(stop);
                for thread in threads {
                    let _ = thread.join();
                }
                Err(e)
            }
        }
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

/// The same server as [`HttpServer`] (HTTP/1.1, and HTTP/2 where TLS negotiates `h2`), its
/// connections tasks on smol's global executor
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
    let listener = TcpListener::bind(addr)?;
    // A deeper accept queue than the standard library's 128, for bursts of new connections
    // (listening again only changes the backlog; the kernel caps it at its somaxconn).
    let _ = rustix::net::listen(&listener, ACCEPT_BACKLOG);
    let listener = Async::new(listener)?;
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
    #[cfg(feature = "tls")]
    let http2 = Arc::new(h2::Http2::new(spawner.clone(), &options));
    let http = Arc::new(http);
    let admission = Arc::new(Admission::new(options.max_connections, options.max_connections_per_peer));
    #[cfg(feature = "tls")]
    let tls = options.tls.clone().map(futures_rustls::TlsAcceptor::from);
    #[cfg(feature = "tls")]
    let handshake_timeout = options.read_timeout;
    let shared = Arc::new(Shared::new(server, addr, options));
    listen_to_relay(&shared, &spawner);
    let accepting = spawner.clone();
    let context = Arc::new(Context { shared: Arc::clone(&shared), spawner });
    let spawning = context.spawner.clone();
    let accept = accepting.spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                // Out of descriptors, say: wait a little rather than spin.
                Timer::after(Duration::from_millis(10)).await;
                continue;
            };
            let _ = stream.get_ref().set_nodelay(true);
            let Some(slot) = Admission::enter(&admission, peer.ip()) else {
                spawning.detach(turn_away(stream));
                continue;
            };
            let context = Arc::clone(&context);
            #[cfg(feature = "tls")]
            if let Some(acceptor) = &tls {
                let (http, http2, acceptor) = (Arc::clone(&http), Arc::clone(&http2), acceptor.clone());
                spawning.detach(async move {
                    let handshake = smol::future::or(async { acceptor.accept(stream).await.ok() }, async {
                        Timer::after(handshake_timeout).await;
                        None
                    });
                    if let Some(stream) = handshake.await {
                        // ALPN's choice: `h2`, or HTTP/1.1 (`http/1.1`, or none offered).
                        if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                            http2.serve(stream, context, peer).await;
                        } else {
                            serve(&http, stream, context, peer).await;
                        }
                    }
                    drop(slot);
                });
                continue;
            }
            let http = Arc::clone(&http);
            spawning.detach(async move {
                serve(&http, stream, context, peer).await;
                drop(slot);
            });
        }
    });
    let expiring = Arc::clone(&shared);
    // With stores that may be remote, expiry (which drops logs) runs off the executor's threads.
    let remote = shared.options.session_store.is_some() || shared.options.event_store.is_some();
    let expiry = accepting.spawn(async move {
        loop {
            let pause = if remote {
                let expiring = Arc::clone(&expiring);
                smol::unblock(move || expire_due(&expiring)).await
            } else {
                expire_due(&expiring)
            };
            Timer::after(pause).await;
        }
    });
    let sessions = Arc::new(move || shared.session_count());
    Ok(Listening { addr, accept, expiry, sessions })
}

/// The connections held, in all and by each peer address.
struct Admission {
    max: usize,
    per_peer: usize,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    all: usize,
    by_peer: HashMap<IpAddr, usize>,
}

impl Admission {
    fn new(max: usize, per_peer: usize) -> Self {
        Self { max, per_peer, held: Mutex::new(Held::default()) }
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for a connection from `peer`, if there is room, held until the slot is dropped
    /// (however the connection's task ends).
    fn enter(admission: &Arc<Self>, peer: IpAddr) -> Option<Slot> {
        let mut held = admission.held();
        let of_peer = held.by_peer.get(&peer).copied().unwrap_or(0);
        if held.all >= admission.max || of_peer >= admission.per_peer {
            return None;
        }
        held.all += 1;
        held.by_peer.insert(peer, of_peer + 1);
        Some(Slot { admission: Arc::clone(admission), peer })
    }
}

/// One admitted connection.
struct Slot {
    admission: Arc<Admission>,
    peer: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.admission.held();
        held.all = held.all.saturating_sub(1);
        if let Some(count) = held.by_peer.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                held.by_peer.remove(&self.peer);
            }
        }
    }
}

/// Answers a connection past [`HttpServerOptions::max_connections`] (or the peer's share,
/// [`HttpServerOptions::max_connections_per_peer`]) with `503` and closes it.
async fn turn_away(stream: Async<TcpStream>) {
    let answer =
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
    let _ = (&stream).write_all(answer).await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use talaria_core::server::Router;

    fn server() -> Server<()> {
        Server::new("bind-with", "1.0", Router::<()>::builder().build())
    }

    /// What the options are made with is the executor the server's own threads run.
    #[test]
    fn the_options_are_made_with_the_executor_that_serves() {
        let mut ran_on = None;
        let listening = HttpServer::bind_with(&server(), "127.0.0.1:0", |executor| {
            let task = executor.spawn(async { std::thread::current().name().map(str::to_owned) });
            ran_on = smol::block_on(task);
            Ok(HttpServerOptions::default())
        })
        .unwrap();
        assert!(ran_on.as_deref().is_some_and(|name| name.starts_with("talaria-http-")), "{ran_on:?}");
        assert_ne!(listening.local_addr().port(), 0);
        listening.shutdown();
    }

    /// Options that cannot be made fail the bind, and the threads started for it end: only the
    /// caller's handle on the executor is left.
    #[test]
    fn options_that_fail_stop_the_threads() {
        let mut kept = None;
        let refused = HttpServer::bind_with(&server(), "127.0.0.1:0", |executor| {
            kept = Some(Arc::clone(executor));
            Err(io::Error::other("no store"))
        });
        assert_eq!(refused.unwrap_err().to_string(), "no store");
        let executor = kept.expect("the options were asked for");
        assert_eq!(Arc::strong_count(&executor), 1, "a serving thread still holds the executor");
    }
}
