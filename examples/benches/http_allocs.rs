//! Heap allocations per `tools/call` inside each HTTP server, counted (dhat), beside the
//! floor's: what a request costs the allocator, a figure the timed bench (`--bench http`)
//! cannot see in its server children.
//!
//! ```text
//! cargo bench -p talaria-examples --bench http_allocs
//! TALARIA_BENCH_CALLS=2000 cargo bench -p talaria-examples --bench http_allocs   # smoke
//! ```
//!
//! Each server runs in this process, on 127.0.0.1: the smol server (on an executor with one
//! thread), the blocking server (hyper), and the floor (the timed bench's bare echo on
//! `std::net`, a thread per connection). One client thread opens a legacy session (protocol
//! 2025-06-18, JSON replies) on one keep-alive connection and calls `echo` in a loop (the
//! timed bench's raw client). The client allocates nothing in the loop (its request bodies
//! are written beforehand, its buffers are reused, and a reply is checked by its bytes), so
//! what the counter sees between the first and the last call is the server's: the HTTP
//! layer, the session, the router and the tool.
//!
//! Then, for each Talaria server, the live heap per idle session: what the server still holds
//! (blocks and bytes, counted by dhat) after 1,000 more legacy sessions are opened with raw
//! `initialize` + `notifications/initialized` POSTs, the client's own ids taken out. The timed
//! bench's RSS figure (`--bench http`) adds the allocator's overhead to this.
// A bench stops loudly if a server misbehaves.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

use std::net::{SocketAddr, TcpListener};

use raw::{open_session, session_headers, Http};
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};

#[path = "common/http_floor.rs"]
#[allow(dead_code)]
mod floor;
#[path = "common/http_raw.rs"]
mod raw;
#[path = "common/util.rs"]
#[allow(dead_code)]
mod util;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// What every call echoes.
const TEXT: &str = "hello, world";
/// Calls before the counted ones (the connection's and the session's buffers settle).
const WARM: usize = 200;

fn main() {
    let calls = util::env_usize("TALARIA_BENCH_CALLS", 10_000).max(100);
    println!("talaria http allocations: heap allocations per echo tools/call inside each server, counted with dhat");
    println!("  one client thread, one keep-alive connection, one legacy session (2025-06-18, JSON replies);");
    println!("  {WARM} warm-up calls, then {calls} counted; the client allocates nothing in the loop");
    println!();
    println!("  {:<50} {:>12} {:>12}", "server", "allocs/call", "bytes/call");
    let server = talaria_examples::everything::server();

    let executor = talaria::smol::executor(1);
    let smol = SmolHttpServer::bind_on(&executor, &server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    report("smol server (one executor thread)", count(smol.local_addr(), true, calls));
    let smol_idle = idle(smol.local_addr());
    smol.shutdown();

    let blocking = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    report("blocking server (hyper)", count(blocking.local_addr(), true, calls));
    let blocking_idle = idle(blocking.local_addr());
    blocking.shutdown();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || floor::serve_blocking(stream));
        }
    });
    report("floor (bare echo on std::net, serde_json::Value)", count(addr, false, calls));

    println!();
    println!(
        "  live heap per idle legacy session ({IDLE} sessions opened with raw initialize + notifications/initialized"
    );
    println!("  over one keep-alive connection; what the server still holds after they are all open):");
    println!("  {:<50} {:>12} {:>12}", "server", "blocks", "bytes");
    report("smol server", smol_idle);
    report("blocking server (hyper)", blocking_idle);
}

/// Idle sessions opened for the live-heap figure.
const IDLE: usize = 1000;

/// Live heap blocks and bytes per idle session the server at `addr` holds, after [`IDLE`] more
/// sessions are opened (a few first, so the tables' first growth is not counted).
fn idle(addr: SocketAddr) -> (f64, f64) {
    let mut http = Http::connect(&addr.to_string());
    for _ in 0..16 {
        open_session(&mut http);
    }
    let profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get();
    let sessions: Vec<String> = (0..IDLE).map(|_| open_session(&mut http)).collect();
    // The client's own ids and their vector are live too: take them out of the count.
    let ids: u64 = sessions.iter().map(|id| id.capacity() as u64).sum::<u64>()
        + (sessions.capacity() * size_of::<String>()) as u64;
    let after = dhat::HeapStats::get();
    drop(profiler);
    let per = |n: f64| n / IDLE as f64;
    (
        per(after.curr_blocks as f64 - before.curr_blocks as f64 - IDLE as f64 - 1.0),
        per(after.curr_bytes as f64 - before.curr_bytes as f64 - ids as f64),
    )
}

fn report(label: &str, (allocs, bytes): (f64, f64)) {
    println!("  {label:<50} {allocs:>12.1} {bytes:>12.0}");
}

/// Allocations and bytes allocated per call, `calls` calls against the server at `addr`
/// (`session`: open a legacy session first; the floor has none, and is sent the same headers
/// with a made-up id).
fn count(addr: SocketAddr, session: bool, calls: usize) -> (f64, f64) {
    let mut http = Http::connect(&addr.to_string());
    let id = if session { open_session(&mut http) } else { "0".repeat(32) };
    let headers = session_headers(&id);
    let bodies: Vec<String> = (0..WARM + calls).map(call_body).collect();
    let mut call = |body: &String| {
        let status = http.post(&headers, body.as_bytes());
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&http.body));
        let text = br#""text":"hello, world""#;
        assert!(http.body.windows(text.len()).any(|w| w == text), "{}", String::from_utf8_lossy(&http.body));
    };
    bodies[..WARM].iter().for_each(&mut call);
    let profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get();
    bodies[WARM..].iter().for_each(&mut call);
    let after = dhat::HeapStats::get();
    drop(profiler);
    let per_call = |n: u64| n as f64 / calls as f64;
    (per_call(after.total_blocks - before.total_blocks), per_call(after.total_bytes - before.total_bytes))
}

/// The body of call `i`.
fn call_body(i: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{TEXT}"}}}}}}"#
    )
}
