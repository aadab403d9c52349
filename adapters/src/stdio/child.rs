//! A server in a child process: spawn, read, and tear down (the whole process group, always
//! reaped).

use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use talaria_core::client::Endpoint;

use super::LineSink;
use crate::client::{connect, Client, ClientError, ClientOptions, Teardown};
use crate::conn::Conn;

/// What happens to the child's stderr.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// The child writes to this process's stderr.
    #[default]
    Inherit,
    /// Thrown away.
    Discard,
    /// Each line goes to the callback.
    Capture(Arc<dyn Fn(&str) + Send + Sync>),
}

impl std::fmt::Debug for StderrMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Inherit => "Inherit",
            Self::Discard => "Discard",
            Self::Capture(_) => "Capture",
        })
    }
}

/// How to start a server process.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use talaria::stdio::{StderrMode, StdioCommand};
///
/// let command = StdioCommand::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("DEBUG", "1")
///     .stderr(StderrMode::Discard)
///     .grace_period(Duration::from_millis(500));
/// assert_eq!(command.program(), "npx");
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct StdioCommand {
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    clear_env: bool,
    cwd: Option<PathBuf>,
    stderr: StderrMode,
    grace: Duration,
}

impl StdioCommand {
    /// Runs `program` (looked up on `PATH`).
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            clear_env: false,
            cwd: None,
            stderr: StderrMode::Inherit,
            grace: Duration::from_secs(2),
        }
    }

    /// The program.
    #[must_use]
    pub fn program(&self) -> &str {
        &self.program
    }

    /// One more argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// More arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Starts the child with an empty environment (plus what `env` adds).
    pub const fn clear_env(mut self) -> Self {
        self.clear_env = true;
        self
    }

    /// The child's working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// What to do with the child's stderr.
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// How long to wait after closing stdin, and again after SIGTERM, before escalating.
    pub const fn grace_period(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    fn spawn(&self) -> io::Result<Child> {
        let mut command = Command::new(&self.program);
        command.args(&self.args).stdin(Stdio::piped()).stdout(Stdio::piped());
        if self.clear_env {
            command.env_clear();
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command.stderr(match self.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Discard => Stdio::null(),
            StderrMode::Capture(_) => Stdio::piped(),
        });
        #[cfg(unix)]
        {
            // Its own process group, so teardown reaches grandchildren (npx, uvx, shells).
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        command.spawn()
    }
}

/// The child, shared by the teardown and the reader (which records how it ended).
pub(crate) struct ChildProcess {
    child: Mutex<Child>,
    status: Mutex<Option<ExitStatus>>,
    grace: Duration,
    /// Hangs up once the captured stderr is read to its end (every line handed over).
    stderr_read: Mutex<Option<mpsc::Receiver<()>>>,
}

/// How long closing waits, once the child is gone, for the last lines of its captured stderr
/// to be handed over (longer only if something the child started still holds the pipe).
const STDERR_DRAIN: Duration = Duration::from_secs(1);

impl ChildProcess {
    fn try_status(&self) -> Option<ExitStatus> {
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        if status.is_none() {
            *status = self.child.lock().unwrap_or_else(PoisonError::into_inner).try_wait().ok().flatten();
        }
        *status
    }

    /// Waits up to `limit` for the child to exit.
    pub(crate) fn wait_for(&self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(status) = self.try_status() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    fn pid(&self) -> u32 {
        self.child.lock().unwrap_or_else(PoisonError::into_inner).id()
    }
}

struct ChildTeardown(Arc<ChildProcess>);

impl Teardown for ChildTeardown {
    /// Stdin is closed already (or its last frames were not taken in time, and the child is
    /// stalled); wait, SIGTERM the group, wait, SIGKILL the group, reap.
    fn shutdown(&mut self) {
        let process = &self.0;
        let pid = process.pid();
        if process.wait_for(process.grace).is_none() {
            signal_group(pid, Signal::Term);
            if process.wait_for(process.grace).is_none() {
                signal_group(pid, Signal::Kill);
                let _ = process.child.lock().unwrap_or_else(PoisonError::into_inner).kill();
                process.wait_for(Duration::from_secs(5));
            }
        }
        // The leader is gone; make sure nothing it started outlives it.
        signal_group(pid, Signal::Kill);
        let status = process.child.lock().unwrap_or_else(PoisonError::into_inner).wait().ok();
        {
            let mut recorded = process.status.lock().unwrap_or_else(PoisonError::into_inner);
            if recorded.is_none() {
                *recorded = status;
            }
        }
        // What the child wrote last (often why it ended) reaches the callback before close
        // returns: the caller may exit the process next.
        let stderr_read = process.stderr_read.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(read) = stderr_read {
            let _ = read.recv_timeout(STDERR_DRAIN);
        }
    }

    fn exit_status(&mut self) -> Option<ExitStatus> {
        self.0.try_status()
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal_group(pid: u32, signal: Signal) {
    use rustix::process::{kill_process_group, Pid, Signal as S};
    let Some(group) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return };
    let signal = match signal {
        Signal::Term => S::TERM,
        Signal::Kill => S::KILL,
    };
    let _ = kill_process_group(group, signal);
}

#[cfg(not(unix))]
fn signal_group(_pid: u32, _signal: Signal) {}

/// Reads the child's stdout into the connection until EOF, then closes it.
fn read_into(conn: &Conn<Endpoint>, mut stdout: ChildStdout) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for (piece, more) in super::pieces(&buf[..n]) {
                    conn.with_input(more, |endpoint, now| endpoint.handle_bytes(now, piece));
                }
            }
        }
    }
    conn.with(|endpoint, now| endpoint.handle_closed(now));
}

/// A started child: its pipes, and what shuts it down.
pub(crate) struct Started {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) process: Arc<ChildProcess>,
}

impl Started {
    pub(crate) fn teardown(&self) -> Box<dyn Teardown> {
        Box::new(ChildTeardown(Arc::clone(&self.process)))
    }
}

/// Starts `command` with its pipes, and its stderr handled as asked.
pub(crate) fn start(command: StdioCommand) -> io::Result<Started> {
    let mut child = command.spawn()?;
    let stdin = child.stdin.take().ok_or_else(|| io::Error::other("no stdin pipe"))?;
    let stdout = child.stdout.take().ok_or_else(|| io::Error::other("no stdout pipe"))?;
    let mut stderr_read = None;
    if let (StderrMode::Capture(callback), Some(stderr)) = (command.stderr, child.stderr.take()) {
        let (reading, read) = mpsc::channel::<()>();
        stderr_read = Some(read);
        std::thread::Builder::new().name("talaria-stderr".into()).spawn(move || {
            for line in BufReader::new(stderr).lines() {
                match line {
                    Ok(line) => callback(&line),
                    Err(_) => break,
                }
            }
            drop(reading);
        })?;
    }
    let process = Arc::new(ChildProcess {
        child: Mutex::new(child),
        status: Mutex::new(None),
        grace: command.grace,
        stderr_read: Mutex::new(stderr_read),
    });
    Ok(Started { stdin, stdout, process })
}

impl Client {
    /// Starts `command` and connects to it over its stdin/stdout.
    ///
    /// If the server exits, every call in flight fails at once with a closed-connection
    /// error and [`Client::exit_status`] tells how it ended. Closing the client (or dropping
    /// its last clone) closes the child's stdin, waits the grace period, sends SIGTERM to its
    /// process group, waits again, sends SIGKILL, and reaps it.
    ///
    /// # Errors
    ///
    /// [`ClientError::Io`] if it cannot be started, [`ClientError::Connect`] if the handshake
    /// fails.
    pub fn stdio(command: StdioCommand, options: ClientOptions) -> Result<Self, ClientError> {
        let started = start(command)?;
        let teardown = started.teardown();
        let Started { stdin, stdout, process } = started;
        #[cfg(unix)]
        let sink = LineSink::owned_pipe(stdin);
        #[cfg(not(unix))]
        let sink = LineSink::new(stdin);
        connect(options, Box::new(sink), teardown, move |conn| {
            std::thread::Builder::new().name("talaria-stdio-read".into()).spawn(move || {
                read_into(&conn, stdout);
                // Record how the child ended while the information is fresh.
                process.wait_for(Duration::from_millis(100));
            })?;
            Ok(())
        })
    }
}
