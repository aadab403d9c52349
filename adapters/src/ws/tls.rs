//! `wss://`: the WebSocket client over TLS (rustls).
//!
//! A TLS stream cannot be split into a reading and a writing half, so here one WebSocket sits
//! behind a mutex: the reader holds it for short timed reads and lets writers in between, and
//! the writer holds it for short timed writes (what did not go stays buffered) and waits for
//! room without it, so a server that stops reading never keeps the reader from reading.

use std::io;
use std::net::TcpStream;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use talaria_core::client::Endpoint;
use talaria_core::session::Route;
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

use super::{connect_tcp, upgrade, SUBPROTOCOL};
use crate::client::{connect, Client, ClientError, ClientOptions, Teardown};
use crate::conn::{Conn, FrameSink, Outgoing};

type TlsSocket = WebSocket<StreamOwned<ClientConnection, TcpStream>>;

/// How long the reader holds the socket waiting for input before letting writers in.
const READ_SLICE: Duration = Duration::from_millis(2);

/// A TLS configuration trusting Mozilla's roots and the operating system's store (the
/// default [`TlsRoots`](crate::tls::TlsRoots)).
///
/// # Examples
///
/// ```
/// let config = talaria::ws::default_tls_config();
/// assert!(config.alpn_protocols.is_empty());
/// ```
#[must_use]
pub fn default_tls_config() -> Arc<ClientConfig> {
    crate::tls::TlsRoots::new().client_config()
}

struct TlsSink {
    socket: Arc<Mutex<TlsSocket>>,
    /// The TCP socket under it, to wait for room on without holding the WebSocket.
    tcp: TcpStream,
}

impl FrameSink for TlsSink {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        let mut frames = Some(frames);
        loop {
            let written = {
                let mut socket = self.socket.lock().unwrap_or_else(PoisonError::into_inner);
                match frames.take() {
                    Some(frames) => super::write_frames(&mut socket, frames),
                    None => super::flush(&mut socket),
                }
            };
            match written {
                // A timed write found the socket full: what did not go is buffered.
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    crate::poll::wait_writable(&self.tcp, Some(Duration::from_millis(100)))?;
                }
                done => return done,
            }
        }
    }

    fn close(&mut self) {
        let mut socket = self.socket.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = socket.close(None);
        let _ = socket.flush();
    }
}

struct TlsTeardown(TcpStream);

impl Teardown for TlsTeardown {
    fn shutdown(&mut self) {
        let _ = self.0.shutdown(std::net::Shutdown::Both);
    }
}

fn read_into(conn: &Conn<Endpoint>, socket: &Mutex<TlsSocket>) {
    loop {
        let message = socket.lock().unwrap_or_else(PoisonError::into_inner).read();
        match message {
            Ok(Message::Text(text)) => {
                conn.with_input(false, |endpoint, now| endpoint.handle_frame(now, Route::Connection, text.as_bytes()));
            }
            Ok(Message::Binary(bytes)) => {
                conn.with_input(false, |endpoint, now| endpoint.handle_frame(now, Route::Connection, &bytes));
            }
            Ok(Message::Close(_)) => break,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    conn.with(|endpoint, now| endpoint.handle_closed(now));
}

impl Client {
    /// Connects to a `wss://` URL with `tls` (see [`default_tls_config`] for the usual roots;
    /// pass your own `rustls::ClientConfig` for a private CA).
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`] if the URL is bad, or TLS, the upgrade or the handshake fails.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    ///
    /// let tls = talaria::ws::default_tls_config();
    /// let client = Client::websocket_tls("wss://mcp.example/ws", &[], tls, ClientOptions::new("me", "1"))?;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn websocket_tls(
        url: &str,
        headers: &[(&str, &str)],
        tls: Arc<ClientConfig>,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let bad = |why: String| ClientError::Connect(format!("{url}: {why}"));
        let mut request = url.into_client_request().map_err(|e| bad(e.to_string()))?;
        if request.uri().scheme_str() != Some("wss") {
            return Err(bad("not a wss:// URL".into()));
        }
        let host = request.uri().host().ok_or_else(|| bad("no host".into()))?.to_owned();
        let port = request.uri().port_u16().unwrap_or(443);
        let request_headers = request.headers_mut();
        request_headers.insert("Sec-WebSocket-Protocol", tungstenite::http::HeaderValue::from_static(SUBPROTOCOL));
        for (name, value) in headers {
            let name = tungstenite::http::HeaderName::try_from(*name).map_err(|e| bad(e.to_string()))?;
            let value = tungstenite::http::HeaderValue::try_from(*value).map_err(|e| bad(e.to_string()))?;
            request_headers.insert(name, value);
        }
        let name = ServerName::try_from(host.clone()).map_err(|e| bad(e.to_string()))?;
        let tcp = connect_tcp(&host, port, options.handshake_timeout())?;
        let teardown = Box::new(TlsTeardown(tcp.try_clone()?));
        let control = tcp.try_clone()?;
        let connection = ClientConnection::new(tls, name).map_err(|e| bad(e.to_string()))?;
        let stream = StreamOwned::new(connection, tcp);
        let (socket, _) = upgrade(request, stream, &options)?;
        // From now on reads and writes are short slices, so each gets the socket in between.
        control.set_read_timeout(Some(READ_SLICE))?;
        control.set_write_timeout(Some(READ_SLICE))?;
        let socket = Arc::new(Mutex::new(socket));
        let reader = Arc::clone(&socket);
        let sink = TlsSink { socket, tcp: control };
        connect(options, Box::new(sink), teardown, move |conn| {
            std::thread::Builder::new().name("talaria-wss-read".into()).spawn(move || read_into(&conn, &reader))?;
            Ok(())
        })
    }
}
