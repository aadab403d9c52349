//! How the user gets to the authorization server and back: the [`RedirectHandler`] an
//! [`OAuthClient`](super::OAuthClient) hands each authorization URL to, and two of them: a
//! loopback listener for interactive programs (the CLI), and a headless one that follows the
//! server's redirect itself (for tests and servers that approve without a user).

use std::io::{BufRead, BufReader, Read as _, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::fetch;

/// Sends the user to an authorization URL and returns the URL they were sent back to.
pub trait RedirectHandler: Send + Sync {
    /// Takes the user to `url`; returns the full redirect URL (with its query).
    ///
    /// # Errors
    ///
    /// A description of why the user did not come back.
    fn authorize(&self, url: &str) -> Result<String, String>;
}

/// Follows the authorization server's redirect without a user: `GET`s the authorization URL
/// and returns its `Location`. Only for servers that approve at once (tests, the conformance
/// suite's, machine accounts).
#[derive(Debug, Clone)]
pub struct HeadlessRedirect {
    agent: ureq::Agent,
}

impl Default for HeadlessRedirect {
    fn default() -> Self {
        Self { agent: fetch::default_agent() }
    }
}

impl RedirectHandler for HeadlessRedirect {
    fn authorize(&self, url: &str) -> Result<String, String> {
        fetch::location(&self.agent, url)
    }
}

/// Listens on `127.0.0.1` for the redirect back (RFC 8252 §7.3): the redirect URI is
/// `http://127.0.0.1:<port>/callback`. Each authorization URL goes to `open` (which can
/// start a browser, or print it).
///
/// # Examples
///
/// ```no_run
/// use talaria::auth::LoopbackRedirect;
///
/// let redirect = LoopbackRedirect::bind(|url| eprintln!("open {url}")).unwrap();
/// println!("redirect URI: {}", redirect.redirect_uri());
/// ```
pub struct LoopbackRedirect {
    listener: TcpListener,
    open: Box<dyn Fn(&str) + Send + Sync>,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect").field("redirect_uri", &self.redirect_uri()).finish_non_exhaustive()
    }
}

/// The path the loopback listener expects the user back at.
const CALLBACK_PATH: &str = "/callback";

impl LoopbackRedirect {
    /// Binds a free port on `127.0.0.1`; authorization URLs go to `open`. The user has five
    /// minutes to come back.
    ///
    /// # Errors
    ///
    /// The port could not be bound.
    pub fn bind(open: impl Fn(&str) + Send + Sync + 'static) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        Ok(Self { listener, open: Box::new(open), timeout: Duration::from_secs(300) })
    }

    /// How long to wait for the user (builder style).
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The redirect URI to register.
    #[must_use]
    pub fn redirect_uri(&self) -> String {
        let port = self.listener.local_addr().map(|a| a.port()).unwrap_or_default();
        format!("http://127.0.0.1:{port}{CALLBACK_PATH}")
    }

    /// Reads one request's target from `stream`, answers it, and returns the target if it is
    /// the callback.
    fn serve(stream: TcpStream) -> Option<String> {
        stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        let mut reader = BufReader::new(stream.try_clone().ok()?);
        let mut line = String::new();
        reader.by_ref().take(8192).read_line(&mut line).ok()?;
        let target = line.split_whitespace().nth(1)?.to_owned();
        let is_callback = target.split('?').next() == Some(CALLBACK_PATH);
        let (status, text) = if is_callback {
            ("200 OK", "Signed in. You can close this window and go back to the terminal.")
        } else {
            ("404 Not Found", "Not the callback.")
        };
        let mut stream = stream;
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
        is_callback.then_some(target)
    }
}

impl RedirectHandler for LoopbackRedirect {
    fn authorize(&self, url: &str) -> Result<String, String> {
        (self.open)(url);
        let deadline = Instant::now() + self.timeout;
        self.listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        while Instant::now() < deadline {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let _ = stream.set_nonblocking(false);
                    if let Some(target) = Self::serve(stream) {
                        return Ok(format!("{}{}", self.redirect_uri().trim_end_matches(CALLBACK_PATH), target));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(e.to_string()),
            }
        }
        Err("nobody came back to the redirect URI in time".to_owned())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_loopback_listener_returns_the_callback_and_ignores_other_paths() {
        let redirect = LoopbackRedirect::bind(|_| {}).unwrap().timeout(Duration::from_secs(20));
        let uri = redirect.redirect_uri();
        let port: u16 = uri.rsplit(':').next().unwrap().trim_end_matches(CALLBACK_PATH).parse().unwrap();
        let browser = std::thread::spawn(move || {
            for target in ["/favicon.ico", "/callback?code=c&state=s"] {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
                write!(stream, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
                let mut answer = String::new();
                stream.read_to_string(&mut answer).unwrap();
            }
        });
        let back = redirect.authorize("https://as.example/authorize").unwrap();
        browser.join().unwrap();
        assert_eq!(back, format!("{uri}?code=c&state=s"));
    }
}
