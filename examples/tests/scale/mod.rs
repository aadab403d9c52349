//! Server processes behind nginx, for the scale-out test and bench: `everything-server`
//! processes (with `--redis`, or alone) and an nginx configured from deploy/nginx.conf.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The example server.
pub const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");

/// A port free now on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One `everything-server --transport http [--redis URL [--redis-store async|blocking]]`.
pub struct Process {
    child: Child,
}

impl Process {
    /// Starts `everything-server --transport http --runtime smol` on `port`, sharing through
    /// the Redis at `redis` if given (with its default, async, session store).
    pub fn start(port: u16, redis: Option<&str>) -> Self {
        Self::start_with(port, redis, "async")
    }

    /// [`Process::start`] with the session store `store` (`async` or `blocking`).
    pub fn start_with(port: u16, redis: Option<&str>, store: &str) -> Self {
        Self::start_sized(port, redis, store, None)
    }

    /// [`Process::start_with`], its executor run by `threads` threads (by default, one per
    /// core): processes sharing a machine share its cores.
    pub fn start_sized(port: u16, redis: Option<&str>, store: &str, threads: Option<usize>) -> Self {
        let mut command = Command::new(SERVER);
        // The smol server, whose executor the async session store's connection shares
        // (`AsyncRedisSessionStore::connect_on`); `TALARIA_SCALE_RUNTIME=blocking` for the
        // blocking-host one (`HttpServer::bind_with`, its `--threads` its own).
        let runtime = std::env::var("TALARIA_SCALE_RUNTIME").unwrap_or_else(|_| "smol".into());
        command.args(["--transport", "http", "--port", &port.to_string(), "--runtime", &runtime]);
        if let Some(threads) = threads {
            command.args(["--threads", &threads.to_string()]);
        }
        if let Some(url) = redis {
            command.args(["--redis", url, "--redis-store", store]);
        }
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        assert!(line.contains("listening on"), "everything-server on {port}: {line}");
        // Keep draining its stderr, so that it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Self { child }
    }

    /// `kill -9`.
    pub fn kill(&mut self) {
        let _ = self.child.kill(); // SIGKILL
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// nginx in front of `ports` on `port`, configured from deploy/nginx.conf.
pub struct Nginx {
    child: Child,
    dir: std::path::PathBuf,
}

impl Nginx {
    /// Starts nginx on `port` in front of `ports`.
    pub fn start(port: u16, ports: &[u16]) -> Self {
        let installed = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/nginx.sh"))
            .arg("--install")
            .output()
            .unwrap();
        assert!(installed.status.success(), "nginx could not be installed");
        let binary = String::from_utf8_lossy(&installed.stdout).trim().to_owned();
        let dir = std::env::temp_dir().join(format!("talaria-nginx-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let template = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/nginx.conf")).unwrap();
        let mut conf = template
            .replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"))
            .replace("/tmp/talaria-nginx", &dir.join("nginx").display().to_string());
        for (i, upstream) in ports.iter().enumerate() {
            conf = conf.replace(&format!("127.0.0.1:808{}", i + 1), &format!("127.0.0.1:{upstream}"));
        }
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let child = Command::new(binary)
            .args(["-c", &path.display().to_string(), "-p", &dir.display().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, dir }
    }
}

impl Drop for Nginx {
    /// Stops nginx with SIGTERM, so that its master ends its workers too (SIGKILL to the
    /// master would leave them running, listening on the port); SIGKILL only if it lingers.
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let asked = Instant::now();
        while matches!(self.child.try_wait(), Ok(None)) && asked.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
