//! Client-only commands: what the transport reports about requests in flight (the server
//! forgot the session, the exchange failed, the server refused a request with an HTTP error)
//! and the log level every stateless request asks for.

use crate::alloc_prelude::*;
use crate::time::Instant;

use super::lifecycle::Transition;
use super::outbound::Purpose;
use super::{Client, Local, PeerCaps, Phase, Session};
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::schema::LoggingLevel;
use crate::session::{CallError, LocalError};
use crate::version::Feature;

impl Session<Client> {
    /// The server forgot this session (HTTP 404 on an established Streamable HTTP session):
    /// every request in flight fails with [`LocalError::Closed`] giving `reason`, and a new
    /// `initialize` goes out; [`Event::Ready`](super::Event::Ready) announces the new session. Does nothing before
    /// the first handshake started, after close, or in the stateless era (which has no
    /// session to lose).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{Client, ClientConfig, ClientMode, Output, Phase, Session};
    ///
    /// let now = Instant::now();
    /// let mut client = Session::<Client>::new(ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy), now);
    /// while client.poll_output().is_some() {}
    /// client.session_lost(now, "HTTP 404");
    /// assert_eq!(client.phase(), Phase::Initializing);
    /// assert!(matches!(client.poll_output(), Some(Output::Transmit { .. })), "a new initialize");
    /// ```
    pub fn session_lost(&mut self, now: Instant, reason: &str) {
        let stateless = self.version.is_some_and(|v| v.supports(Feature::Stateless));
        if stateless || !matches!(self.phase, Phase::Initializing | Phase::Ready) {
            return;
        }
        self.fail_all(Some(reason));
        self.version = None;
        self.peer = None;
        self.peer_caps = PeerCaps::Unknown;
        self.transition(Transition::SessionLost);
        self.start_initialize(now);
    }

    /// The transport lost the exchange that carried request `id` (the connection failed or
    /// closed before the answer, an HTTP request could not be made): an application request
    /// fails with [`LocalError::Transport`] giving `why`, the session's own `initialize` or
    /// probe fails as if answered with an error. Does nothing for an id that awaits no answer.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::session::{CallError, LocalError};
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{Client, ClientConfig, ClientMode, Event, Output, RequestOptions, Session};
    ///
    /// let now = Instant::now();
    /// let config = ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy);
    /// let mut client = Session::<Client>::new(config, now);
    /// while client.poll_output().is_some() {}
    /// # let ready = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    /// # client.handle_frame(now, talaria_core::session::Route::Connection, ready);
    /// # while client.poll_output().is_some() {}
    /// let id = client.send_request(now, "ping", None, RequestOptions::default()).unwrap();
    /// client.transport_failed(now, &id, "connection reset");
    /// let failed = std::iter::from_fn(|| client.poll_output()).find_map(|out| match out {
    ///     Output::Event(Event::Response { outcome: Err(CallError::Local(e)), .. }) => Some(e),
    ///     _ => None,
    /// });
    /// assert_eq!(failed, Some(LocalError::Transport("connection reset".into())));
    /// ```
    pub fn transport_failed(&mut self, now: Instant, id: &RequestId, why: &str) {
        if self.queued.iter().any(|(q, _, _)| q == id) {
            return;
        }
        let Some(pending) = self.outbound.remove(id) else { return };
        match pending.purpose {
            Purpose::App => self.finish(id.clone(), Err(LocalError::Transport(why.to_owned()).into())),
            purpose => self.on_handshake_response(now, purpose, Err(ErrorObject::internal(why.to_owned()))),
        }
    }

    /// Sets the log level every request asks for from now on (2026-07-28, where it travels in
    /// each request's `_meta`; `None` stops asking). Legacy sessions set it with
    /// `logging/setLevel` instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::schema::{Implementation, LoggingLevel};
    /// use talaria_core::session::{Client, ClientConfig, ClientMode, Output, RequestOptions, Session};
    ///
    /// let now = Instant::now();
    /// let config = ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Stateless);
    /// let mut client = Session::<Client>::new(config, now);
    /// while client.poll_output().is_some() {}
    /// # let ready = br#"{"jsonrpc":"2.0","id":0,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"cacheScope":"public","ttlMs":0,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}"#;
    /// # client.handle_frame(now, talaria_core::session::Route::Connection, ready);
    /// # while client.poll_output().is_some() {}
    /// client.set_request_log_level(Some(LoggingLevel::Debug));
    /// client.send_request(now, "tools/list", None, RequestOptions::default()).unwrap();
    /// let sent = std::iter::from_fn(|| client.poll_output()).find_map(|out| match out {
    ///     Output::Transmit { payload, .. } => Some(String::from_utf8(payload).unwrap()),
    ///     _ => None,
    /// });
    /// assert!(sent.unwrap().contains(r#""io.modelcontextprotocol/logLevel":"debug""#));
    /// ```
    pub fn set_request_log_level(&mut self, level: Option<LoggingLevel>) {
        if let Local::Client(config) = &mut self.local {
            config.log_level = level;
        }
    }

    /// The transport refused request `id` with `error` (an HTTP error answer's JSON-RPC error,
    /// or one naming the status): the call fails with it, as a remote error, though no frame
    /// arrived (frame observers see nothing; a wire trace shows only what the server sent).
    /// Unknown ids are ignored.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::jsonrpc::ErrorObject;
    /// use talaria_core::session::CallError;
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{Client, ClientConfig, ClientMode, Event, Output, RequestOptions, Session};
    ///
    /// let now = Instant::now();
    /// let config = ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy);
    /// let mut client = Session::<Client>::new(config, now);
    /// while client.poll_output().is_some() {}
    /// # let ready = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    /// # client.handle_frame(now, talaria_core::session::Route::Connection, ready);
    /// # while client.poll_output().is_some() {}
    /// let id = client.send_request(now, "ping", None, RequestOptions::default()).unwrap();
    /// client.refused(now, &id, ErrorObject::internal("HTTP 503 from http://h/mcp"));
    /// let failed = std::iter::from_fn(|| client.poll_output()).find_map(|out| match out {
    ///     Output::Event(Event::Response { outcome: Err(CallError::Remote(e)), .. }) => Some(e.message),
    ///     _ => None,
    /// });
    /// assert_eq!(failed.as_deref(), Some("HTTP 503 from http://h/mcp"));
    /// ```
    pub fn refused(&mut self, now: Instant, id: &RequestId, error: ErrorObject) {
        if self.queued.iter().any(|(q, _, _)| q == id) {
            return;
        }
        let Some(pending) = self.outbound.remove(id) else { return };
        match pending.purpose {
            Purpose::App => self.finish(id.clone(), Err(CallError::Remote(error))),
            purpose => self.on_handshake_response(now, purpose, Err(error)),
        }
    }
}
