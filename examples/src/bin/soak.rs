//! A soak of the HTTP server in every host: the blocking server, the smol server and the
//! endpoint mounted in axum on tokio, each a child process, under moderate load at once for a
//! while, their resident memory recorded at intervals. After a warm-up (the first fifth of the
//! run), memory must stay flat: no sample may pass the warm-up's last by more than a quarter
//! (plus 4 MiB), and calls must keep being answered (no three samples in a row without one).
//! Exits 1 if a host grew or stalled.
//!
//! ```text
//! scripts/soak.sh                                                        # 30 minutes, a sample every 30 s
//! cargo run --release -p talaria-examples --bin soak -- --seconds 60 --every 5   # a short one
//! cargo run --release -p talaria-examples --bin soak -- --only smol,tokio          # some hosts
//! ```
//!
//! Each host gets `--clients` threads (default 3), each in a loop: a legacy session (protocol
//! 2025-06-18) with 20 `echo` calls, closed (DELETE); 20 stateless calls; a stateless call
//! given up after 50 ms (its stream closed mid-call); and a connection that sends half a
//! request and leaves.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{Client, ClientOptions};
use talaria::core::client::CallOptions;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;

/// One server child.
struct Host {
    name: &'static str,
    child: Child,
    url: String,
    calls: Arc<AtomicU64>,
    samples: Vec<u64>,
    /// The calls made at each sample.
    progress: Vec<u64>,
}

impl Host {
    /// Starts `command`, which names its URL on its first stderr line; the soak ends (exit 2)
    /// if it cannot.
    fn start(name: &'static str, command: &mut Command) -> Self {
        let spawned = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn();
        let mut child = spawned.unwrap_or_else(|e| fail(&format!("{name}: {e}")));
        let Some(stderr) = child.stderr.take() else { fail(&format!("{name}: no stderr")) };
        let mut stderr = BufReader::new(stderr);
        let mut line = String::new();
        let _ = stderr.read_line(&mut line);
        let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) else {
            fail(&format!("{name} said {line:?}"))
        };
        let url = url.to_owned();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                eprintln!("{line}");
            }
        });
        Self { name, child, url, calls: Arc::new(AtomicU64::new(0)), samples: Vec::new(), progress: Vec::new() }
    }

    /// How many file descriptors the child holds (its connections, mostly).
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).map_or(0, Iterator::count)
    }

    /// The child's resident memory, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

/// One client thread's loop against `url` until `stop`.
fn drive(url: &str, calls: &AtomicU64, stop: &AtomicBool) {
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    while !stop.load(Ordering::Relaxed) {
        let legacy =
            ClientOptions::new("soak", "1").mode(ClientMode::Legacy).versions(vec![ProtocolVersion::V2025_06_18]);
        if let Ok(client) = Client::http(url, &[], legacy) {
            for n in 0..20 {
                let text = format!("legacy {n}");
                let answer = client.call_tool("echo", json!({"text": text}));
                assert!(answer.is_ok(), "{url}: {answer:?}");
                calls.fetch_add(1, Ordering::Relaxed);
            }
            client.close();
        }
        if let Ok(client) = Client::http(url, &[], ClientOptions::new("soak", "1").mode(ClientMode::Stateless)) {
            for n in 0..20 {
                let answer = client.call_tool("echo", json!({"text": format!("stateless {n}")}));
                assert!(answer.is_ok(), "{url}: {answer:?}");
                calls.fetch_add(1, Ordering::Relaxed);
            }
            let options = CallOptions::default().with_timeout(Duration::from_millis(50));
            let _ = client.call_tool_with("slow", json!({"steps": 100, "step_ms": 5}), options);
            client.close();
        }
        if let Ok(mut half) = TcpStream::connect(&addr) {
            let _ = half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"");
        }
    }
}

/// Ends the soak: it could not start.
fn fail(why: &str) -> ! {
    eprintln!("soak: {why}");
    std::process::exit(2)
}

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds = arg(&args, "--seconds", 1800);
    let every = arg(&args, "--every", 30).max(1);
    let clients = arg(&args, "--clients", 3);
    // `--stalls-warn`: a stall is reported but does not fail the run (CI's smoke run).
    let stalls_warn = args.iter().any(|a| a == "--stalls-warn");
    let dir =
        std::env::current_exe().ok().and_then(|p| p.parent().map(std::path::Path::to_path_buf)).unwrap_or_default();
    let server = dir.join("everything-server");
    // `--only blocking,smol` soaks some hosts.
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).cloned().unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    let mut hosts = Vec::new();
    if wanted("blocking") {
        hosts.push(Host::start("blocking", Command::new(&server).args(["--transport", "http", "--port", "0"])));
    }
    if wanted("smol") {
        let smol = ["--transport", "http", "--port", "0", "--runtime", "smol"];
        hosts.push(Host::start("smol", Command::new(&server).args(smol)));
    }
    if wanted("tokio") {
        hosts.push(Host::start("tokio", Command::new(dir.join("axum-server")).arg("127.0.0.1:0")));
    }
    println!("soak: {seconds} s, a sample every {every} s, {clients} client threads per host");
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for host in &hosts {
        for _ in 0..clients {
            let (url, calls, stop) = (host.url.clone(), Arc::clone(&host.calls), Arc::clone(&stop));
            workers.push(std::thread::spawn(move || drive(&url, &calls, &stop)));
        }
    }
    let started = Instant::now();
    let mut next = started + Duration::from_secs(every);
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        next += Duration::from_secs(every);
        let mut line = format!("t={:>5}s", started.elapsed().as_secs());
        for host in &mut hosts {
            let rss = host.rss_kib();
            host.samples.push(rss);
            host.progress.push(host.calls.load(Ordering::Relaxed));
            line.push_str(&format!(
                "  {} {:>6.1} MiB {:>5} fds {:>8} calls",
                host.name,
                rss as f64 / 1024.0,
                host.fds(),
                host.calls.load(Ordering::Relaxed)
            ));
        }
        println!("{line}");
    }
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        if worker.join().is_err() {
            eprintln!("soak: a client thread failed");
            std::process::exit(1);
        }
    }
    let mut grew = false;
    for host in &mut hosts {
        let warm = (host.samples.len() / 5).max(1);
        let base = host.samples.get(warm - 1).copied().unwrap_or(0);
        let peak = host.samples.iter().skip(warm).copied().max().unwrap_or(base);
        let bound = base + base / 4 + 4096;
        let flat = peak <= bound;
        grew |= !flat;
        // Three samples in a row without a call answered: the host stalled.
        let stalled = host.progress.windows(3).any(|w| w[0] == w[2]);
        if stalled {
            println!("{}: STALLED (no call answered for {} s at least)", host.name, 2 * every);
        }
        grew |= stalled && !stalls_warn;
        println!(
            "{}: after warm-up {:.1} MiB, peak after {:.1} MiB (bound {:.1} MiB): {}",
            host.name,
            base as f64 / 1024.0,
            peak as f64 / 1024.0,
            bound as f64 / 1024.0,
            if flat { "flat" } else { "GREW" }
        );
        let _ = host.child.kill();
        let _ = host.child.wait();
    }
    std::process::exit(i32::from(grew));
}
