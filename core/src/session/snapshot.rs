//! A legacy server session as a record: what it needs to go on in another process (behind a
//! load balancer, after a restart) without replaying `initialize` through the application.

use crate::alloc_prelude::*;
use serde::{Deserialize, Serialize};

use super::lifecycle::{Phase, Transition};
use super::{PeerCaps, Server, ServerConfig, Session};
use crate::schema::lifecycle::ClientCapabilities;
use crate::schema::{Implementation, LoggingLevel};
use crate::version::{Feature, ProtocolVersion};

/// What an initialized legacy server session knows about its client: the negotiated revision,
/// the client's info and capabilities, the log level it chose, and where request ids go on.
/// Requests in flight are not part of it: take snapshots of idle sessions (every HTTP request
/// ends with the session idle again).
///
/// Serialize it with serde (JSON for a shared session store).
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::schema::Implementation;
/// use talaria_core::session::{Output, Server, ServerConfig, Session, SessionSnapshot};
///
/// let config = ServerConfig::new(Implementation::new("s", "1"));
/// let mut server = Session::<Server>::new(config.clone());
/// let now = Instant::now();
/// server.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}
/// {"jsonrpc":"2.0","method":"notifications/initialized"}
/// "#);
/// while server.poll_output().is_some() {}
/// let record = serde_json::to_string(&server.snapshot().unwrap()).unwrap();
///
/// // Elsewhere, later:
/// let snapshot: SessionSnapshot = serde_json::from_str(&record).unwrap();
/// let mut restored = Session::<Server>::restore(config, snapshot);
/// assert!(restored.phase().is_ready());
/// assert_eq!(restored.peer_info().unwrap().name, "c");
/// restored.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
/// assert!(matches!(restored.poll_output(), Some(Output::Transmit { .. })), "answered without a new handshake");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionSnapshot {
    /// The negotiated revision.
    pub version: ProtocolVersion,
    /// The client's implementation info.
    pub client_info: Implementation,
    /// The client's capabilities.
    pub client_capabilities: ClientCapabilities,
    /// The level `logging/setLevel` chose, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// The number the server's next request id carries.
    pub next_request_id: i64,
    /// `initialize` was answered but `notifications/initialized` has not arrived yet: a
    /// session is stored from its first exchange on, since behind a load balancer the
    /// handshake's second message may reach another process.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub handshake_pending: bool,
    /// Legacy era: the resource URIs the client subscribed to (`resources/subscribe`), filled
    /// in by the server endpoint ([`crate::server::Endpoint::snapshot`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<String>,
    /// The application's own state for this session, as its hook wrote it (the adapter's
    /// session-state hook): restored through the hook, never by replaying `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<serde_json::Value>,
    /// The latest writes to a shared session store this record descends from, oldest first:
    /// each names one write (by a process, once). A store that writes only over the record
    /// expected keeps one line of records, so a record naming a write holds that write's
    /// changes. A process whose write failed in a way that leaves open whether it landed (a
    /// timeout after the store ran it) learns so from a later record, even one another
    /// process merged over it, and then does not apply its changes a second time. Set by the
    /// HTTP layer when it stores a record; a live session's snapshot has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
}

impl Session<Server> {
    /// A record of this session, if it is a legacy session whose `initialize` was answered
    /// (the stateless era has no session to keep).
    #[must_use]
    pub fn snapshot(&self) -> Option<SessionSnapshot> {
        let version = self.version.filter(|v| !v.supports(Feature::Stateless))?;
        if !matches!(self.phase, Phase::Ready | Phase::Initializing) {
            return None;
        }
        Some(SessionSnapshot {
            version,
            client_info: self.peer.clone().unwrap_or_else(|| Implementation::new("", "")),
            client_capabilities: self.peer_caps.client().cloned().unwrap_or_default(),
            log_level: self.log_level,
            next_request_id: self.outbound.peek_next(),
            handshake_pending: self.phase == Phase::Initializing,
            subscriptions: Vec::new(),
            app: None,
            writes: Vec::new(),
        })
    }

    /// A session that goes on from `snapshot`, ready for requests, served with `config`.
    #[must_use]
    pub fn restore(config: impl Into<alloc::sync::Arc<ServerConfig>>, snapshot: SessionSnapshot) -> Self {
        let mut session = Self::new(config);
        session.transition(Transition::HandshakeStarted);
        if !snapshot.handshake_pending {
            session.transition(Transition::HandshakeDone);
        }
        session.version = Some(snapshot.version);
        session.peer = Some(snapshot.client_info);
        session.peer_caps = PeerCaps::Client(snapshot.client_capabilities);
        session.log_level = snapshot.log_level;
        session.outbound.resume_at(snapshot.next_request_id);
        session
    }

    /// Takes in a newer record of this same session that another process stored (its log
    /// level, the end of its handshake, its request numbering), keeping what is under way
    /// here: requests in flight, streams, pending server-to-client requests.
    pub fn absorb(&mut self, snapshot: &SessionSnapshot) {
        if self.phase == Phase::Initializing && !snapshot.handshake_pending {
            self.transition(Transition::HandshakeDone);
        }
        self.log_level = snapshot.log_level;
        self.outbound.resume_at(snapshot.next_request_id);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use serde_json::json;

    use super::*;
    use crate::session::{Output, RequestOptions, Route};
    use crate::test_clock::t0;

    fn config() -> ServerConfig {
        let caps = crate::schema::lifecycle::ServerCapabilities {
            logging: Some(crate::schema::JsonObject::new()),
            ..Default::default()
        };
        ServerConfig::new(Implementation::new("s", "1")).with_capabilities(caps)
    }

    fn initialized(version: &str) -> Session<Server> {
        let mut server = Session::<Server>::new(config());
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": version,
            "capabilities": {"sampling": {}}, "clientInfo": {"name": "c", "version": "2"}}});
        server.handle_frame(t0(), Route::Connection, init.to_string().as_bytes());
        server.handle_frame(t0(), Route::Connection, br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server.handle_frame(
            t0(),
            Route::Connection,
            br#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}"#,
        );
        while server.poll_output().is_some() {}
        server
    }

    #[test]
    fn only_initialized_legacy_sessions_have_a_snapshot() {
        let fresh = Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")));
        assert!(fresh.snapshot().is_none(), "no handshake yet");
        let snapshot = initialized("2025-06-18").snapshot().unwrap();
        assert_eq!(snapshot.version, ProtocolVersion::V2025_06_18);
        assert_eq!(snapshot.client_info.version, "2");
        assert!(snapshot.client_capabilities.sampling.is_some());
        assert_eq!(snapshot.log_level, Some(LoggingLevel::Error));
    }

    #[test]
    fn a_restored_session_keeps_its_ids_and_its_client() {
        let mut original = initialized("2025-06-18");
        let first = original.send_request(t0(), "ping", None, RequestOptions::default()).unwrap();
        let snapshot: SessionSnapshot =
            serde_json::from_value(serde_json::to_value(original.snapshot().unwrap()).unwrap()).unwrap();
        let mut restored = Session::<Server>::restore(config(), snapshot);
        let next = restored.send_request(t0(), "sampling/createMessage", None, RequestOptions::default()).unwrap();
        assert_ne!(first, next, "ids are not reused across processes");
        assert!(
            matches!(restored.poll_output(), Some(Output::Transmit { .. })),
            "the client's sampling capability holds"
        );
        while restored.poll_output().is_some() {}
        assert!(!restored.log(LoggingLevel::Warning, None, json!("quiet")).unwrap(), "the log level holds");
        assert!(restored.log(LoggingLevel::Critical, None, json!("loud")).unwrap());
    }

    #[test]
    fn a_session_stored_mid_handshake_finishes_it_and_takes_in_newer_records() {
        let mut server = Session::<Server>::new(config());
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "c", "version": "2"}}});
        server.handle_frame(t0(), Route::Connection, init.to_string().as_bytes());
        while server.poll_output().is_some() {}
        let pending = server.snapshot().unwrap();
        assert!(pending.handshake_pending, "stored before notifications/initialized");
        // Another process holds it and takes in the record stored once the handshake ended.
        let mut elsewhere = Session::<Server>::restore(config(), pending);
        let done = initialized("2025-06-18").snapshot().unwrap();
        assert!(!done.handshake_pending);
        elsewhere.absorb(&done);
        assert!(!elsewhere.snapshot().unwrap().handshake_pending, "the handshake ended");
        assert!(!elsewhere.log(LoggingLevel::Warning, None, json!("quiet")).unwrap(), "the newer log level holds");
    }
}
