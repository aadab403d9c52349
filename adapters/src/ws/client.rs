//! The WebSocket client.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use talaria_core::client::Endpoint;
use talaria_core::session::Route;
use tungstenite::client::IntoClientRequest;
use tungstenite::http::HeaderValue;
use tungstenite::protocol::Role;
use tungstenite::WebSocket;

use super::{connect_tcp, read_loop, upgrade, ReadHalf, WsSink, SUBPROTOCOL};
use crate::client::{connect, Client, ClientError, ClientOptions, Teardown};
use crate::conn::Conn;

/// Shuts the socket when the client closes.
struct SocketTeardown(TcpStream);

impl Teardown for SocketTeardown {
    fn shutdown(&mut self) {
        let _ = self.0.shutdown(std::net::Shutdown::Both);
    }
}

impl Client {
    /// Connects to the MCP server at WebSocket `url` (`ws://host:port/path`) with subprotocol
    /// `mcp`, sending `headers` (e.g. `Authorization`) with the upgrade request.
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`] if the URL is bad, the upgrade fails or the handshake does.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    ///
    /// let client = Client::websocket("ws://127.0.0.1:8080/ws", &[("Authorization", "Bearer t0k3n")], ClientOptions::new("me", "1"))?;
    /// client.list_all_tools()?;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn websocket(url: &str, headers: &[(&str, &str)], options: ClientOptions) -> Result<Self, ClientError> {
        let bad = |why: String| ClientError::Connect(format!("{url}: {why}"));
        let mut request = url.into_client_request().map_err(|e| bad(e.to_string()))?;
        #[cfg(feature = "tls")]
        if request.uri().scheme_str() == Some("wss") {
            let tls = options.tls.client_config();
            return Self::websocket_tls(url, headers, tls, options);
        }
        if request.uri().scheme_str() != Some("ws") {
            return Err(bad("only ws:// URLs are supported in this build (wss:// needs the `tls` feature)".into()));
        }
        let host = request.uri().host().ok_or_else(|| bad("no host".into()))?.to_owned();
        let port = request.uri().port_u16().unwrap_or(80);
        let request_headers = request.headers_mut();
        request_headers.insert("Sec-WebSocket-Protocol", HeaderValue::from_static(SUBPROTOCOL));
        for (name, value) in headers {
            let name = tungstenite::http::HeaderName::try_from(*name).map_err(|e| bad(e.to_string()))?;
            let value = HeaderValue::try_from(*value).map_err(|e| bad(e.to_string()))?;
            request_headers.insert(name, value);
        }
        let stream = connect_tcp(&host, port, options.handshake_timeout())?;
        let writes = Arc::new(AtomicBool::new(true));
        let half = ReadHalf { stream: stream.try_clone()?, writes: Arc::clone(&writes), deadline: None };
        let (reader, response) = upgrade(request, half, &options)?;
        stream.set_read_timeout(None)?;
        writes.store(false, Ordering::Release);
        let protocol = response.headers().get("Sec-WebSocket-Protocol").and_then(|v| v.to_str().ok());
        if protocol.is_some_and(|p| p != SUBPROTOCOL) {
            return Err(bad(format!("server chose subprotocol {protocol:?}")));
        }
        let sink = Box::new(WsSink::new(&stream, Role::Client)?);
        let teardown = Box::new(SocketTeardown(stream.try_clone()?));
        connect(options, sink, teardown, move |conn| {
            std::thread::Builder::new().name("talaria-ws-read".into()).spawn(move || read_into(&conn, reader))?;
            Ok(())
        })
    }
}

fn read_into(conn: &Conn<Endpoint>, mut reader: WebSocket<ReadHalf>) {
    read_loop(conn, &mut reader, |endpoint, now, frame| endpoint.handle_frame(now, Route::Connection, frame));
    conn.with(|endpoint, now| endpoint.handle_closed(now));
}
