//! The lifecycle exchanges: `initialize` / `notifications/initialized` (legacy era) and
//! `server/discover` (stateless era, and the Auto probe).

use crate::alloc_prelude::*;
use crate::time::Instant;

use serde_json::value::RawValue;

use super::error::CloseReason;
use super::event::{Event, ReadyInfo, Route};
use super::lifecycle::{Phase, Transition};
use super::outbound::{Pending, Purpose};
use super::{ClientMode, Local, PeerCaps, ProtocolError, Role, Session};
use crate::jsonrpc::{ErrorObject, ErrorResponse, Notification, Request, RequestId, Response};
use crate::schema::lifecycle::{
    ClientCapabilities, DiscoverResult, InitializeRequestParams, InitializeResult, ServerCapabilities,
};
use crate::schema::{meta_keys, CacheScope, ForRevision, Implementation, Meta};
use crate::session::{CallError, LocalError};
use crate::version::{accept_server_version, negotiate_initialize, Feature, ProtocolVersion};

impl<R: Role> Session<R> {
    /// Moves to the phase `t` leads to; a refused transition closes the session.
    pub(super) fn transition(&mut self, t: Transition) {
        if !self.enter(t) {
            self.shutdown(CloseReason::Internal(format!("invalid lifecycle transition {t:?} from {:?}", self.phase)));
        }
    }

    /// Moves to the phase `t` leads to, if the lifecycle table allows it: the one place the
    /// phase is written. Whether it moved.
    pub(super) fn enter(&mut self, t: Transition) -> bool {
        match self.phase.next(t) {
            Some(next) => {
                self.phase = next;
                true
            }
            None => false,
        }
    }

    // ---- client ----

    pub(super) fn start_initialize(&mut self, now: Instant) {
        let Local::Client(config) = &self.local else { return };
        if self.phase == Phase::Closed {
            return;
        }
        let Some(version) = config.session.versions.iter().copied().filter(|v| v.supports(Feature::Initialize)).max()
        else {
            self.shutdown(CloseReason::Misconfigured(
                "no protocol revision with an initialize handshake is configured".into(),
            ));
            return;
        };
        // `extensions` is 2026-07-28's: no revision with a handshake defines it.
        let capabilities = ClientCapabilities { extensions: None, ..config.capabilities.clone() };
        let params = InitializeRequestParams::new(version.as_str(), capabilities, config.session.info.clone());
        let pending =
            Pending::new("initialize".into(), Purpose::Initialize, now, self.handshake_left(now), None, false);
        let id = self.outbound.next_id();
        self.outbound.insert(id.clone(), pending);
        match Request::new(id, "initialize", Some(params)) {
            Ok(req) => self.transmit(Route::Connection, req.into()),
            Err(e) => return self.shutdown(CloseReason::Encode(format!("cannot encode initialize: {e}"))),
        }
        self.transition(Transition::HandshakeStarted);
    }

    pub(super) fn start_discover(&mut self, now: Instant) {
        let Local::Client(config) = &self.local else { return };
        if !config.session.versions.contains(&ProtocolVersion::V2026_07_28) {
            return self.fall_back(now, "2026-07-28 is not configured");
        }
        let timeout = match config.mode {
            ClientMode::Auto => config.discover_timeout.min(self.handshake_left(now)),
            _ => self.handshake_left(now),
        };
        self.transition(Transition::DiscoveryStarted);
        let pending = Pending::new("server/discover".into(), Purpose::Discover, now, timeout, None, false);
        let params = match self.stamp_request(None) {
            Ok(p) => p,
            Err(e) => return self.shutdown(CloseReason::Encode(format!("cannot encode server/discover: {e}"))),
        };
        let id = self.outbound.next_id();
        self.outbound.insert(id.clone(), pending);
        self.transmit(Route::Connection, Request { id, method: "server/discover".into(), params }.into());
    }

    /// The Auto probe failed: try `initialize`; in Stateless mode the session cannot open.
    pub(super) fn fall_back(&mut self, now: Instant, why: &str) {
        let auto = matches!(&self.local, Local::Client(c) if c.mode == ClientMode::Auto);
        if auto {
            if self.phase == Phase::Discovering {
                self.transition(Transition::FallBackToInitialize);
            }
            self.start_initialize(now);
        } else {
            self.fail_handshake(ProtocolError::Handshake(format!("server/discover failed: {why}")));
        }
    }

    /// What is left of the handshake's time at `now`.
    fn handshake_left(&self, now: Instant) -> core::time::Duration {
        self.handshake_deadline.map_or(core::time::Duration::MAX, |deadline| deadline.saturating_duration_since(now))
    }

    /// The handshake's own request timed out: an Auto probe falls back to `initialize`;
    /// anything else ends the handshake, out of time.
    pub(super) fn handshake_timed_out(&mut self, now: Instant, purpose: Purpose) {
        let Local::Client(config) = &self.local else { return };
        let (auto, after) = (config.mode == ClientMode::Auto, config.handshake_timeout);
        match purpose {
            Purpose::Discover if auto => self.fall_back(now, "no answer before the probe deadline"),
            _ => self.fail_handshake(ProtocolError::HandshakeTimedOut { after }),
        }
    }

    pub(super) fn fail_handshake(&mut self, error: ProtocolError) {
        self.emit(Event::PeerMisbehaved(error.clone()));
        self.shutdown(CloseReason::Handshake(error));
    }

    /// A response to the session's own `initialize` or `server/discover`.
    pub(super) fn on_handshake_response(
        &mut self,
        now: Instant,
        purpose: Purpose,
        outcome: Result<Box<RawValue>, ErrorObject>,
    ) {
        match (purpose, outcome) {
            (Purpose::Initialize, Ok(raw)) => self.on_initialize_result(now, &raw),
            (Purpose::Initialize, Err(e)) => self.fail_handshake(ProtocolError::Handshake(e.to_string())),
            (Purpose::Discover, Ok(raw)) => self.on_discover_result(now, &raw),
            (Purpose::Discover, Err(e)) if self.legacy_version_offered(&e) => {
                // A server that speaks the new error codes but only legacy revisions (say, a
                // 2026-07-28-aware endpoint configured for the legacy era): initialize.
                self.fall_back(now, "the server supports only legacy revisions");
            }
            (Purpose::Discover, Err(e)) if is_modern_error(&e) => {
                let why = match e.code {
                    crate::jsonrpc::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => {
                        ProtocolError::UnsupportedVersion(e.data.map(|d| d.to_string()).unwrap_or_default())
                    }
                    _ => ProtocolError::Handshake(format!("server/discover failed: {e}")),
                };
                self.fail_handshake(why);
            }
            (Purpose::Discover, Err(e)) => self.fall_back(now, &e.message),
            (Purpose::App, _) => {}
        }
    }

    fn on_initialize_result(&mut self, now: Instant, raw: &RawValue) {
        let result: InitializeResult = match serde_json::from_str(raw.get()) {
            Ok(r) => r,
            Err(e) => {
                return self.fail_handshake(ProtocolError::Handshake(format!("malformed initialize result: {e}")))
            }
        };
        let legacy: Vec<ProtocolVersion> =
            self.config().versions.iter().copied().filter(|v| v.supports(Feature::Initialize)).collect();
        let Ok(version) = accept_server_version(&result.protocol_version, &legacy) else {
            return self.fail_handshake(ProtocolError::UnsupportedVersion(result.protocol_version));
        };
        self.version = Some(version);
        self.peer = Some(result.server_info);
        self.peer_caps = PeerCaps::Server(result.capabilities, result.instructions);
        if let Ok(n) = Notification::new("notifications/initialized", None::<()>) {
            self.transmit(Route::Connection, n.into());
        }
        self.become_ready(now);
    }

    fn on_discover_result(&mut self, now: Instant, raw: &RawValue) {
        let result: DiscoverResult = match serde_json::from_str(raw.get()) {
            Ok(r) => r,
            Err(e) => return self.fall_back(now, &format!("malformed result: {e}")),
        };
        let stateless = ProtocolVersion::V2026_07_28;
        if !result.supported_versions.iter().any(|v| v == stateless.as_str()) {
            return self.fall_back(now, "the server does not support 2026-07-28");
        }
        self.version = Some(stateless);
        self.peer = result
            .meta
            .as_ref()
            .and_then(|m| m.get(meta_keys::SERVER_INFO))
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        self.peer_caps = PeerCaps::Server(result.capabilities, result.instructions);
        self.become_ready(now);
    }

    /// Enters Ready, announces it, and sends what was queued.
    pub(super) fn become_ready(&mut self, _now: Instant) {
        self.transition(Transition::HandshakeDone);
        if self.phase != Phase::Ready {
            return;
        }
        self.announce_ready();
        while let Some((id, method, params)) = self.queued.pop_front() {
            if self.outbound.get(&id).is_none() {
                continue;
            }
            let checked = self.check_outgoing(&method).and_then(|()| self.stamp_request(params));
            match checked {
                Ok(params) => self.transmit(Route::Connection, Request { id, method, params }.into()),
                Err(e) => {
                    self.outbound.remove(&id);
                    self.finish(id, Err(CallError::Local(LocalError::from(e))));
                }
            }
        }
    }

    /// Emits `Event::Ready`; called once, on the one transition into Ready.
    fn announce_ready(&mut self) {
        let Some(version) = self.version else { return };
        let info = ReadyInfo {
            version,
            peer: self.peer.clone().unwrap_or_else(|| Implementation::new("", "")),
            server_capabilities: self.peer_caps.server().cloned(),
            client_capabilities: self.peer_caps.client().cloned(),
            instructions: self.peer_caps.instructions().map(str::to_owned),
        };
        self.emit(Event::Ready(Box::new(info)));
    }

    // ---- server ----

    /// Whether the stateless-only server can answer `initialize` at all.
    fn speaks_no_legacy(&self) -> bool {
        match &self.local {
            Local::Server(config) => !config.session.versions.iter().any(|v| v.supports(Feature::Initialize)),
            Local::Client(_) => false,
        }
    }

    pub(super) fn reply_error(&mut self, route: Route, id: RequestId, error: ErrorObject) {
        let batch = self.batches.collecting;
        self.reply(route, batch, ErrorResponse { id: Some(id), error }.into());
    }

    pub(super) fn reply_ok<T: serde::Serialize>(&mut self, route: Route, id: RequestId, result: &T) {
        match Response::new(id.clone(), result) {
            Ok(resp) => {
                let batch = self.batches.collecting;
                self.reply(route, batch, resp.into());
            }
            Err(e) => self.reply_error(route, id, ErrorObject::internal(e.to_string())),
        }
    }

    pub(super) fn on_initialize(&mut self, route: Route, req: Request) {
        let Local::Server(config) = &self.local else { return };
        if self.speaks_no_legacy() {
            let supported: Vec<&str> = config.session.versions.iter().rev().map(|v| v.as_str()).collect();
            let requested = req.params_as::<InitializeRequestParams>().map(|p| p.protocol_version).unwrap_or_default();
            let error = ErrorObject::invalid_params("Unsupported protocol version")
                .with_data(serde_json::json!({"supported": supported, "requested": requested}));
            return self.reply_error(route, req.id, error);
        }
        if self.phase != Phase::AwaitingPeer {
            self.emit(Event::PeerMisbehaved(ProtocolError::Unexpected {
                method: req.method,
                why: "the session is already initialized".into(),
            }));
            return self.reply_error(route, req.id, ErrorObject::invalid_request("the session is already initialized"));
        }
        let params: InitializeRequestParams = match req.params_as() {
            Ok(p) => p,
            Err(e) => {
                return self.reply_error(
                    route,
                    req.id,
                    ErrorObject::invalid_params(format!("Invalid initialize params: {e}")),
                )
            }
        };
        let Some(version) = negotiate_initialize(&params.protocol_version, &config.session.versions) else {
            let supported: Vec<&str> = config.session.versions.iter().map(|v| v.as_str()).collect();
            let error = ErrorObject::invalid_params("Unsupported protocol version")
                .with_data(serde_json::json!({"supported": supported, "requested": params.protocol_version}));
            return self.reply_error(route, req.id, error);
        };
        let result = InitializeResult {
            protocol_version: version.as_str().into(),
            // `extensions` is 2026-07-28's: no revision with a handshake defines it; core
            // tasks came with 2025-11-25.
            capabilities: ServerCapabilities {
                extensions: None,
                tasks: config.capabilities.tasks.clone().filter(|_| version.supports(Feature::Tasks)),
                ..config.capabilities.clone()
            },
            server_info: config.session.info.clone(),
            instructions: config.instructions.clone(),
            meta: None,
            extra: Meta::new(),
        };
        self.version = Some(version);
        self.peer = Some(params.client_info);
        self.peer_caps = PeerCaps::Client(params.capabilities);
        self.reply_ok(route, req.id, &result);
        self.transition(Transition::HandshakeStarted);
    }

    pub(super) fn on_initialized(&mut self, now: Instant) {
        if self.phase == Phase::Initializing {
            self.become_ready(now);
        }
    }

    /// Answers `server/discover` from the configuration.
    pub(super) fn on_discover(&mut self, route: Route, id: RequestId) {
        let Local::Server(config) = &self.local else { return };
        if !config.session.versions.iter().any(|v| v.supports(Feature::Discover)) {
            return self.reply_error(route, id, ErrorObject::method_not_found("server/discover"));
        }
        let mut meta = Meta::new();
        if let Ok(info) = serde_json::to_value(&config.session.info) {
            meta.insert(meta_keys::SERVER_INFO.into(), info);
        }
        let mut result = DiscoverResult {
            supported_versions: config.session.versions.iter().rev().map(|v| v.as_str().to_owned()).collect(),
            // Core tasks are 2025-11-25's; from 2026-07-28 they are an extension.
            capabilities: ServerCapabilities { tasks: None, ..config.capabilities.clone() },
            instructions: config.instructions.clone(),
            meta: Some(meta),
            cache_scope: Some(CacheScope::Public),
            ..DiscoverResult::default()
        };
        result.adapt_to(ProtocolVersion::V2026_07_28);
        self.reply_ok(route, id, &result);
    }
}

impl<R: Role> Session<R> {
    /// Whether `e` is an unsupported-version error whose `supported` list holds a legacy
    /// revision this side is configured for.
    fn legacy_version_offered(&self, e: &ErrorObject) -> bool {
        if e.code != crate::jsonrpc::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
            return false;
        }
        let supported = e.data.as_ref().and_then(|d| d.get("supported")).and_then(serde_json::Value::as_array);
        supported
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .filter_map(ProtocolVersion::parse)
            .any(|v| !v.supports(Feature::Stateless) && self.config().versions.contains(&v))
    }
}

/// An error only a 2026-07-28 server sends (the MCP-reserved range -32020..=-32099): the server
/// is modern, so falling back to `initialize` would be wrong.
fn is_modern_error(e: &ErrorObject) -> bool {
    e.code.is_mcp_reserved()
}
