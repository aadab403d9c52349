//! The legacy HTTP+SSE client (2024-11-05): a GET stream that names, in its first `endpoint`
//! event, where to POST; every reply arrives on the stream.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use talaria_core::client::Endpoint;
use talaria_core::codec::SseDecoder;
use talaria_core::http::legacy::resolve_endpoint;
use talaria_core::session::{ClientMode, Route};

use crate::client::{connect, Authenticator, Client, ClientError, ClientOptions, Teardown, TraceFn};

use super::traced;
use crate::conn::{Conn, FrameSink, Outgoing};

struct Link {
    agent: ureq::Agent,
    headers: Vec<(String, String)>,
    /// The stream's URL: the resource credentials are for.
    url: String,
    post_url: String,
    /// Supplies the `Authorization` header, sent with POSTs only to the stream's origin.
    authenticator: Option<Arc<dyn Authenticator>>,
    conn: OnceLock<Weak<Conn<Endpoint>>>,
    closed: AtomicBool,
    trace: Option<TraceFn>,
}

/// Posts every frame to the endpoint URL (the server answers 202; replies come on the stream).
struct PostSink(Arc<Link>);

impl FrameSink for PostSink {
    fn send(&mut self, frames: Vec<Outgoing>) -> std::io::Result<()> {
        for frame in frames {
            let Outgoing::Frame(_, payload, _) = frame else { continue };
            let mut builder = self.0.agent.post(&self.0.post_url).header("Content-Type", "application/json");
            for (name, value) in &self.0.headers {
                builder = builder.header(name, value);
            }
            if same_origin(&self.0.url, &self.0.post_url) {
                if let Some(authorization) = self.0.authenticator.as_ref().and_then(|a| a.authorization(&self.0.url)) {
                    builder = builder.header("Authorization", authorization);
                }
            }
            match traced::send(self.0.trace.as_ref(), builder, &payload) {
                Ok(response) if response.status().is_success() => {
                    let _ = std::io::copy(&mut response.into_body().into_reader(), &mut std::io::sink());
                }
                Ok(response) => return Err(std::io::Error::other(format!("HTTP {}", response.status()))),
                Err(e) => return Err(std::io::Error::other(e)),
            }
        }
        Ok(())
    }

    fn close(&mut self) {
        self.0.closed.store(true, Ordering::Release);
    }
}

/// Whether `a` and `b` share an origin (credentials for one never go to another).
fn same_origin(a: &str, b: &str) -> bool {
    use talaria_core::auth::url::HttpUrl;
    matches!((HttpUrl::parse(a), HttpUrl::parse(b)), (Ok(a), Ok(b)) if a.origin() == b.origin())
}

struct StreamTeardown(Arc<Link>);

impl Teardown for StreamTeardown {
    fn session_id(&self) -> Option<String> {
        talaria_core::http::legacy::session_in_query(&self.0.post_url).map(str::to_owned)
    }

    fn shutdown(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        // Closes the stream's connection now (the reader is blocked on it): the server ends
        // the session when its stream ends.
        self.0.agent.clone().shutdown();
    }
}

/// Reads the stream's `message` events into the connection until it ends.
fn read_messages(link: &Link, mut body: impl Read, mut decoder: SseDecoder) {
    let mut buf = vec![0u8; 16 * 1024];
    while !link.closed.load(Ordering::Acquire) {
        let n = match body.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut frames = Vec::new();
        decoder.decode(&buf[..n], |event| {
            if let Ok(event) = event {
                traced::sse_fields(link.trace.as_ref(), &event);
                if event.event.as_deref().is_none_or(|kind| kind == "message") && !event.data.is_empty() {
                    frames.push(event.data);
                }
            }
        });
        if let Some(conn) = link.conn.get().and_then(Weak::upgrade) {
            for frame in frames {
                conn.with(|endpoint, now| endpoint.handle_frame(now, Route::Connection, frame.as_bytes()));
            }
        }
    }
    if let Some(conn) = link.conn.get().and_then(Weak::upgrade) {
        conn.with(|endpoint, now| endpoint.handle_closed(now));
    }
}

impl Client {
    /// Connects to a legacy HTTP+SSE server (2024-11-05): opens the event stream at `url`
    /// (e.g. `http://127.0.0.1:8080/sse`), POSTs messages where its `endpoint` event says.
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`] if the stream cannot be opened, names no endpoint, or the
    /// handshake fails.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    ///
    /// let client = Client::sse("http://127.0.0.1:8080/sse", &[], ClientOptions::new("me", "1"))?;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn sse(url: &str, headers: &[(&str, &str)], options: ClientOptions) -> Result<Self, ClientError> {
        let mut options = options;
        if options.config.mode == ClientMode::Auto {
            // 2026-07-28 is not spoken over this transport: no probe, straight to `initialize`.
            options.config.mode = ClientMode::Legacy;
        }
        let bad = |why: String| ClientError::Connect(format!("{url}: {why}"));
        let agent = super::one_write::agent(super::inflight::agent_config(10, &options));
        let trace = options.trace.clone();
        let authenticator = options.authenticator.clone();
        let mut attempts = 0;
        let response = loop {
            let authorization = authenticator.as_ref().and_then(|a| a.authorization(url));
            // A server that accepts the connection and never answers fails the connect after
            // the connect timeout, rather than holding it for ever.
            let mut builder = agent
                .get(url)
                .config()
                .timeout_connect(Some(options.handshake_timeout()))
                .timeout_recv_response(Some(options.handshake_timeout()))
                .build()
                .header("Accept", "text/event-stream");
            for (name, value) in headers {
                builder = builder.header(*name, *value);
            }
            if let Some(authorization) = &authorization {
                builder = builder.header("Authorization", authorization);
            }
            let response = traced::call(trace.as_ref(), builder).map_err(|e| match e {
                ureq::Error::Timeout(_) => ClientError::HandshakeTimedOut { after: options.handshake_timeout() },
                e => bad(e.to_string()),
            })?;
            if response.status().is_success() {
                break response;
            }
            let status = response.status().as_u16();
            let www_authenticate =
                response.headers().get("WWW-Authenticate").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let refused = |detail| ClientError::HttpStatus {
                url: url.to_owned(),
                status,
                www_authenticate: www_authenticate.clone(),
                detail,
            };
            let Some(authenticator) = authenticator.as_ref().filter(|_| matches!(status, 401 | 403) && attempts < 2)
            else {
                return Err(refused(None));
            };
            attempts += 1;
            let _ = std::io::copy(&mut response.into_body().into_reader(), &mut std::io::sink());
            match authenticator.challenged(url, authorization.as_deref(), status, www_authenticate.as_deref()) {
                Ok(true) => {}
                Ok(false) => return Err(refused(None)),
                Err(e) => return Err(refused(Some(e.to_string()))),
            }
        };
        let mut body = response.into_body().into_reader();
        // The first event names the POST URL.
        let mut decoder = SseDecoder::new();
        let mut endpoint = None;
        let mut pending = Vec::new();
        let mut buf = vec![0u8; 4096];
        while endpoint.is_none() {
            let n = body.read(&mut buf).map_err(|e| bad(e.to_string()))?;
            if n == 0 {
                return Err(bad("the stream ended before its endpoint event".into()));
            }
            decoder.decode(&buf[..n], |event| match event {
                Ok(event) if event.event.as_deref() == Some("endpoint") && endpoint.is_none() => {
                    traced::sse_fields(trace.as_ref(), &event);
                    endpoint = Some(event.data);
                }
                Ok(event) if !event.data.is_empty() => pending.push(event.data),
                _ => {}
            });
        }
        let data = endpoint.unwrap_or_default();
        let post_url = resolve_endpoint(url, &data).ok_or_else(|| bad(format!("bad endpoint {data:?}")))?;
        let link = Arc::new(Link {
            agent,
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            url: url.to_owned(),
            post_url,
            authenticator,
            conn: OnceLock::new(),
            closed: AtomicBool::new(false),
            trace,
        });
        let reading = Arc::clone(&link);
        connect(options, Box::new(PostSink(Arc::clone(&link))), Box::new(StreamTeardown(link)), move |conn| {
            let _ = reading.conn.set(Arc::downgrade(&conn));
            for frame in pending {
                conn.with(|endpoint, now| endpoint.handle_frame(now, Route::Connection, frame.as_bytes()));
            }
            std::thread::Builder::new()
                .name("talaria-sse-read".into())
                .spawn(move || read_messages(&reading, body, decoder))?;
            Ok(())
        })
    }

    /// Connects to `url` the way the spec's backwards-compatibility probe says: Streamable
    /// HTTP first; if that fails with an HTTP 4xx that is not a modern JSON-RPC error, the
    /// legacy HTTP+SSE transport at the same URL.
    ///
    /// # Errors
    ///
    /// The legacy attempt's error when both fail.
    pub fn http_or_sse(url: &str, headers: &[(&str, &str)], options: ClientOptions) -> Result<Self, ClientError> {
        Self::probe_http(url, headers, options).map(|(client, _)| client)
    }

    /// [`Client::http_or_sse`], saying which transport the probe settled on.
    ///
    /// # Errors
    ///
    /// As [`Client::http_or_sse`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{Client, ClientOptions};
    /// use talaria::http::HttpTransport;
    ///
    /// let (client, transport) = Client::probe_http("http://127.0.0.1:8080/mcp", &[], ClientOptions::new("me", "1"))?;
    /// if transport == HttpTransport::LegacySse {
    ///     eprintln!("an old server: {}", transport.name());
    /// }
    /// # let _ = client;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn probe_http(
        url: &str,
        headers: &[(&str, &str)],
        options: ClientOptions,
    ) -> Result<(Self, HttpTransport), ClientError> {
        let fallback = options.clone();
        let pinned_modern = options.config.mode == ClientMode::Stateless;
        match super::client::connect_http(url, headers, options) {
            Ok(client) => Ok((client, HttpTransport::Streamable)),
            Err((first, Some((status, modern))))
                if !pinned_modern && talaria_core::http::client::falls_back_to_legacy(status, modern) =>
            {
                match Self::sse(url, headers, fallback) {
                    Ok(client) => Ok((client, HttpTransport::LegacySse)),
                    Err(legacy) => Err(super::worse_refusal(first, legacy)),
                }
            }
            Err((e, _)) => Err(e),
        }
    }
}

/// Which HTTP transport a client reached a server over, when the spec's probe chose
/// ([`Client::probe_http`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpTransport {
    /// Streamable HTTP.
    Streamable,
    /// The legacy HTTP+SSE transport (2024-11-05), which the server fell back to.
    LegacySse,
}

impl HttpTransport {
    /// Its name: `streamable-http` or `sse`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::http::HttpTransport;
    ///
    /// assert_eq!(HttpTransport::LegacySse.name(), "sse");
    /// ```
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Streamable => "streamable-http",
            Self::LegacySse => "sse",
        }
    }
}
