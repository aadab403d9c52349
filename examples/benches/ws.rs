//! `tools/call` round trips over a loopback WebSocket: Talaria's client against a child
//! `everything-server --transport ws`, next to a floor measured in the same run.
//!
//! ```text
//! cargo bench -p talaria-examples --bench ws
//! TALARIA_BENCH_ROUNDS=1 TALARIA_BENCH_CALLS=2000 cargo bench -p talaria-examples --bench ws   # smoke
//! ```
//!
//! The floor is a bare WebSocket echo over 127.0.0.1 with `tungstenite` and `serde_json` and no
//! SDK on either side. Its server is a thread of this process: it parses each text message as a
//! `serde_json::Value` and answers with the result `json-echo` gives, one text message, written
//! to the socket just before it would read again (so a burst of requests is answered with one
//! write, as `json-echo` does). Its client is written by hand over one socket: one thread for one
//! call in flight; deeper, the socket's two halves (`TcpStream::try_clone`, as the SDK's transport
//! splits it) with a writer thread that keeps `depth` requests outstanding (flushing before it waits
//! for room) and a reader thread that parses the answers and matches them to their requests by id.
//! Both ends set `TCP_NODELAY`, as the SDK's do. Its latency ends when the answer message is
//! parsed; deeper than one it starts when a client that never blocked on the socket would have
//! sent the request (`common::Window`), as the SDK's calls queue in its outbox.
//!
//! The SDK's [`Client`] connects to a server child listening on a free port, whose URL it reads
//! from the child's stderr; the peak RSS is that child's (the floor's server is this process).
//! The runs, how they are timed and summed up, and the environment variables that tune them are
//! the same as the `stdio` bench's: see `common/mod.rs`.
// A bench measures wall-clock time and stops loudly if a peer misbehaves.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

mod common;

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

use common::{peak_rss_kib, read_answers, Bench, Sample, Window, VERSION};
use serde_json::{json, Value};
use talaria::client::{Client, ClientOptions};
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");

fn main() {
    let bench = Bench::start("ws", "a loopback WebSocket", "tungstenite echo thread");
    let mut floor = Floor::start();
    let sdk = Sdk::connect(bench.options());
    let results = bench.measure(&mut floor, &sdk.client);
    let peaks = [("everything-server", peak_rss_kib(sdk.child.id()))];
    sdk.stop();
    floor.stop();
    bench.report(&results, &peaks);
}

// ---- the floor --------------------------------------------------------------------------

/// The floor server's socket: what tungstenite writes is held until it next reads, which it
/// does only when its buffer holds no further complete message (so, like `json-echo`'s flush
/// before a read that would block, a burst of requests is answered with one write).
struct FlushBeforeRead {
    stream: TcpStream,
    out: Vec<u8>,
}

impl FlushBeforeRead {
    fn send_held(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }
}

impl Read for FlushBeforeRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.send_held()?;
        self.stream.read(buf)
    }
}

impl Write for FlushBeforeRead {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_held()
    }
}

/// Serves one connection on `listener`: a bare WebSocket JSON-RPC echo.
fn floor_server(listener: &TcpListener) {
    let (stream, _) = listener.accept().unwrap();
    stream.set_nodelay(true).unwrap();
    // Each message goes to `FlushBeforeRead` as soon as it is written, to be held there.
    let config = WebSocketConfig::default().write_buffer_size(0);
    let socket = FlushBeforeRead { stream, out: Vec::with_capacity(64 * 1024) };
    let mut socket = tungstenite::accept_with_config(socket, Some(config)).unwrap();
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                if let Some(answer) = floor_answer(text.as_str()) {
                    socket.write(Message::text(serde_json::to_string(&answer).unwrap())).unwrap();
                }
            }
            Ok(Message::Close(_)) => {
                let _ = socket.flush();
                break;
            }
            Ok(_) => {}
            // The client shut its socket.
            Err(_) => break,
        }
    }
}

/// `json-echo`'s answer to one request.
fn floor_answer(message: &str) -> Option<Value> {
    let Ok(mut request) = serde_json::from_str::<Value>(message) else {
        return Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}));
    };
    let id = request.get_mut("id").map(Value::take)?;
    let text = request.pointer_mut("/params/arguments/text").map_or(Value::Null, Value::take);
    Some(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}))
}

/// The floor server thread and the hand-written client's two halves of its one socket.
struct Floor {
    server: JoinHandle<()>,
    /// The handshake's socket: only ever read (the server never pings, so it never writes).
    reader: WebSocket<TcpStream>,
    /// The same connection's other half (`try_clone`): only ever written.
    writer: WebSocket<TcpStream>,
    next_id: u64,
}

impl Floor {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server =
            std::thread::Builder::new().name("floor-ws-server".into()).spawn(move || floor_server(&listener)).unwrap();
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        let writer = WebSocket::from_raw_socket(stream.try_clone().unwrap(), Role::Client, None);
        let (reader, _) = tungstenite::client::client(format!("ws://{addr}/ws"), stream).unwrap();
        Self { server, reader, writer, next_id: 1 }
    }

    /// Closes the connection and joins the server thread.
    fn stop(self) {
        let Self { server, reader, mut writer, .. } = self;
        let _ = writer.close(None);
        let _ = writer.flush();
        let _ = reader.get_ref().shutdown(Shutdown::Both);
        server.join().unwrap();
    }
}

impl common::Floor for Floor {
    const LABEL: &'static str = "floor (tungstenite echo)";

    fn one(&mut self, text: &str, calls: usize) -> Sample {
        let mut latencies = Vec::with_capacity(calls);
        let start = Instant::now();
        for _ in 0..calls {
            let id = self.next_id;
            self.next_id += 1;
            let sent = Instant::now();
            self.writer.send(request(id, text)).unwrap();
            assert_eq!(answer_id(&self.reader.read().unwrap(), text), id);
            latencies.push(sent.elapsed());
        }
        Sample::new(start.elapsed(), latencies)
    }

    /// A writer thread and a reader thread.
    fn wide(&mut self, text: &str, depth: usize, calls: usize) -> Sample {
        let base = self.next_id;
        self.next_id += calls as u64;
        let (sent_tx, sent_rx) = mpsc::channel::<(u64, Instant)>();
        let (room_tx, room_rx) = mpsc::channel::<Instant>();
        let (writer, reader) = (&mut self.writer, &mut self.reader);
        let start = Instant::now();
        let latencies = std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut window = Window::new(start, depth, room_rx);
                for id in base..base + calls as u64 {
                    // Sends the batch before waiting for the reader to make room.
                    let (sent, message) = window.send(|| writer.flush().unwrap(), || request(id, text));
                    sent_tx.send((id, sent)).unwrap();
                    writer.write(message).unwrap();
                }
                writer.flush().unwrap();
            });
            let reader = scope.spawn(move || {
                read_answers(calls, base, &sent_rx, &room_tx, || answer_id(&reader.read().unwrap(), text))
            });
            reader.join().unwrap()
        });
        Sample::new(start.elapsed(), latencies)
    }
}

fn request(id: u64, text: &str) -> Message {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}});
    Message::text(serde_json::to_string(&request).unwrap())
}

/// The id of an answer, after checking it echoes `text`.
fn answer_id(message: &Message, text: &str) -> u64 {
    let Message::Text(answer) = message else { panic!("not a text message: {message:?}") };
    let answer: Value = serde_json::from_str(answer.as_str()).unwrap();
    assert!(answer["result"]["content"][0]["text"] == text, "not an echo of the {} bytes sent", text.len());
    answer["id"].as_u64().unwrap()
}

// ---- the SDK ----------------------------------------------------------------------------

/// A client connected to an `everything-server --transport ws` child.
struct Sdk {
    client: Client,
    child: Child,
}

impl Sdk {
    /// Starts the server on a free port, reads its URL from its first stderr line (forwarding
    /// the rest), and connects with `options`.
    fn connect(options: ClientOptions) -> Self {
        let mut child = Command::new(SERVER)
            .args(["--transport", "ws", "--port", "0"])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_owned();
        assert!(url.starts_with("ws://127.0.0.1:"), "everything-server said {line:?}");
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                eprintln!("{line}");
            }
        });
        let client = Client::websocket(&url, &[], options).unwrap();
        assert_eq!(client.protocol_version(), VERSION);
        Self { client, child }
    }

    /// Closes the client, then ends the server (it serves until killed).
    fn stop(self) {
        let Self { client, mut child } = self;
        client.close();
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
