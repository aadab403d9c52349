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
    /// # Errors
    ///
    /// If the program cannot start, or its first stderr line holds no URL (the child is
    /// killed then).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria_examples::child::ServerChild;
    ///
    /// let server = ServerChild::start("target/debug/everything-server", &["--transport", "http", "--port", "0"])?;
    /// assert!(server.url.starts_with("http://127.0.0.1:"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start(program: &str, args: &[&str]) -> std::io::Result<Self> {
        let mut child = Command::new(program).args(args).stdin(Stdio::null()).stderr(Stdio::piped()).spawn()?;
        let mut line = String::new();
        if let Some(stderr) = child.stderr.take() {
            BufReader::new(stderr).read_line(&mut line)?;
        }
        let url = line.split_whitespace().rev().find(|word| word.contains("://")).map(str::to_owned);
        let server = Self { child, url: url.unwrap_or_default() };
        if server.url.is_empty() {
            return Err(std::io::Error::other(format!("{program} said {line:?}, with no URL")));
        }
        Ok(server)
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
