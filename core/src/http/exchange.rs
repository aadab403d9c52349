//! What one HTTP request to the MCP endpoint means, decided before any JSON-RPC is read:
//! which era, which session, or which error status the transport owes.

use crate::alloc_prelude::*;
use core::time::Duration;

use super::headers::{
    check_stateless_request, HeaderLookup, LAST_EVENT_ID, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID,
};
use super::ids::looks_like_session_id;
use crate::jsonrpc::scan::Word;
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::version::{Feature, ProtocolVersion};

/// The HTTP method of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMethod {
    /// `GET`: open a stream of server messages (legacy era).
    Get,
    /// `POST`: one JSON-RPC message (or a 2025-03-26 batch).
    Post,
    /// `DELETE`: end a session (legacy era).
    Delete,
    /// Anything else.
    Other,
}

impl HttpMethod {
    /// The method named `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::exchange::HttpMethod;
    ///
    /// assert_eq!(HttpMethod::parse("POST"), HttpMethod::Post);
    /// assert_eq!(HttpMethod::parse("PATCH"), HttpMethod::Other);
    /// ```
    #[must_use]
    pub fn parse(name: &str) -> Self {
        match name {
            "GET" => Self::Get,
            "POST" => Self::Post,
            "DELETE" => Self::Delete,
            _ => Self::Other,
        }
    }
}

/// How the endpoint is configured.
///
/// # Examples
///
/// ```
/// use talaria_core::http::exchange::EndpointConfig;
///
/// let config = EndpointConfig::default().allow_origin("https://app.example");
/// assert!(config.origin_allowed("http://localhost:6274"));
/// assert!(config.origin_allowed("https://app.example"));
/// assert!(!config.origin_allowed("https://evil.example"));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EndpointConfig {
    /// The largest request body accepted (413 past it). Default 4 MiB.
    pub max_body: usize,
    /// Origins allowed besides localhost ones (403 for others).
    pub allowed_origins: Vec<String>,
    /// Whether GET opens a stream of server messages (405 when not). Default on.
    pub get_stream: bool,
    /// Whether the stateless era (2026-07-28) is served. Default on.
    pub stateless: bool,
    /// Whether the legacy era (sessions, 2025-03-26 .. 2025-11-25) is served. Default on.
    pub legacy: bool,
    /// How long an unused legacy session lives. Default 30 minutes.
    pub idle_timeout: Duration,
    /// The most legacy sessions at once. Default 10 000. A new session in a full table takes
    /// the place of one never used since it was opened, or else of the least recently used if
    /// idle for a second ([`sessions::EVICTABLE_AFTER`](super::sessions::EVICTABLE_AFTER));
    /// 503 only when every session is in use.
    pub max_sessions: usize,
    /// The most legacy sessions one peer holds at once (its authorized identity if the server
    /// has an authorization hook that names callers, else its IP address). Default 1 000: past
    /// it, the peer's own oldest unused (or least recently used) session makes room, so one
    /// peer cannot fill the table. Behind a reverse proxy every client has the proxy's
    /// address: raise it there, or name callers.
    pub max_sessions_per_peer: usize,
    /// The `Host` values accepted (names, with or without a port), against DNS rebinding; 403
    /// for others. `None`: any host (a server bound to a public address behind a proxy).
    pub allowed_hosts: Option<Vec<String>>,
    /// Whether requests must say what they carry and accept what the spec says they must, as
    /// the official SDKs require: a POST `Content-Type: application/json` (415 otherwise) and
    /// `Accept` covering `application/json` and `text/event-stream`, a GET `Accept` covering
    /// `text/event-stream` (406 otherwise). Default on; off lets clients that send neither in.
    pub check_media_types: bool,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            max_body: 4 * 1024 * 1024,
            allowed_origins: Vec::new(),
            get_stream: true,
            stateless: true,
            legacy: true,
            idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_sessions_per_peer: 1_000,
            allowed_hosts: None,
            check_media_types: true,
        }
    }
}

impl EndpointConfig {
    /// Allows browsers from `origin` as well as localhost.
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Accepts only `Host` headers naming localhost (what a server bound to a loopback address
    /// should do), plus `extra` names.
    #[must_use]
    pub fn localhost_only(mut self, extra: &[&str]) -> Self {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].iter().map(|h| (*h).to_owned()).collect();
        hosts.extend(extra.iter().map(|h| (*h).to_owned()));
        self.allowed_hosts = Some(hosts);
        self
    }

    /// Whether the `Host` header `host` is accepted.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::exchange::EndpointConfig;
    ///
    /// let config = EndpointConfig::default().localhost_only(&[]);
    /// assert!(config.host_allowed("127.0.0.1:8080"));
    /// assert!(config.host_allowed("localhost"));
    /// assert!(!config.host_allowed("attacker.example:8080"));
    /// assert!(EndpointConfig::default().host_allowed("anything.example"));
    /// ```
    #[must_use]
    pub fn host_allowed(&self, host: &str) -> bool {
        let Some(allowed) = &self.allowed_hosts else { return true };
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !name.ends_with(':') => name,
            _ => host,
        };
        allowed.iter().any(|a| a.eq_ignore_ascii_case(name) || a.eq_ignore_ascii_case(host))
    }

    /// Whether a browser at `origin` may call the endpoint: localhost origins, and those
    /// allowed by configuration.
    #[must_use]
    pub fn origin_allowed(&self, origin: &str) -> bool {
        if self.allowed_origins.iter().any(|o| o == origin) {
            return true;
        }
        let Some((scheme, rest)) = origin.split_once("://") else { return false };
        if scheme != "http" && scheme != "https" {
            return false;
        }
        let host = match rest.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            _ => rest,
        };
        matches!(host, "localhost" | "127.0.0.1" | "[::1]")
    }
}

/// One request to the MCP endpoint, as the adapter read it.
#[derive(Debug, Clone, Copy)]
pub struct HttpRequest<'a, H: HeaderLookup + ?Sized> {
    /// The method.
    pub method: HttpMethod,
    /// The headers.
    pub headers: &'a H,
    /// The body (empty for GET and DELETE).
    pub body: &'a [u8],
}

/// What the request is, once the transport checks passed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exchange {
    /// A stateless (2026-07-28) POST: handled on its own, no session.
    Stateless {
        /// The revision the headers name.
        version: ProtocolVersion,
    },
    /// A legacy POST carrying `initialize`: a new session, whose id the response carries.
    Initialize,
    /// A legacy POST on an existing session (look it up: unknown -> [`Refusal::unknown_session`]).
    Post {
        /// The session id.
        session: String,
    },
    /// A legacy GET opening the session's stream of server messages, resumed after
    /// `last_event_id` if given.
    OpenStream {
        /// The session id.
        session: String,
        /// Where to resume.
        last_event_id: Option<String>,
    },
    /// A legacy DELETE ending the session.
    Terminate {
        /// The session id.
        session: String,
    },
}

/// An error reply the transport owes before the JSON-RPC layer sees anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// A JSON-RPC error response to send as the body (`application/json`), if any.
    pub body: Option<Vec<u8>>,
    /// Extra headers (`Allow` on 405).
    pub headers: Vec<(&'static str, String)>,
}

impl Refusal {
    fn new(status: u16, error: Option<ErrorObject>) -> Self {
        let body = error.map(|e| error_body(None, &e));
        Self { status, body, headers: Vec::new() }
    }

    /// 404 for a session id that is unknown or expired (the client re-initializes).
    #[must_use]
    pub fn unknown_session() -> Self {
        Self::new(404, Some(ErrorObject::new(crate::jsonrpc::ErrorCode(-32001), "Session not found")))
    }

    /// 401 with the `WWW-Authenticate` challenge `www_authenticate` (for an authorization
    /// hook; [`ProtectedResource::check`](crate::auth::resource::ProtectedResource::check)
    /// builds the full OAuth ones).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::exchange::Refusal;
    ///
    /// let refusal = Refusal::unauthorized(r#"Bearer realm="mcp""#);
    /// assert_eq!((refusal.status, refusal.headers[0].0), (401, "WWW-Authenticate"));
    /// ```
    #[must_use]
    pub fn unauthorized(www_authenticate: &str) -> Self {
        let mut refusal = Self::new(401, None);
        refusal.headers.push(("WWW-Authenticate", www_authenticate.to_owned()));
        refusal
    }

    /// 400 with an invalid-request error saying `why`.
    #[must_use]
    pub fn bad_request(why: &str) -> Self {
        Self::new(400, Some(ErrorObject::invalid_request(why)))
    }

    /// 503 when the session store (shared between processes) cannot be reached: the client
    /// tries again, and the session goes on once the store is back.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::exchange::Refusal;
    ///
    /// assert_eq!(Refusal::store_unavailable().status, 503);
    /// ```
    #[must_use]
    pub fn store_unavailable() -> Self {
        Self::new(503, Some(ErrorObject::server_error("Session store unavailable; try again shortly")))
    }

    /// 503 when the session cap is reached.
    #[must_use]
    pub fn too_many_sessions() -> Self {
        Self::new(503, Some(ErrorObject::server_error("Too many sessions; try again later")))
    }

    /// 500 with an internal error saying `why` (the server could not serve the exchange, e.g.
    /// it failed to open the session).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::exchange::Refusal;
    ///
    /// assert_eq!(Refusal::internal("no connection").status, 500);
    /// ```
    #[must_use]
    pub fn internal(why: &str) -> Self {
        Self::new(500, Some(ErrorObject::internal(why)))
    }

    fn method_not_allowed(allow: &str) -> Self {
        let mut refusal = Self::new(405, None);
        refusal.headers.push(("Allow", allow.to_owned()));
        refusal
    }
}

/// A JSON-RPC error response as bytes.
///
/// # Examples
///
/// ```
/// use talaria_core::http::exchange::error_body;
/// use talaria_core::jsonrpc::ErrorObject;
///
/// let body = error_body(None, &ErrorObject::invalid_request("no"));
/// assert!(String::from_utf8(body).unwrap().starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#));
/// ```
#[must_use]
pub fn error_body(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    crate::jsonrpc::Message::from(crate::jsonrpc::ErrorResponse { id: id.cloned(), error: error.clone() }).to_vec()
}

/// Whether `body` holds an `initialize` request (a lone one, or inside a batch).
fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow, default)]
        method: Option<&'a str>,
    }
    static INITIALIZE: Word = Word::new("\"initialize\"");
    if !INITIALIZE.may_be_in(body) {
        return false;
    }
    match serde_json::from_slice::<Method<'_>>(body) {
        Ok(m) => m.method == Some("initialize"),
        Err(_) => serde_json::from_slice::<Vec<Method<'_>>>(body)
            .is_ok_and(|batch| batch.iter().any(|m| m.method == Some("initialize"))),
    }
}

/// Decides what `request` means, or which error the transport owes.
///
/// The era comes from `MCP-Protocol-Version`: a stateless revision makes a stateless
/// exchange (its mirrored headers checked, `-32020`), anything older (or no header, read as
/// 2025-03-26) a legacy one, where every request but `initialize` needs a session id.
///
/// # Errors
///
/// A [`Refusal`]: 403 (origin), 405 (method or era), 413 (body), 415 (content type), 400
/// (unsupported version, missing session id, header mismatch).
///
/// # Examples
///
/// ```
/// use talaria_core::http::exchange::{classify, EndpointConfig, Exchange, HttpMethod, HttpRequest};
///
/// let config = EndpointConfig::default();
/// let headers = [
///     ("Content-Type", "application/json"),
///     ("Accept", "application/json, text/event-stream"),
///     ("Mcp-Session-Id", "0123456789abcdef0123456789abcdef"),
/// ];
/// let body = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
/// let exchange = classify(&HttpRequest { method: HttpMethod::Post, headers: &headers[..], body }, &config).unwrap();
/// assert_eq!(exchange, Exchange::Post { session: "0123456789abcdef0123456789abcdef".into() });
///
/// let delete = HttpRequest { method: HttpMethod::Delete, headers: &[("x", "y")][..], body: b"" };
/// assert_eq!(classify(&delete, &config).unwrap_err().status, 400, "no session id");
/// ```
pub fn classify<H: HeaderLookup + ?Sized>(
    request: &HttpRequest<'_, H>,
    config: &EndpointConfig,
) -> Result<Exchange, Refusal> {
    let headers = request.headers;
    // One value each, or the request is ambiguous (which session, which revision?).
    for name in [SESSION_ID, PROTOCOL_VERSION, METHOD, NAME] {
        if headers.header_count(name) > 1 {
            let message = format!("the {name} header is repeated");
            return Err(Refusal::new(400, Some(ErrorObject::invalid_request(&message))));
        }
    }
    if let Some(host) = headers.header("Host") {
        if !config.host_allowed(host) {
            let message = format!("host {host} is not allowed");
            return Err(Refusal::new(403, Some(ErrorObject::invalid_request(&message))));
        }
    }
    if let Some(origin) = headers.header("Origin") {
        if !config.origin_allowed(origin) {
            return Err(Refusal::new(
                403,
                Some(ErrorObject::invalid_request(&format!("origin {origin} is not allowed"))),
            ));
        }
    }
    let version = match headers.header(PROTOCOL_VERSION) {
        None => ProtocolVersion::V2025_03_26,
        Some(v) => ProtocolVersion::parse(v.trim()).ok_or_else(|| {
            let supported: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
            Refusal::new(400, Some(ErrorObject::unsupported_protocol_version(v, &supported)))
        })?,
    };
    let stateless = version.supports(Feature::Stateless);
    if (stateless && !config.stateless) || (!stateless && !config.legacy) {
        let supported: Vec<&str> = ProtocolVersion::ALL
            .iter()
            .filter(|v| if v.supports(Feature::Stateless) { config.stateless } else { config.legacy })
            .map(|v| v.as_str())
            .collect();
        return Err(Refusal::new(400, Some(ErrorObject::unsupported_protocol_version(version.as_str(), &supported))));
    }
    match request.method {
        HttpMethod::Post => classify_post(request, config, version),
        HttpMethod::Get | HttpMethod::Delete if stateless => Err(Refusal::method_not_allowed("POST")),
        HttpMethod::Get if !config.get_stream => Err(Refusal::method_not_allowed("POST, DELETE")),
        HttpMethod::Get => {
            if config.check_media_types {
                check_accept(headers, &[EVENT_STREAM])?;
            }
            let session = session_id(headers)?;
            let last_event_id = headers.header(LAST_EVENT_ID).map(str::to_owned);
            Ok(Exchange::OpenStream { session, last_event_id })
        }
        HttpMethod::Delete => Ok(Exchange::Terminate { session: session_id(headers)? }),
        HttpMethod::Other => Err(Refusal::method_not_allowed(if stateless { "POST" } else { "GET, POST, DELETE" })),
    }
}

fn classify_post<H: HeaderLookup + ?Sized>(
    request: &HttpRequest<'_, H>,
    config: &EndpointConfig,
    version: ProtocolVersion,
) -> Result<Exchange, Refusal> {
    let headers = request.headers;
    if request.body.len() > config.max_body {
        let message = format!("request body exceeds {} bytes", config.max_body);
        return Err(Refusal::new(413, Some(ErrorObject::invalid_request(&message))));
    }
    if config.check_media_types {
        check_accept(headers, &[JSON, EVENT_STREAM])?;
    }
    match headers.header("Content-Type") {
        Some(kind) => {
            let essence = kind.split(';').next().unwrap_or("").trim();
            if !essence.eq_ignore_ascii_case(JSON) {
                let message = format!("content type {essence} is not application/json");
                return Err(Refusal::new(415, Some(ErrorObject::invalid_request(&message))));
            }
        }
        None if config.check_media_types => {
            let message = "a POST must say Content-Type: application/json";
            return Err(Refusal::new(415, Some(ErrorObject::invalid_request(message))));
        }
        None => {}
    }
    if version.supports(Feature::Stateless) {
        check_stateless_request(headers, request.body).map_err(|refused| {
            let mut refusal = Refusal::new(400, None);
            refusal.body = Some(error_body(refused.id.as_ref(), &refused.error));
            refusal
        })?;
        return Ok(Exchange::Stateless { version });
    }
    if is_initialize(request.body) {
        return Ok(Exchange::Initialize);
    }
    if headers.header(SESSION_ID).is_none() && serde_json::from_slice::<serde::de::IgnoredAny>(request.body).is_err() {
        return Err(Refusal::new(400, Some(ErrorObject::parse_error("the body is not JSON"))));
    }
    Ok(Exchange::Post { session: session_id(headers)? })
}

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// 406 unless the request's `Accept` covers every type of `wanted`.
fn check_accept<H: HeaderLookup + ?Sized>(headers: &H, wanted: &[&str]) -> Result<(), Refusal> {
    let accept = headers.header("Accept").unwrap_or_default();
    if wanted.iter().all(|media| accepts(accept, media)) {
        return Ok(());
    }
    let message = format!("Not Acceptable: the client must accept {}", wanted.join(" and "));
    Err(Refusal::new(406, Some(ErrorObject::invalid_request(&message))))
}

/// Whether an `Accept` value admits `media` (`type/subtype`): listed, or covered by `type/*`
/// or `*/*`, and not with `q=0`. Other parameters are ignored.
fn accepts(accept: &str, media: &str) -> bool {
    let kind = media.split_once('/').map_or(media, |(kind, _)| kind);
    accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let range = parts.next().unwrap_or_default().trim();
        let refused =
            parts.any(|p| p.trim().strip_prefix("q=").is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)));
        let covers = range.eq_ignore_ascii_case(media)
            || range == "*/*"
            || range.split_once('/').is_some_and(|(t, s)| s == "*" && t.eq_ignore_ascii_case(kind));
        covers && !refused
    })
}

/// The request's session id: 400 when missing, 404 when it cannot be one of ours.
fn session_id<H: HeaderLookup + ?Sized>(headers: &H) -> Result<String, Refusal> {
    match headers.header(SESSION_ID) {
        None => {
            let message = format!("{SESSION_ID} header is required after initialization");
            Err(Refusal::new(400, Some(ErrorObject::invalid_request(&message))))
        }
        Some(id) if looks_like_session_id(id.trim()) => Ok(id.trim().to_owned()),
        Some(_) => Err(Refusal::unknown_session()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SID: &str = "0123456789abcdef0123456789abcdef";

    /// A POST with `headers`, plus the `Content-Type` and `Accept` a well-behaved client sends
    /// unless `headers` has its own.
    fn post(headers: &[(&str, &str)], body: &[u8]) -> Result<Exchange, Refusal> {
        let mut all = headers.to_vec();
        for (name, value) in [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")] {
            if headers.header(name).is_none() {
                all.push((name, value));
            }
        }
        classify(&HttpRequest { method: HttpMethod::Post, headers: &all[..], body }, &EndpointConfig::default())
    }

    #[test]
    fn media_types_are_checked_as_the_official_sdks_do() {
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let config = EndpointConfig::default();
        let run =
            |method, headers: &[(&str, &str)]| status(classify(&HttpRequest { method, headers, body: init }, &config));
        let json = ("Content-Type", "application/json");
        assert_eq!(run(HttpMethod::Post, &[json]), 406, "no Accept");
        assert_eq!(run(HttpMethod::Post, &[json, ("Accept", "application/json")]), 406, "no event stream");
        assert_eq!(run(HttpMethod::Post, &[json, ("Accept", "text/event-stream, application/json")]), 200);
        assert_eq!(run(HttpMethod::Post, &[json, ("Accept", "*/*")]), 200, "a wildcard covers both");
        assert_eq!(run(HttpMethod::Post, &[json, ("Accept", "application/*, text/*;q=0.5")]), 200);
        assert_eq!(run(HttpMethod::Post, &[json, ("Accept", "application/json, text/event-stream;q=0")]), 406);
        assert_eq!(run(HttpMethod::Post, &[("Accept", "*/*")]), 415, "no Content-Type");
        let stream = [("Mcp-Session-Id", SID), ("Accept", "text/event-stream")];
        assert_eq!(run(HttpMethod::Get, &stream), 200);
        assert_eq!(run(HttpMethod::Get, &stream[..1]), 406, "a GET must accept an event stream");
        assert_eq!(run(HttpMethod::Delete, &stream[..1]), 200, "DELETE needs no Accept");
        let lenient = EndpointConfig { check_media_types: false, ..EndpointConfig::default() };
        let bare =
            classify(&HttpRequest { method: HttpMethod::Post, headers: &[("x", "y")][..], body: init }, &lenient);
        assert_eq!(status(bare), 200, "off: neither is required");
    }

    fn status(result: Result<Exchange, Refusal>) -> u16 {
        result.map_or_else(|r| r.status, |_| 200)
    }

    #[test]
    fn the_table_of_refusals() {
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let stateless_call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let without_capabilities = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let cases: Vec<(&str, Result<Exchange, Refusal>, u16)> = vec![
            ("initialize needs no session", post(&[], init), 200),
            ("a legacy request without a session id", post(&[], list), 400),
            ("a session id we could not have minted", post(&[("Mcp-Session-Id", "../x")], list), 404),
            ("a foreign origin", post(&[("Origin", "https://evil.example")], init), 403),
            ("a localhost origin", post(&[("Origin", "http://localhost:5173")], init), 200),
            ("a text body", post(&[("Content-Type", "text/plain")], init), 415),
            ("json with a charset", post(&[("Content-Type", "application/json; charset=utf-8")], init), 200),
            ("an unknown revision", post(&[("MCP-Protocol-Version", "1999-01-01")], init), 400),
            ("a repeated session id", post(&[("Mcp-Session-Id", SID), ("mcp-session-id", SID)], list), 400),
            (
                "a repeated revision",
                post(&[("MCP-Protocol-Version", "2025-06-18"), ("MCP-Protocol-Version", "2025-03-26")], init),
                400,
            ),
            (
                "a repeated method",
                post(
                    &[
                        ("MCP-Protocol-Version", "2026-07-28"),
                        ("Mcp-Method", "tools/call"),
                        ("Mcp-Method", "tools/list"),
                        ("Mcp-Name", "echo"),
                    ],
                    stateless_call,
                ),
                400,
            ),
            (
                "stateless without mirrored headers",
                post(&[("MCP-Protocol-Version", "2026-07-28")], stateless_call),
                400,
            ),
            (
                "stateless with them",
                post(
                    &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")],
                    stateless_call,
                ),
                200,
            ),
            (
                "stateless without the client's capabilities",
                post(
                    &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")],
                    without_capabilities,
                ),
                400,
            ),
        ];
        for (what, result, expected) in cases {
            assert_eq!(status(result), expected, "{what}");
        }
        let big = vec![b' '; EndpointConfig::default().max_body + 1];
        assert_eq!(status(post(&[], &big)), 413);
    }

    #[test]
    fn get_and_delete_follow_the_era() {
        let config = EndpointConfig::default();
        let run = |method, headers: &[(&str, &str)]| classify(&HttpRequest { method, headers, body: b"" }, &config);
        let stateless = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Session-Id", SID)];
        assert_eq!(status(run(HttpMethod::Get, &stateless)), 405);
        assert_eq!(run(HttpMethod::Delete, &stateless).unwrap_err().headers, vec![("Allow", "POST".to_owned())]);
        let legacy = [("Mcp-Session-Id", SID), ("Last-Event-ID", "3-9"), ("Accept", "text/event-stream")];
        assert_eq!(
            run(HttpMethod::Get, &legacy).unwrap(),
            Exchange::OpenStream { session: SID.into(), last_event_id: Some("3-9".into()) }
        );
        assert_eq!(run(HttpMethod::Delete, &legacy).unwrap(), Exchange::Terminate { session: SID.into() });
        assert_eq!(status(run(HttpMethod::Other, &legacy)), 405);
        let no_get = EndpointConfig { get_stream: false, ..EndpointConfig::default() };
        let refused = classify(&HttpRequest { method: HttpMethod::Get, headers: &legacy[..], body: b"" }, &no_get);
        assert_eq!(status(refused), 405);
    }

    #[test]
    fn an_unsupported_revision_lists_the_supported_ones() {
        let refusal = post(&[("MCP-Protocol-Version", "2030-01-01")], b"{}").unwrap_err();
        let body: serde_json::Value = serde_json::from_slice(&refusal.body.unwrap()).unwrap();
        assert_eq!(body["error"]["code"], -32022);
        assert_eq!(body["error"]["data"]["requested"], "2030-01-01");
        assert!(body["error"]["data"]["supported"].as_array().unwrap().len() == 5);
        let legacy_only = EndpointConfig { stateless: false, ..EndpointConfig::default() };
        let request = HttpRequest {
            method: HttpMethod::Post,
            headers: &[("MCP-Protocol-Version", "2026-07-28")][..],
            body: b"{}",
        };
        let refusal = classify(&request, &legacy_only).unwrap_err();
        let body: serde_json::Value = serde_json::from_slice(&refusal.body.unwrap()).unwrap();
        assert_eq!(body["error"]["data"]["supported"].as_array().unwrap().len(), 4);
    }
}
