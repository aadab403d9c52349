//! A client and a server connected in one process, for tests and embedding: frames travel
//! through channels, one reader thread per direction, exactly as over a real transport.

use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};

use talaria_core::server::TransportInfo;
use talaria_core::session::{Event, Route};

use crate::client::{self, Client, ClientError, ClientOptions, Teardown};
use crate::conn::{FrameSink, Outgoing};
use crate::server::Server;

/// One JSON text.
type Frame = Vec<u8>;

/// How many frames travel between the two sides before a writer waits for the reader.
const IN_TRANSIT: usize = 256;

/// Sends frames to the other side's reader thread: a producing thread hands over what the
/// channel takes at once, this side's writer thread the rest, waiting while the other side is
/// [`IN_TRANSIT`] frames behind.
struct ChannelSink {
    tx: Option<SyncSender<Vec<u8>>>,
    /// Frames a try could not hand over, in order.
    kept: std::collections::VecDeque<Frame>,
}

impl ChannelSink {
    const fn new(tx: SyncSender<Frame>) -> Self {
        Self { tx: Some(tx), kept: std::collections::VecDeque::new() }
    }
}

fn payloads(frames: Vec<Outgoing>) -> impl Iterator<Item = Frame> {
    frames.into_iter().filter_map(|frame| match frame {
        Outgoing::Frame(_, payload, _) => Some(payload),
        _ => None,
    })
}

fn gone<T>(_: T) -> io::Error {
    io::ErrorKind::BrokenPipe.into()
}

impl FrameSink for ChannelSink {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        let Some(tx) = &self.tx else { return Err(io::ErrorKind::BrokenPipe.into()) };
        for payload in self.kept.drain(..).chain(payloads(frames)) {
            tx.send(payload).map_err(gone)?;
        }
        Ok(())
    }

    fn tries(&self) -> bool {
        true
    }

    fn try_send(&mut self, frames: Vec<Outgoing>) -> io::Result<bool> {
        let Some(tx) = &self.tx else { return Err(io::ErrorKind::BrokenPipe.into()) };
        for payload in payloads(frames) {
            if !self.kept.is_empty() {
                self.kept.push_back(payload);
                continue;
            }
            match tx.try_send(payload) {
                Ok(()) => {}
                Err(TrySendError::Full(payload)) => self.kept.push_back(payload),
                Err(TrySendError::Disconnected(_)) => return Err(io::ErrorKind::BrokenPipe.into()),
            }
        }
        Ok(self.kept.is_empty())
    }

    fn close(&mut self) {
        self.tx = None;
    }

    /// Each frame is a message of its own on the channel: nothing leaves together, and a
    /// writer thread would only add a hand-off per call.
    fn batches(&self) -> bool {
        false
    }
}

struct NoTeardown;

impl Teardown for NoTeardown {
    fn shutdown(&mut self) {}
}

/// Connects a new client to `server` in memory.
///
/// # Errors
///
/// As [`Client::stdio`]: the handshake failed.
///
/// # Examples
///
/// ```
/// use talaria::client::ClientOptions;
/// use talaria::core::schema::tools::{CallToolResult, Tool};
/// use talaria::core::server::Router;
/// use talaria::server::Server;
///
/// let router = Router::<()>::builder()
///     .tool(Tool::new("hi", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("hello")))
///     .build();
/// let server = Server::new("greeter", "1.0", router);
/// let client = talaria::memory::connect(&server, ClientOptions::new("me", "1.0"))?;
/// let result = client.call_tool("hi", serde_json::json!({}))?;
/// assert_eq!(result.is_error, None);
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
pub fn connect<S: Send + 'static>(server: &Server<S>, options: ClientOptions) -> Result<Client, ClientError> {
    let (connecting, handshake) = start(server, options)?;
    connecting.finish(handshake.wait())
}

/// Starts a client connected to `server` in memory; the handshake is under way.
pub(crate) fn start<S: Send + 'static>(
    server: &Server<S>,
    options: ClientOptions,
) -> Result<(client::Connecting, client::Handshake), ClientError> {
    let (to_server, client_inbox) = open_server(server)?;
    connect_client(options, to_server, client_inbox)
}

/// Hands every frame of `inbox` to `handle` until the other side is gone, with whether more
/// frames wait already.
fn read_frames(inbox: &Receiver<Frame>, mut handle: impl FnMut(&[u8], bool)) {
    let mut next = inbox.recv().ok();
    while let Some(frame) = next.take() {
        next = inbox.try_recv().ok();
        let more = next.is_some();
        handle(&frame, more);
        if !more {
            next = inbox.recv().ok();
        }
    }
}

/// Opens the server side; returns the client's way in and inbox.
fn open_server<S: Send + 'static>(server: &Server<S>) -> Result<(SyncSender<Frame>, Receiver<Frame>), ClientError> {
    let (to_server, server_inbox) = sync_channel::<Vec<u8>>(IN_TRANSIT);
    let (to_client, client_inbox) = sync_channel::<Vec<u8>>(IN_TRANSIT);
    let server_conn =
        server.open(Box::new(ChannelSink::new(to_client)), TransportInfo::new("memory"), Box::new(|_: Event| {}))?;
    std::thread::Builder::new().name("talaria-memory-server".into()).spawn(move || {
        read_frames(&server_inbox, |frame, more| {
            server_conn.with_input(more, |served, now| served.endpoint.handle_frame(now, Route::Connection, frame));
        });
        server_conn.with(|served, now| served.endpoint.handle_closed(now));
        server_conn.close_sink();
    })?;
    Ok((to_server, client_inbox))
}

fn connect_client(
    options: ClientOptions,
    to_server: SyncSender<Vec<u8>>,
    inbox: Receiver<Vec<u8>>,
) -> Result<(client::Connecting, client::Handshake), ClientError> {
    client::start_connecting(options, Box::new(ChannelSink::new(to_server)), Box::new(NoTeardown), move |conn| {
        std::thread::Builder::new().name("talaria-memory-client".into()).spawn(move || {
            read_frames(&inbox, |frame, more| {
                conn.with_input(more, |endpoint, now| endpoint.handle_frame(now, Route::Connection, frame));
            });
            conn.with(|endpoint, now| endpoint.handle_closed(now));
        })?;
        Ok(())
    })
}
