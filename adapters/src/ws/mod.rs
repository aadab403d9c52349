//! WebSocket (tungstenite): one JSON-RPC message per text frame, subprotocol `mcp`.
//!
//! After the HTTP upgrade each side keeps two halves of one socket: the reader's WebSocket
//! (which kept whatever the handshake buffered) never writes (its automatic pong and close
//! replies are discarded; the reader sends them through the writer instead), and the writer's
//! never reads. So reading and writing never wait for each other.

mod client;
mod server;
#[cfg(feature = "tls")]
mod tls;

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

pub use server::{WsServer, WsServerOptions};
#[cfg(feature = "tls")]
pub use tls::default_tls_config;

use crate::client::{ClientError, TraceEvent};
use crate::conn::{FrameSink, Outgoing};

/// The subprotocol MCP speaks over WebSocket.
pub const SUBPROTOCOL: &str = "mcp";

/// The largest message accepted (the core's frame limit).
const MAX_MESSAGE: usize = talaria_core::codec::DEFAULT_MAX_FRAME_LEN;

/// Runs the upgrade handshake over `stream`, tracing both heads if `options` trace.
fn upgrade<S: Read + Write>(
    request: tungstenite::handshake::client::Request,
    stream: S,
    options: &crate::client::ClientOptions,
) -> Result<(WebSocket<S>, tungstenite::handshake::client::Response), ClientError> {
    let url = request.uri().to_string();
    let trace = options.trace.as_ref();
    if let Some(trace) = trace {
        let headers = header_pairs(request.headers());
        trace(&TraceEvent::HttpRequest { method: request.method().as_str(), url: &url, headers: &headers });
    }
    let (socket, response) = match tungstenite::client::client_with_config(request, stream, Some(config())) {
        Ok(upgraded) => upgraded,
        // The server answered the upgrade with an HTTP status (401 and 403: the credentials).
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(refused))) => {
            if let Some(trace) = trace {
                let headers = header_pairs(refused.headers());
                trace(&TraceEvent::HttpResponse { status: refused.status().as_u16(), headers: &headers });
            }
            let www_authenticate =
                refused.headers().get("WWW-Authenticate").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let detail = refused.body().as_ref().map(|b| String::from_utf8_lossy(b).trim().to_owned());
            return Err(ClientError::HttpStatus {
                url,
                status: refused.status().as_u16(),
                www_authenticate,
                detail: detail.filter(|d| !d.is_empty()),
            });
        }
        // The socket's read timeout (the connect timeout) ran out before the server answered.
        Err(tungstenite::HandshakeError::Interrupted(_)) => {
            return Err(ClientError::HandshakeTimedOut { after: options.handshake_timeout() });
        }
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Io(e)))
            if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) =>
        {
            return Err(ClientError::HandshakeTimedOut { after: options.handshake_timeout() });
        }
        Err(e) => return Err(ClientError::Connect(format!("{url}: {e}"))),
    };
    if let Some(trace) = trace {
        let headers = header_pairs(response.headers());
        trace(&TraceEvent::HttpResponse { status: response.status().as_u16(), headers: &headers });
    }
    Ok((socket, response))
}

/// Opens a TCP connection to `host:port`, trying each address for at most `timeout`, with
/// reads bounded by `timeout` too until the caller lifts it after the handshake: a server that
/// accepts and never answers cannot hold the connect for ever.
fn connect_tcp(host: &str, port: u16, timeout: std::time::Duration) -> io::Result<TcpStream> {
    use std::net::ToSocketAddrs;
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"));
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(timeout))?;
                return Ok(stream);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// A head's headers as name/value pairs, for a trace.
fn header_pairs(headers: &tungstenite::http::HeaderMap) -> Vec<(String, String)> {
    crate::client::header_pairs(headers.iter().map(|(name, value)| (name.as_str(), value.as_bytes())))
}

fn config() -> WebSocketConfig {
    WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE))
}

/// The reading half's stream: reads the socket, writes only until the handshake is done, and
/// starts no read past `deadline` (a server's handshake timeout).
struct ReadHalf {
    stream: TcpStream,
    writes: Arc<AtomicBool>,
    deadline: Option<std::time::Instant>,
}

impl Read for ReadHalf {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.deadline.is_some_and(|deadline| std::time::Instant::now() > deadline) {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the handshake took too long"));
        }
        self.stream.read(buf)
    }
}

impl Write for ReadHalf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.writes.load(Ordering::Acquire) {
            self.stream.write(buf)
        } else {
            Ok(buf.len())
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.writes.load(Ordering::Acquire) {
            self.stream.flush()
        } else {
            Ok(())
        }
    }
}

/// The writing half's stream: never read from. While `dont_wait` is set a write takes what
/// the socket buffer has room for and says `WouldBlock` for the rest (tungstenite keeps it).
struct WriteHalf {
    stream: TcpStream,
    dont_wait: bool,
}

impl Read for WriteHalf {
    fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        Ok(0)
    }
}

impl Write for WriteHalf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.dont_wait {
            use rustix::net::{send, SendFlags};
            // Rust programs ignore SIGPIPE already; where the flag exists, ask for no signal too.
            #[cfg(any(target_os = "linux", target_os = "android"))]
            let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
            #[cfg(not(any(target_os = "linux", target_os = "android")))]
            let flags = SendFlags::DONTWAIT;
            return send(&self.stream, buf, flags).map_err(io::Error::from);
        }
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// Sends frames as text messages: a producing thread writes what the socket takes at once,
/// the writer thread the rest.
struct WsSink {
    socket: Option<WebSocket<WriteHalf>>,
    /// Frames a try did not get to, once the socket was full: the next `send` writes them.
    kept: Vec<Outgoing>,
}

impl WsSink {
    fn new(stream: &TcpStream, role: Role) -> io::Result<Self> {
        let writer = WriteHalf { stream: stream.try_clone()?, dont_wait: false };
        Ok(Self { socket: Some(WebSocket::from_raw_socket(writer, role, Some(config()))), kept: Vec::new() })
    }
}

impl FrameSink for WsSink {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        let Some(socket) = &mut self.socket else { return Err(io::ErrorKind::BrokenPipe.into()) };
        socket.get_mut().dont_wait = false;
        let mut all = std::mem::take(&mut self.kept);
        all.extend(frames);
        write_frames(socket, all)
    }

    fn tries(&self) -> bool {
        true
    }

    fn try_send(&mut self, frames: Vec<Outgoing>) -> io::Result<bool> {
        let Some(socket) = &mut self.socket else { return Err(io::ErrorKind::BrokenPipe.into()) };
        socket.get_mut().dont_wait = true;
        let mut frames = frames.into_iter();
        let mut sent = Ok(true);
        for frame in frames.by_ref() {
            match write_message(socket, frame) {
                Ok(()) => {}
                // Buffered by tungstenite (its next flush sends it); the rest waits here, so
                // a full socket is not offered every remaining frame in turn.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    sent = Ok(false);
                    break;
                }
                Err(e) => {
                    sent = Err(e);
                    break;
                }
            }
        }
        self.kept.extend(frames);
        if matches!(sent, Ok(true)) {
            sent = match flush(socket) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
                Err(e) => Err(e),
            };
        }
        socket.get_mut().dont_wait = false;
        sent
    }

    fn close(&mut self) {
        if let Some(mut socket) = self.socket.take() {
            let _ = socket.close(None);
            let _ = socket.flush();
            let _ = socket.get_ref().stream.shutdown(std::net::Shutdown::Write);
        }
    }
}

/// Writes `frames` as text messages (and pongs) with one flush at the end. A `WouldBlock`
/// from a socket that does not wait is passed on as such, what was not sent kept buffered.
fn write_frames<S: Read + Write>(socket: &mut WebSocket<S>, frames: Vec<Outgoing>) -> io::Result<()> {
    let mut blocked = false;
    for frame in frames {
        match write_message(socket, frame) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => blocked = true,
            Err(e) => return Err(e),
        }
    }
    flush(socket)?;
    if blocked {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    Ok(())
}

/// Queues one frame in the socket's buffer (which tungstenite writes out once it grows past
/// its write buffer size). `WouldBlock`: buffered, not all written.
fn write_message<S: Read + Write>(socket: &mut WebSocket<S>, frame: Outgoing) -> io::Result<()> {
    let message = match frame {
        Outgoing::Frame(_, payload, _) => {
            Message::text(String::from_utf8(payload).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?)
        }
        Outgoing::Pong(data) => Message::Pong(data.into()),
        Outgoing::StreamDone(_) | Outgoing::StreamDisconnect(_) => return Ok(()),
    };
    socket.write(message).map_err(ws_error)
}

/// Writes out what the socket's buffer holds. `WouldBlock`: part of it is still there.
fn flush<S: Read + Write>(socket: &mut WebSocket<S>) -> io::Result<()> {
    socket.flush().map_err(ws_error)
}

/// A tungstenite error as an I/O error, keeping `WouldBlock` recognisable.
fn ws_error(error: tungstenite::Error) -> io::Error {
    match error {
        tungstenite::Error::Io(e) => e,
        other => io::Error::other(other),
    }
}

/// Whether more bytes already wait on the socket (so what the reader produced can wait for
/// the rest of the burst).
fn more_pending(stream: &TcpStream) -> bool {
    use rustix::net::{recv, RecvFlags};
    let mut probe = [0u8; 1];
    recv(stream, &mut probe, RecvFlags::PEEK | RecvFlags::DONTWAIT).is_ok_and(|(got, _)| got > 0)
}

/// Feeds messages from `reader` into the engine through `handle` until the connection ends,
/// answering pings through the writer. While more input waits, answers wait for it, so a
/// burst of requests gets its answers in one write.
fn read_loop<E: crate::conn::Engine>(
    conn: &crate::conn::Conn<E>,
    reader: &mut WebSocket<ReadHalf>,
    handle: impl Fn(&mut E, std::time::Instant, &[u8]),
) {
    loop {
        match next_message(reader) {
            Incoming::Frame(frame) => {
                let more = more_pending(&reader.get_ref().stream);
                conn.with_input(more, |engine, now| handle(engine, now, &frame));
            }
            Incoming::Ping(data) => conn.pong(data),
            Incoming::Skip => {
                if !more_pending(&reader.get_ref().stream) {
                    conn.release();
                }
            }
            Incoming::End => break,
        }
    }
}

/// What the reader got: a frame for the engine, a ping to answer, or the end.
enum Incoming {
    Frame(Vec<u8>),
    Ping(Vec<u8>),
    Skip,
    End,
}

fn next_message(reader: &mut WebSocket<ReadHalf>) -> Incoming {
    match reader.read() {
        Ok(Message::Text(text)) => Incoming::Frame(text.as_bytes().to_vec()),
        Ok(Message::Binary(bytes)) => Incoming::Frame(bytes.to_vec()),
        Ok(Message::Ping(data)) => Incoming::Ping(data.to_vec()),
        Ok(Message::Pong(_) | Message::Frame(_)) => Incoming::Skip,
        Ok(Message::Close(_)) | Err(_) => Incoming::End,
    }
}
