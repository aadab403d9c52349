//! A server run as a child process for a test: started with its arguments, its URL read from
//! the first line it writes to stderr (as `everything-server` and `talaria serve-demo` write
//! it), killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A server child process and the URL it listens at.
pub struct ServerChild {
    child: Child,
    /// The URL from the server's first stderr line (its last word with `://`).
    pub url: String,
}

impl ServerChild {
    /// Starts `program` with `args`, and reads the URL from its first stderr line.
    ///
    /// # Panics
    ///
    /// If the program cannot start, or its first stderr line holds no URL: a test's setup
    /// failed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria_examples::child::ServerChild;
    ///
    /// let server = ServerChild::start("target/debug/everything-server", &["--transport", "http", "--port", "0"]);
    /// assert!(server.url.starts_with("http://127.0.0.1:"));
    /// ```
    #[must_use]
    pub fn start(program: &str, args: &[&str]) -> Self {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let mut line = String::new();
        let stderr = child.stderr.take().map(BufReader::new);
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_line(&mut line);
        }
        let url = line.split_whitespace().rev().find(|word| word.contains("://"));
        let url = url.unwrap_or_else(|| panic!("{program} said {line:?}, with no URL")).to_owned();
        Self { child, url }
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
