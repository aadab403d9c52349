//! The WebSocket server: one session per connection, each served on its own thread.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use talaria_core::http::exchange::EndpointConfig;
use talaria_core::server::{Headers, TransportInfo};
use talaria_core::session::Route;
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::http::{HeaderValue, StatusCode};
use tungstenite::protocol::Role;

use super::{config, read_loop, ReadHalf, WsSink, SUBPROTOCOL};
use crate::server::{wait_for_running, Server, DRAIN_GRACE};

/// The most connections served at once.
const MAX_CONNECTIONS: usize = 4096;

/// How the WebSocket server accepts connections.
///
/// # Examples
///
/// ```
/// use talaria::ws::WsServerOptions;
///
/// let options = WsServerOptions::default()
///     .path("/mcp-ws")
///     .allow_origin("https://app.example")
///     .allow_host("mcp.example")
///     .handshake_timeout(std::time::Duration::from_secs(5));
/// assert_eq!(options.path, "/mcp-ws");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
#[must_use]
pub struct WsServerOptions {
    /// The path upgrades are accepted on (default `/ws`).
    pub path: String,
    /// Origins allowed besides localhost ones; requests with any other `Origin` get 403.
    /// Requests without an `Origin` (not from a browser) are allowed.
    pub allowed_origins: Vec<String>,
    /// The `Host` values accepted (names, with or without a port), against DNS rebinding; 403
    /// for others. `None` (the default): localhost names only when bound to a loopback
    /// address, any host otherwise (a server behind a proxy).
    pub allowed_hosts: Option<Vec<String>>,
    /// How long a client may take to send its whole upgrade request (default 10 s); a slower
    /// one is disconnected, so half-sent handshakes cannot hold connections.
    pub handshake_timeout: Duration,
}

impl Default for WsServerOptions {
    fn default() -> Self {
        Self {
            path: "/ws".into(),
            allowed_origins: Vec::new(),
            allowed_hosts: None,
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

impl WsServerOptions {
    /// Accepts upgrades on `path`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Allows browsers from `origin` (e.g. `https://app.example`).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Accepts `Host: host` too (besides localhost names on a loopback address).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        let host = host.into();
        match &mut self.allowed_hosts {
            Some(hosts) => hosts.push(host),
            None => {
                let localhost = EndpointConfig::default().localhost_only(&[]).allowed_hosts.unwrap_or_default();
                self.allowed_hosts = Some(localhost.into_iter().chain([host]).collect());
            }
        }
        self
    }

    /// How long a client may take to send its upgrade request.
    pub const fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// The Host and Origin rules, as the HTTP endpoint applies them (`talaria_core::http`),
    /// for a server bound to a loopback address or not.
    fn checks(&self, loopback: bool) -> EndpointConfig {
        let mut checks = EndpointConfig::default();
        checks.allowed_origins.clone_from(&self.allowed_origins);
        checks.allowed_hosts.clone_from(&self.allowed_hosts);
        if loopback && checks.allowed_hosts.is_none() {
            checks = checks.localhost_only(&[]);
        }
        checks
    }
}

/// A WebSocket server accepting connections on a background thread.
///
/// # Examples
///
/// ```
/// use talaria::client::{Client, ClientOptions};
/// use talaria::core::server::Router;
/// use talaria::server::Server;
/// use talaria::ws::{WsServer, WsServerOptions};
///
/// let server = Server::new("ws-demo", "1.0", Router::<()>::builder().build());
/// let listening = WsServer::bind(&server, "127.0.0.1:0", WsServerOptions::default())?;
/// let url = format!("ws://{}/ws", listening.local_addr());
/// let client = Client::websocket(&url, &[], ClientOptions::new("me", "1"))?;
/// assert_eq!(client.server_info().name, "ws-demo");
/// listening.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct WsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl WsServer {
    /// Listens on `addr` and serves `server` to every connection.
    ///
    /// # Errors
    ///
    /// If the address cannot be bound.
    pub fn bind<S: Send + 'static>(
        server: &Server<S>,
        addr: impl ToSocketAddrs,
        options: WsServerOptions,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let checks = options.checks(addr.ip().is_loopback());
        let (server, stopping, options) = (server.clone(), Arc::clone(&stop), Arc::new((options, checks)));
        let accept = std::thread::Builder::new().name("talaria-ws-accept".into()).spawn(move || {
            let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            for stream in listener.incoming() {
                if stopping.load(Ordering::Acquire) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                // One thread per connection, up to a cap: past it new connections are closed.
                if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                    open.fetch_sub(1, Ordering::AcqRel);
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    continue;
                }
                let (server, options, counted) = (server.clone(), Arc::clone(&options), Arc::clone(&open));
                let spawned = std::thread::Builder::new().name("talaria-ws-conn".into()).spawn(move || {
                    serve_connection(&server, &stream, &options);
                    counted.fetch_sub(1, Ordering::AcqRel);
                });
                if spawned.is_err() {
                    open.fetch_sub(1, Ordering::AcqRel);
                }
            }
        })?;
        Ok(Self { addr, stop, accept: Some(accept) })
    }

    /// The address it listens on (the port chosen when bound to port 0).
    #[must_use]
    pub const fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Blocks until the server stops accepting (it never does unless shut down elsewhere).
    pub fn wait(mut self) {
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }

    /// Stops accepting new connections; open ones go on until their clients leave.
    pub fn shutdown(mut self) {
        self.stop_accepting();
    }

    fn stop_accepting(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

impl Drop for WsServer {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.stop_accepting();
        }
    }
}

fn reject(status: StatusCode, why: &str) -> ErrorResponse {
    let mut response = ErrorResponse::new(Some(why.to_owned()));
    *response.status_mut() = status;
    response
}

fn serve_connection<S: Send + 'static>(
    server: &Server<S>,
    stream: &TcpStream,
    (options, checks): &(WsServerOptions, EndpointConfig),
) {
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().map(|a| a.to_string()).ok();
    let Ok(read_stream) = stream.try_clone() else { return };
    let writes = Arc::new(AtomicBool::new(true));
    // The whole upgrade request must arrive within the handshake timeout: each read waits at
    // most that long (the socket's read timeout), and none starts past the deadline.
    let deadline = Instant::now() + options.handshake_timeout;
    let half = ReadHalf { stream: read_stream, writes: Arc::clone(&writes), deadline: Some(deadline) };
    let headers = Arc::new(Mutex::new(Headers::new()));
    let seen = Arc::clone(&headers);
    // tungstenite's callback type fixes the error type.
    #[allow(clippy::result_large_err)]
    let check = move |request: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
        if request.uri().path() != options.path {
            return Err(reject(StatusCode::NOT_FOUND, "no MCP endpoint here"));
        }
        let host = request.headers().get("Host").and_then(|h| h.to_str().ok());
        if !host.is_some_and(|host| checks.host_allowed(host)) {
            return Err(reject(StatusCode::FORBIDDEN, "host not allowed"));
        }
        if let Some(origin) = request.headers().get("Origin").and_then(|o| o.to_str().ok()) {
            if !checks.origin_allowed(origin) {
                return Err(reject(StatusCode::FORBIDDEN, "origin not allowed"));
            }
        }
        let offered = request.headers().get_all("Sec-WebSocket-Protocol");
        if offered.iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(|p| p.trim() == SUBPROTOCOL) {
            response.headers_mut().insert("Sec-WebSocket-Protocol", HeaderValue::from_static(SUBPROTOCOL));
        }
        let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
        for (name, value) in request.headers() {
            seen.push(name.as_str(), &String::from_utf8_lossy(value.as_bytes()));
        }
        Ok(response)
    };
    if stream.set_read_timeout(Some(options.handshake_timeout.max(Duration::from_millis(1)))).is_err() {
        return;
    }
    let Ok(mut reader) = tungstenite::accept_hdr_with_config(half, check, Some(config())) else { return };
    // Upgraded: from now on the connection reads without a deadline.
    reader.get_mut().deadline = None;
    if stream.set_read_timeout(None).is_err() {
        return;
    }
    writes.store(false, Ordering::Release);
    let Ok(sink) = WsSink::new(stream, Role::Server) else { return };
    let mut info = TransportInfo::new("websocket");
    info.remote_addr = peer;
    info.headers = std::mem::take(&mut *headers.lock().unwrap_or_else(PoisonError::into_inner));
    let events = server.peer_error_events("websocket");
    let Ok(conn) = server.open(Box::new(sink), info, events) else { return };
    read_loop(&conn, &mut reader, |served, now, frame| served.endpoint.handle_frame(now, Route::Connection, frame));
    // The client is done sending: let running tools answer and the writer send what is owed
    // (and the close frame) before the socket goes, unless the client stopped reading.
    wait_for_running(&conn, DRAIN_GRACE);
    conn.with(|served, now| served.endpoint.handle_closed(now));
    conn.close_sink();
    conn.wait_closed(DRAIN_GRACE);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}
