//! Inputs: what arrives from the transport, and what the peer sent.

use crate::alloc_prelude::*;
use crate::time::Instant;

use serde_json::value::RawValue;

use super::error::CloseReason;
use super::event::{Event, IncomingRequest, Output, ReplyToken, Route, StreamId};
use super::inbound::Inflight;
use super::meta::request_meta;
use super::outbound::Purpose;
use super::{Local, Phase, ProtocolError, Role, Session};
use crate::codec::LineError;
use crate::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId};
use crate::schema::lifecycle::RequestMeta;
use crate::schema::logging::{LoggingMessageNotificationParams, SetLevelRequestParams};
use crate::schema::utilities::{CancelledNotificationParams, ProgressNotificationParams};
use crate::schema::{method_info_in, EmptyResult, Side};
use crate::session::LocalError;
use crate::version::{Feature, ProtocolVersion};

impl<R: Role> Session<R> {
    /// Feeds bytes of a newline-delimited stream (stdio, or any byte stream of JSON lines).
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        if self.phase == Phase::Closed {
            return;
        }
        let mut lines = core::mem::take(&mut self.lines);
        lines.decode(bytes, |frame| self.on_line(now, &frame));
        self.lines = lines;
    }

    /// Feeds one complete JSON text (an HTTP body, an SSE `data` field, a WebSocket message)
    /// that arrived on `route`.
    pub fn handle_frame(&mut self, now: Instant, route: Route, bytes: &[u8]) {
        if self.phase == Phase::Closed {
            return;
        }
        self.observer.see(super::FrameDirection::Received, bytes);
        let max = self.config().max_frame_len;
        if bytes.len() > max {
            self.emit(Event::PeerMisbehaved(ProtocolError::FrameTooLong { len: bytes.len(), max }));
            self.transmit(
                route,
                crate::jsonrpc::ErrorResponse { id: None, error: ErrorObject::invalid_request("frame too large") }
                    .into(),
            );
        } else if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            self.on_batch(now, route, bytes);
        } else {
            match Message::from_slice(bytes) {
                Ok(Message::Request(req)) => self.on_request(now, route, req),
                Ok(Message::Notification(n)) => self.on_notification(now, n),
                Ok(Message::Response(resp)) => self.on_response(now, resp.id, Ok(resp.result)),
                Ok(Message::Error(e)) => match e.id {
                    Some(id) => self.on_response(now, id, Err(e.error)),
                    None => {
                        self.emit(Event::PeerMisbehaved(ProtocolError::PeerError(e.error)));
                    }
                },
                Err(e) => {
                    if let Some(reply) = e.to_response() {
                        self.transmit(route, reply.into());
                    }
                    self.emit(Event::PeerMisbehaved(ProtocolError::Decode(e)));
                }
            }
        }
        if let Route::Stream(stream) = route {
            if self.phase != Phase::Closed && !self.inbound.stream_open(stream) {
                self.out.push_back(Output::StreamDone(stream));
            }
        }
    }

    /// The peer's requests still unanswered whose answers go on the HTTP response stream
    /// `stream`, in no particular order.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{Server, ServerConfig, Session, StreamId};
    ///
    /// let session = Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")));
    /// assert!(session.requests_on(StreamId(1)).is_empty());
    /// ```
    #[must_use]
    pub fn requests_on(&self, stream: StreamId) -> Vec<RequestId> {
        self.inbound.on_stream(stream)
    }

    /// An HTTP response stream ended. In the stateless era that cancels the requests that
    /// arrived on it; in the legacy era it does not (the spec says a disconnect is not a
    /// cancellation).
    pub fn handle_stream_closed(&mut self, _now: Instant, stream: StreamId) {
        if self.phase == Phase::Closed || !self.version.is_some_and(|v| v.supports(Feature::Stateless)) {
            return;
        }
        for id in self.inbound.on_stream(stream) {
            self.peer_cancelled(&id, Some("response stream closed".into()));
        }
    }

    /// The transport is gone (EOF, disconnect). A last line without newline is still read.
    pub fn handle_closed(&mut self, now: Instant) {
        if self.phase == Phase::Closed {
            return;
        }
        let mut lines = core::mem::take(&mut self.lines);
        lines.finish(|frame| self.on_line(now, &frame));
        self.lines = lines;
        self.shutdown(CloseReason::TransportClosed);
    }

    /// Time has reached a deadline from `poll_timeout`. Early or repeated calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        while self.phase != Phase::Closed {
            let Some((id, pending)) = self.outbound.pop_expired(now) else { break };
            match pending.purpose {
                Purpose::App => {
                    let before = self.queued.len();
                    self.queued.retain(|(q, _, _)| *q != id);
                    if before == self.queued.len() {
                        self.send_cancelled(&id, Some("timeout"));
                    }
                    self.finish(id, Err(LocalError::TimedOut.into()));
                }
                Purpose::Discover => {
                    self.send_cancelled(&id, Some("timeout"));
                    self.handshake_timed_out(now, Purpose::Discover);
                }
                Purpose::Initialize => self.handshake_timed_out(now, Purpose::Initialize),
            }
        }
    }

    fn on_line(&mut self, now: Instant, frame: &Result<&[u8], LineError>) {
        if self.phase == Phase::Closed {
            return;
        }
        match frame {
            Ok(bytes) => self.handle_frame(now, Route::Connection, bytes),
            Err(LineError::FrameTooLong { len, max }) => {
                let (len, max) = (*len, *max);
                self.emit(Event::PeerMisbehaved(ProtocolError::FrameTooLong { len, max }));
            }
        }
    }

    pub(super) fn on_request(&mut self, now: Instant, route: Route, req: Request) {
        if self.inbound.contains(&req.id) {
            self.emit(Event::PeerMisbehaved(ProtocolError::DuplicateId { id: req.id.clone() }));
            return self.reply_error(route, req.id, ErrorObject::invalid_request("request id already in flight"));
        }
        if self.inbound.len() >= self.config().max_inflight {
            return self.reply_error(route, req.id, ErrorObject::internal("too many requests in flight"));
        }
        let meta = match request_meta(req.params.as_deref()) {
            Ok(meta) => meta,
            Err(e) => {
                return self.reply_error(route, req.id, ErrorObject::invalid_params(format!("Invalid _meta: {e}")))
            }
        };
        match R::SIDE {
            Side::Server => self.server_request(now, route, req, meta),
            Side::Client => self.client_request(route, req, meta),
        }
    }

    fn server_request(&mut self, now: Instant, route: Route, req: Request, meta: Option<RequestMeta>) {
        if req.method == "server/discover" {
            // A probe, answered whatever version it names: it commits the client to no era
            // (an Auto client may still fall back to `initialize`).
            return self.on_discover(route, req.id);
        }
        if self.is_stateless_request(meta.as_ref()) && req.method != "initialize" {
            return self.stateless_request(now, route, req, meta);
        }
        match req.method.as_str() {
            "initialize" => return self.on_initialize(route, req),
            "ping" => return self.reply_ok(route, req.id, &EmptyResult::default()),
            _ => {}
        }
        match self.phase {
            Phase::AwaitingPeer => {
                let error = ErrorObject::invalid_request("the session is not initialized: send initialize first");
                return self.reply_error(route, req.id, error);
            }
            Phase::Initializing => {
                // A request before `notifications/initialized`: the client is ready anyway.
                self.become_ready(now);
            }
            _ => {}
        }
        if req.method == "logging/setLevel" {
            return self.on_set_level(route, req);
        }
        self.accept(route, req, meta);
    }

    /// Whether a request to this server is handled as a stateless (2026-07-28) one: the session
    /// is stateless already, or it has no era yet and either the request says a protocol
    /// version in its `_meta` or the server speaks no revision with a handshake.
    fn is_stateless_request(&self, meta: Option<&RequestMeta>) -> bool {
        match self.version {
            Some(v) => v.supports(Feature::Stateless),
            None => {
                let Local::Server(config) = &self.local else { return false };
                let no_legacy = !config.session.versions.iter().any(|v| v.supports(Feature::Initialize));
                no_legacy || meta.is_some_and(|m| m.protocol_version.is_some())
            }
        }
    }

    fn stateless_request(&mut self, now: Instant, route: Route, req: Request, meta: Option<RequestMeta>) {
        let Local::Server(config) = &self.local else { return };
        let Some(requested) = meta.as_ref().and_then(|m| m.protocol_version.clone()) else {
            let error = ErrorObject::invalid_params("Missing _meta \"io.modelcontextprotocol/protocolVersion\"");
            return self.reply_error(route, req.id, error);
        };
        let version = ProtocolVersion::parse(&requested)
            .filter(|v| v.supports(Feature::Stateless) && config.session.versions.contains(v));
        let Some(version) = version else {
            let supported: Vec<&str> = config.session.versions.iter().rev().map(|v| v.as_str()).collect();
            let error = ErrorObject::unsupported_protocol_version(&requested, &supported);
            return self.reply_error(route, req.id, error);
        };
        let Some(meta) = meta.filter(|m| m.client_capabilities.is_some()) else {
            let error = ErrorObject::invalid_params("Missing _meta \"io.modelcontextprotocol/clientCapabilities\"");
            return self.reply_error(route, req.id, error);
        };
        if self.version.is_none() {
            self.version = Some(version);
            self.peer.clone_from(&meta.client_info);
            // Ready, and settles what was queued: server requests cannot go out in this era.
            self.become_ready(now);
        }
        self.accept(route, req, Some(meta));
    }

    fn client_request(&mut self, route: Route, req: Request, meta: Option<RequestMeta>) {
        if req.method == "ping" {
            return self.reply_ok(route, req.id, &EmptyResult::default());
        }
        if !self.phase.is_ready() {
            let error = ErrorObject::invalid_request("the session is not initialized yet");
            return self.reply_error(route, req.id, error);
        }
        self.accept(route, req, meta);
    }

    fn on_set_level(&mut self, route: Route, req: Request) {
        if let Err(error) = self.gate_incoming(&req.method) {
            return self.reply_error(route, req.id, error);
        }
        match req.params_as::<SetLevelRequestParams>() {
            Ok(p) => {
                self.log_level = Some(p.level);
                self.reply_ok(route, req.id, &EmptyResult::default());
                self.emit(Event::LogLevelChanged(p.level));
            }
            Err(e) => self.reply_error(
                route,
                req.id,
                ErrorObject::invalid_params(format!("Invalid logging/setLevel params: {e}")),
            ),
        }
    }

    /// Direction, revision and capability checks for a request the peer sent.
    fn gate_incoming(&self, method: &str) -> Result<(), ErrorObject> {
        let Some(info) = method_info_in(method, self.version) else { return Ok(()) };
        let not_found = || ErrorObject::method_not_found(method);
        if !info.sent_by.allows(R::SIDE.peer()) {
            return Err(not_found());
        }
        if self.version.is_some_and(|v| !info.exists_in(v)) {
            return Err(not_found());
        }
        match info.capability {
            Some(cap) if cap.advertised_by() == R::SIDE && !self.capability_present(cap) => Err(not_found()),
            _ => Ok(()),
        }
    }

    /// Records a peer request and hands it to the application.
    fn accept(&mut self, route: Route, req: Request, meta: Option<RequestMeta>) {
        if let Err(error) = self.gate_incoming(&req.method) {
            return self.reply_error(route, req.id, error);
        }
        let stateless = self.version.is_some_and(|v| v.supports(Feature::Stateless));
        let progress_token = meta.as_ref().and_then(|m| m.progress_token.clone());
        let log_level = meta.as_ref().and_then(|m| m.log_level);
        let batch = self.batches.collecting;
        let listen = req.method == "subscriptions/listen";
        let inflight =
            Inflight { route, progress_token: progress_token.clone(), last_progress: None, log_level, batch, listen };
        self.inbound.insert(req.id.clone(), inflight);
        if let Some(b) = batch {
            self.batches.expect_reply(b);
        }
        self.emit(Event::Request(IncomingRequest {
            reply: ReplyToken { id: req.id, route },
            method: req.method,
            params: req.params,
            progress_token,
            meta: if stateless { meta.map(Box::new) } else { None },
        }));
    }

    pub(super) fn on_notification(&mut self, now: Instant, n: Notification) {
        match n.method.as_str() {
            "notifications/cancelled" => {
                if let Ok(p) = n.params_as::<CancelledNotificationParams>() {
                    if let Some(id) = p.request_id {
                        self.peer_cancelled(&id, p.reason);
                    }
                }
            }
            "notifications/progress" => {
                if let Ok(p) = n.params_as::<ProgressNotificationParams>() {
                    if let Some(id) = self.outbound.on_progress(&p.progress_token, now) {
                        self.emit(Event::Progress { id, progress: p.progress, total: p.total, message: p.message });
                    }
                }
            }
            "notifications/initialized" if R::SIDE == Side::Server => self.on_initialized(now),
            "notifications/message" if R::SIDE == Side::Client => {
                match n.params_as::<LoggingMessageNotificationParams>() {
                    Ok(p) => self.emit(Event::Log(Box::new(p))),
                    Err(e) => {
                        self.emit(Event::PeerMisbehaved(ProtocolError::Unexpected {
                            method: n.method,
                            why: e.to_string(),
                        }));
                    }
                }
            }
            _ => {
                let allowed = method_info_in(&n.method, self.version).is_none_or(|info| {
                    info.sent_by.allows(R::SIDE.peer()) && self.version.is_none_or(|v| info.exists_in(v))
                });
                if allowed {
                    self.emit(Event::Notification { method: n.method, params: n.params });
                } else {
                    let why = "not sent by the peer's side in this revision".to_owned();
                    self.emit(Event::PeerMisbehaved(ProtocolError::Unexpected { method: n.method, why }));
                }
            }
        }
    }

    /// The peer no longer wants an answer to `id`: the request is retired at once (a later
    /// `respond`, progress or log for it goes nowhere), so it holds back no batch and no
    /// stream and no longer counts as in flight.
    fn peer_cancelled(&mut self, id: &RequestId, reason: Option<String>) {
        let Some((inflight, stream_done)) = self.inbound.remove(id) else { return };
        self.emit(Event::PeerCancelled { id: id.clone(), reason });
        if let Some(batch) = inflight.batch {
            self.batch_reply_done(batch);
        }
        if let Some(stream) = stream_done {
            self.out.push_back(Output::StreamDone(stream));
        }
    }

    pub(super) fn on_response(&mut self, now: Instant, id: RequestId, outcome: Result<Box<RawValue>, ErrorObject>) {
        if self.queued.iter().any(|(q, _, _)| *q == id) {
            // Not sent yet: this cannot be its answer.
            return self.emit(Event::PeerMisbehaved(ProtocolError::UnexpectedResponse { id }));
        }
        let Some(pending) = self.outbound.remove(&id) else {
            if self.outbound.issued(&id) {
                self.late_responses += 1;
            } else {
                self.emit(Event::PeerMisbehaved(ProtocolError::UnexpectedResponse { id }));
            }
            return;
        };
        match pending.purpose {
            Purpose::App => self.finish(id, outcome.map_err(Into::into)),
            purpose => self.on_handshake_response(now, purpose, outcome),
        }
    }
}
