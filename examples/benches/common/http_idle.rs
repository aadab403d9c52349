//! The http bench's idle-session measurement: a fresh server child, [`IDLE`] legacy sessions
//! opened over one keep-alive connection, its RSS before and after, then with a GET stream
//! open on each.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use super::raw::{open_session, Http};
use super::util::{show, status_kib, verdict};
use super::{Server, IDLE, IDLE_WARM, SERVER, TARGET_IDLE_BYTES, VERSION};

/// What [`idle_sessions`] read from the server child (KiB, threads).
pub(crate) struct Idle {
    before: u64,
    after: u64,
    streams: u64,
    threads_before: u64,
    threads_after: u64,
    threads_streams: u64,
    peak: Option<u64>,
}

impl Idle {
    pub(crate) fn report(&self, runtime: &str) {
        let per = |from: u64, to: u64| (to as f64 - from as f64) * 1024.0 / IDLE as f64;
        let sessions = per(self.before, self.after);
        let streams = per(self.before, self.streams);
        println!(
            "    RSS per idle session <= {TARGET_IDLE_BYTES:.0} B      {runtime:<8} sessions only     {sessions:>7.0} B  {}",
            verdict(sessions <= TARGET_IDLE_BYTES)
        );
        // Not the target's case: a session with its GET stream open holds a connection (and,
        // on the blocking server, the thread serving it).
        println!("    RSS per session with its GET stream open  {runtime:<8} (no target)       {streams:>7.0} B");
        println!();
        println!(
            "  idle sessions, {runtime} server (fresh everything-server --transport http --runtime {runtime}, {IDLE_WARM} warm-up sessions, then {IDLE} legacy sessions"
        );
        println!("    opened with raw initialize + notifications/initialized POSTs over one keep-alive connection):");
        println!(
            "    VmRSS {} KiB before, {} KiB with the sessions ({:+} KiB), {} KiB with a GET stream open on each ({:+} KiB);",
            self.before,
            self.after,
            self.after as i64 - self.before as i64,
            self.streams,
            self.streams as i64 - self.after as i64,
        );
        println!(
            "    threads {} before, {} with the sessions, {} with the GET streams; VmHWM {} KiB",
            self.threads_before,
            self.threads_after,
            self.threads_streams,
            show(self.peak)
        );
    }
}

/// [`IDLE`] idle sessions on a fresh server child: its RSS before and after, then with a GET
/// stream open on each.
pub(crate) fn idle_sessions(runtime: &str) -> Idle {
    let server = Server::start(Command::new(SERVER).args(["--transport", "http", "--port", "0", "--runtime", runtime]));
    let mut http = Http::connect(&server.addr);
    for _ in 0..IDLE_WARM {
        open_session(&mut http);
    }
    let settle = || std::thread::sleep(Duration::from_millis(200));
    settle();
    let rss = || status_kib(server.pid, "VmRSS:").unwrap();
    let threads = || status_kib(server.pid, "Threads:").unwrap();
    let (before, threads_before) = (rss(), threads());
    let sessions: Vec<String> = (0..IDLE).map(|_| open_session(&mut http)).collect();
    settle();
    let (after, threads_after) = (rss(), threads());
    // Each GET answers with its head and a comment at once: read them, and leave it open.
    let streams: Vec<BufReader<TcpStream>> = sessions
        .iter()
        .map(|session| {
            let mut stream = TcpStream::connect(&server.addr).unwrap();
            stream.set_nodelay(true).unwrap();
            write!(
                stream,
                "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {VERSION}\r\n\r\n",
                server.addr
            )
            .unwrap();
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            assert!(line.starts_with("HTTP/1.1 200"), "GET stream: {line:?}");
            reader
        })
        .collect();
    settle();
    let (with_streams, threads_streams) = (rss(), threads());
    let peak = status_kib(server.pid, "VmHWM:");
    server.stop();
    drop((streams, http));
    Idle { before, after, streams: with_streams, threads_before, threads_after, threads_streams, peak }
}
