//! A throwaway `redis-server` per test on 127.0.0.1 (installed by `scripts/redis.sh` when
//! missing), stopped when dropped.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A running `redis-server`.
pub struct RedisServer {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl RedisServer {
    /// Starts one on a free port.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Self::start_on(port)
    }

    /// Starts one on `port` (again, after [`RedisServer::stop`]).
    pub fn start_on(port: u16) -> Self {
        ensure_installed();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let server = Self { child, port };
        server.wait_ready();
        server
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn wait_ready(&self) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let mut answer = [0u8; 7];
                if stream.write_all(b"PING\r\n").is_ok()
                    && stream.read_exact(&mut answer).is_ok()
                    && &answer == b"+PONG\r\n"
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not answer on port {}", self.port);
    }

    /// Freezes it (`SIGSTOP`): connections stay open and unanswered, as with a hung server or
    /// a partitioned network.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets it run again after [`RedisServer::pause`].
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let sent = Command::new("kill").arg(signal).arg(self.child.id().to_string()).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill {signal} redis-server");
    }

    /// Kills it (as an outage would).
    pub fn stop(mut self) -> u16 {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.port
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Installs `redis-server` with the repo's script if it is not on `PATH` (once per test
/// binary: its tests run in parallel).
fn ensure_installed() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(install);
}

fn install() {
    let found = Command::new("redis-server").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if found {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/redis.sh");
    let installed = Command::new("bash").arg(script).arg("--install").status().is_ok_and(|s| s.success());
    assert!(installed, "redis-server is missing and {script} --install could not install it");
}

/// A key prefix no other store of this test run uses.
pub fn unique_prefix() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("test{}-{}:", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}
