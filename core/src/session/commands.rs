//! Commands: what the application asks the session to do.

use crate::alloc_prelude::*;
use crate::time::Instant;

use serde::Serialize;
use serde_json::value::RawValue;

use super::error::CloseReason;
use super::event::{Event, IncomingRequest, Output, ReplyToken, Route};
use super::meta::{stamp_result_type, with_meta, with_meta_defaults};
use super::outbound::{Pending, Purpose};
use super::{ClientMode, Local, Phase, RequestOptions, Role, SendError, Server, Session, Transition};
use crate::jsonrpc::{ErrorObject, ErrorResponse, Message, Notification, Request, RequestId, Response};
use crate::schema::logging::LoggingMessageNotificationParams;
use crate::schema::utilities::{CancelledNotificationParams, ProgressNotificationParams};
use crate::schema::{meta_keys, method_info_in, params_capability, Capability, LoggingLevel, Meta, Side};
use crate::session::{CallError, LocalError};
use crate::version::{Feature, ProtocolVersion};

impl<R: Role> Session<R> {
    /// Sends a request; its end arrives later as exactly one [`Event::Response`] with the
    /// returned id.
    ///
    /// Before the session is ready the request is queued (its timeout already running) and
    /// sent once the handshake completes. In the stateless era the client's `_meta`
    /// (version, capabilities, info, log level) is added to the params.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`], [`SendError::TooManyPending`], and, once the revision and the
    /// peer's capabilities are known, [`SendError::WrongDirection`],
    /// [`SendError::NotInRevision`] or [`SendError::MissingCapability`]; params that are not
    /// an object when `_meta` must be added give [`SendError::ParamsNotAnObject`].
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        self.send_request_on(now, Route::Connection, method, params, options)
    }

    /// Sends a request about a peer request that is still in flight, on that request's route:
    /// over Streamable HTTP its response stream, which is where the spec wants messages that
    /// relate to a request, and where a client that never opened the standalone GET stream
    /// still hears them. Otherwise as [`Session::send_request`] (a request no longer in flight
    /// falls back to the long-lived channel).
    ///
    /// # Errors
    ///
    /// As [`Session::send_request`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::schema::lifecycle::ServerCapabilities;
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{Event, Output, RequestOptions, Route, Server, ServerConfig, Session, StreamId};
    ///
    /// let now = Instant::now();
    /// let caps = ServerCapabilities { tools: Some(Default::default()), ..Default::default() };
    /// let mut server = Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")).with_capabilities(caps));
    /// let hello = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",
    ///     "capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}"#;
    /// server.handle_frame(now, Route::Stream(StreamId(1)), hello.as_bytes());
    /// server.handle_frame(now, Route::Stream(StreamId(1)), br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    /// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
    /// server.handle_frame(now, Route::Stream(StreamId(2)), call);
    /// let mut reply = None;
    /// while let Some(out) = server.poll_output() {
    ///     if let Output::Event(Event::Request(request)) = out {
    ///         reply = Some(request.reply);
    ///     }
    /// }
    /// let reply = reply.unwrap();
    ///
    /// // The question about call 1 goes on call 1's response stream.
    /// let params = serde_json::value::to_raw_value(&serde_json::json!({"messages": [], "maxTokens": 5})).unwrap();
    /// server.send_request_related(now, &reply, "sampling/createMessage", Some(params), RequestOptions::default()).unwrap();
    /// assert!(matches!(server.poll_output(), Some(Output::Transmit { route: Route::Stream(StreamId(2)), .. })));
    /// # server.respond(reply, Ok(serde_json::value::to_raw_value(&serde_json::json!({"content": []})).unwrap())).unwrap();
    /// ```
    pub fn send_request_related(
        &mut self,
        now: Instant,
        about: &ReplyToken,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        let route = self.inbound.get_mut(&about.id).map_or(Route::Connection, |inflight| inflight.route);
        self.send_request_on(now, route, method, params, options)
    }

    fn send_request_on(
        &mut self,
        now: Instant,
        route: Route,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        let limit = self.config().max_pending;
        if self.outbound.len() >= limit {
            return Err(SendError::TooManyPending { limit });
        }
        if self.phase.is_ready() || matches!(method, "initialize" | "notifications/initialized") {
            self.check_outgoing(method)?;
            self.check_params_capability(method, params.as_deref())?;
        }
        let (id, params) = self.register(now, method, params, options)?;
        if self.phase.is_ready() {
            self.transmit(route, Request { id: id.clone(), method: method.to_owned(), params }.into());
        } else {
            self.queued.push_back((id.clone(), method.to_owned(), params));
        }
        Ok(id)
    }

    /// Prepares the params of a new application request (progress token, stateless `_meta`
    /// once ready) and records it as pending. Nothing is recorded if preparing fails.
    pub(super) fn register(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<(RequestId, Option<Box<RawValue>>), SendError> {
        let id = self.outbound.next_id();
        let mut params = params;
        if options.progress {
            let mut entries = Meta::new();
            entries.insert(meta_keys::PROGRESS_TOKEN.into(), id_value(&id));
            params = Some(with_meta(params, entries)?);
        }
        if self.phase.is_ready() {
            params = self.stamp_request(params)?;
        }
        let config = self.config();
        let mut pending = Pending::new(
            method.to_owned(),
            Purpose::App,
            now,
            options.timeout.unwrap_or(config.request_timeout),
            options.max_time.or(config.max_request_time),
            config.reset_timeout_on_progress,
        );
        if options.progress {
            pending.progress_token = Some(id.clone());
        }
        self.outbound.insert(id.clone(), pending);
        Ok((id, params))
    }

    /// Serializes `params` and sends a request; see [`Session::send_request`].
    ///
    /// # Errors
    ///
    /// As [`Session::send_request`], and [`SendError::Encode`] if `params` cannot be encoded.
    pub fn send<P: Serialize>(
        &mut self,
        now: Instant,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        let raw = serde_json::value::to_raw_value(params).map_err(|e| SendError::Encode(e.to_string()))?;
        self.send_request(now, method, Some(raw), options)
    }

    /// Sends a notification on the long-lived channel.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`], or the gating errors of [`Session::send_request`].
    pub fn notify(&mut self, method: &str, params: Option<Box<RawValue>>) -> Result<(), SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        self.check_outgoing(method)?;
        self.check_may_speak(method)?;
        self.transmit(Route::Connection, Notification { method: method.to_owned(), params }.into());
        Ok(())
    }

    /// Answers a peer request with a result (raw JSON) or an error.
    ///
    /// An answer to a request the peer has cancelled is dropped, as the spec asks.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] once the session is closed.
    pub fn respond(&mut self, reply: ReplyToken, result: Result<Box<RawValue>, ErrorObject>) -> Result<(), SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        // A request the peer cancelled was retired already: its answer goes nowhere.
        let Some((inflight, stream_done)) = self.inbound.remove(&reply.id) else {
            return Ok(());
        };
        let stateless = self.version.is_some_and(|v| v.supports(Feature::ResultType));
        let msg: Message = match result {
            Ok(result) => {
                let result = if stateless { self.stamp_stateless_result(result) } else { result };
                Response { id: reply.id, result }.into()
            }
            Err(error) => ErrorResponse { id: Some(reply.id), error }.into(),
        };
        self.reply(inflight.route, inflight.batch, msg);
        if let Some(batch) = inflight.batch {
            self.batch_reply_done(batch);
        }
        if let Some(stream) = stream_done {
            self.out.push_back(Output::StreamDone(stream));
        }
        Ok(())
    }

    /// A stateless-era result as it goes out: its `resultType`, and (a server's, unless
    /// configured not to) `_meta` naming the server.
    fn stamp_stateless_result(&self, result: Box<RawValue>) -> Box<RawValue> {
        let result = stamp_result_type(result);
        let Local::Server(config) = &self.local else { return result };
        if !config.server_info_in_results {
            return result;
        }
        let Ok(info) = serde_json::to_value(&config.session.info) else { return result };
        let mut entries = Meta::new();
        entries.insert(meta_keys::SERVER_INFO.to_owned(), info);
        with_meta_defaults(result, entries)
    }

    /// Serializes `result` and answers; see [`Session::respond`].
    ///
    /// # Errors
    ///
    /// As [`Session::respond`], and [`SendError::Encode`] if `result` cannot be encoded.
    pub fn respond_with<T: Serialize + ?Sized>(&mut self, reply: ReplyToken, result: &T) -> Result<(), SendError> {
        let raw = serde_json::value::to_raw_value(result).map_err(|e| SendError::Encode(e.to_string()))?;
        self.respond(reply, Ok(raw))
    }

    /// Cancels a request this side sent: it ends now as cancelled, the peer is told with
    /// `notifications/cancelled`, and a late response is dropped.
    ///
    /// # Errors
    ///
    /// [`SendError::UnknownRequest`] if it is not pending, [`SendError::CannotCancelInitialize`]
    /// for the handshake.
    pub fn cancel(&mut self, id: &RequestId, reason: Option<&str>) -> Result<(), SendError> {
        let Some(pending) = self.outbound.get(id) else {
            return Err(SendError::UnknownRequest(id.clone()));
        };
        if pending.purpose != Purpose::App {
            return Err(SendError::CannotCancelInitialize);
        }
        let purpose = pending.purpose;
        self.outbound.remove(id);
        let was_queued = self.unqueue(id);
        if !was_queued {
            self.send_cancelled(id, reason);
        }
        if purpose == Purpose::App {
            self.finish(id.clone(), Err(LocalError::Cancelled { reason: reason.map(str::to_owned) }.into()));
        }
        Ok(())
    }

    /// Cancels every pending application request.
    pub fn cancel_all(&mut self, reason: Option<&str>) {
        for id in self.outbound.ids() {
            if self.outbound.get(&id).is_some_and(|p| p.purpose == Purpose::App) {
                let _ = self.cancel(&id, reason);
            }
        }
    }

    /// Closes the session: every pending request ends as closed, outputs already queued stay
    /// ahead of the final [`Event::Closed`]. Calling it again does nothing.
    pub fn close(&mut self) {
        self.shutdown(CloseReason::Local);
    }

    /// A server says nothing before `initialize`, and only logs before `initialized`.
    pub(super) fn check_may_speak(&self, method: &str) -> Result<(), SendError> {
        match (&self.local, self.phase) {
            (Local::Server(_), Phase::AwaitingPeer) => Err(SendError::NotReady),
            (Local::Server(_), Phase::Initializing) if method != "notifications/message" => Err(SendError::NotReady),
            _ => Ok(()),
        }
    }

    /// Checks the capability a request's params call for ([`params_capability`]): tools in
    /// a sampling request, a URL-mode elicitation.
    fn check_params_capability(&self, method: &str, params: Option<&RawValue>) -> Result<(), SendError> {
        if !matches!(method, "sampling/createMessage" | "elicitation/create") {
            return Ok(());
        }
        let Some(params) = params.and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok()) else {
            return Ok(());
        };
        match params_capability(method, &params) {
            Some(capability) if !self.capability_present(capability) => {
                Err(SendError::MissingCapability { method: method.to_owned(), capability })
            }
            _ => Ok(()),
        }
    }

    /// Checks direction, revision and capability for a method this side wants to send.
    pub(super) fn check_outgoing(&self, method: &str) -> Result<(), SendError> {
        if matches!(method, "initialize" | "notifications/initialized") {
            return Err(SendError::Reserved(method.to_owned()));
        }
        let Some(info) = method_info_in(method, self.version) else { return Ok(()) };
        if !info.sent_by.allows(R::SIDE) {
            return Err(SendError::WrongDirection { method: method.to_owned() });
        }
        if let Some(version) = self.version {
            if !info.exists_in(version) {
                return Err(SendError::NotInRevision { method: method.to_owned(), version });
            }
        }
        if let Some(capability) = info.capability {
            if !self.capability_present(capability) {
                return Err(SendError::MissingCapability { method: method.to_owned(), capability });
            }
        }
        Ok(())
    }

    /// Whether `capability` is advertised by the side that must advertise it (as far as
    /// known: an unknown peer does not block).
    pub(super) fn capability_present(&self, capability: Capability) -> bool {
        // Tasks run either way (2025-11-25): whether a side may ask about them, or tell of
        // them, is the task host's to decide, not a gate on the method.
        if capability == Capability::Tasks {
            return true;
        }
        let version = self.version.unwrap_or(ProtocolVersion::LATEST);
        match (capability.advertised_by(), &self.local) {
            (Side::Server, Local::Server(s)) => s.capabilities.allows(capability, version),
            (Side::Client, Local::Client(c)) => c.capabilities.has(capability),
            (Side::Server, Local::Client(_)) => {
                self.peer_caps.server().is_none_or(|caps| caps.allows(capability, version))
            }
            (Side::Client, Local::Server(_)) => self.peer_caps.client().is_none_or(|caps| caps.has(capability)),
        }
    }

    /// Adds the stateless client `_meta` to request params when the session is stateless.
    pub(super) fn stamp_request(&self, params: Option<Box<RawValue>>) -> Result<Option<Box<RawValue>>, SendError> {
        let Local::Client(config) = &self.local else { return Ok(params) };
        let stateless = self.version.is_some_and(|v| v.supports(Feature::Stateless));
        if !(stateless || config.mode == ClientMode::Stateless || self.phase == Phase::Discovering) {
            return Ok(params);
        }
        let version = self.version.unwrap_or(ProtocolVersion::LATEST);
        let mut entries = Meta::new();
        entries.insert(meta_keys::PROTOCOL_VERSION.into(), version.as_str().into());
        entries.insert(meta_keys::CLIENT_CAPABILITIES.into(), to_value(&config.capabilities));
        entries.insert(meta_keys::CLIENT_INFO.into(), to_value(&config.session.info));
        if let Some(level) = config.log_level {
            entries.insert(meta_keys::LOG_LEVEL.into(), level.as_str().into());
        }
        with_meta(params, entries).map(Some)
    }

    // By value, so that callers hand over `x.into()` temporaries.
    #[allow(clippy::needless_pass_by_value)]
    pub(super) fn transmit(&mut self, route: Route, msg: Message) {
        let payload = msg.to_vec();
        self.out.push_back(Output::Transmit { route, payload, carries: msg.into() });
    }

    pub(super) fn emit(&mut self, event: Event) {
        self.out.push_back(Output::Event(event));
    }

    /// Ends an application request with its one `Event::Response`.
    pub(super) fn finish(&mut self, id: RequestId, outcome: Result<Box<RawValue>, CallError>) {
        self.emit(Event::Response { id, outcome });
    }

    pub(super) fn send_cancelled(&mut self, id: &RequestId, reason: Option<&str>) {
        let params = CancelledNotificationParams::new(id.clone(), reason);
        if let Ok(n) = Notification::new("notifications/cancelled", Some(params)) {
            self.transmit(Route::Connection, n.into());
        }
    }

    /// Removes a request from the not-yet-sent queue; whether it was there.
    fn unqueue(&mut self, id: &RequestId) -> bool {
        let before = self.queued.len();
        self.queued.retain(|(q, _, _)| q != id);
        before != self.queued.len()
    }

    /// Closes with `reason`: pending requests end as closed, then `Event::Closed`.
    /// Fails every request in flight with [`LocalError::Closed`] (`reason`) and forgets
    /// requests from the peer.
    pub(super) fn fail_all(&mut self, reason: Option<&str>) {
        for id in self.outbound.ids() {
            if let Some(pending) = self.outbound.remove(&id) {
                if pending.purpose == Purpose::App {
                    self.finish(id, Err(LocalError::Closed { reason: reason.map(str::to_owned) }.into()));
                }
            }
        }
        self.queued.clear();
        self.inbound.clear();
        self.batches.clear();
    }

    pub(super) fn shutdown(&mut self, reason: CloseReason) {
        if !self.enter(Transition::Close) {
            return;
        }
        self.fail_all(Some(&reason.to_string()));
        self.emit(Event::Closed { reason });
    }
}

impl Session<Server> {
    /// Sends progress on a peer request that asked for it.
    ///
    /// # Errors
    ///
    /// [`SendError::NoProgressToken`] if the request asked for none,
    /// [`SendError::ProgressNotIncreasing`] if `progress` does not exceed the last value,
    /// [`SendError::Closed`].
    pub fn progress(
        &mut self,
        reply: &ReplyToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        let Some(inflight) = self.inbound.get_mut(&reply.id) else { return Ok(()) };
        let Some(token) = inflight.progress_token.clone() else {
            return Err(SendError::NoProgressToken(reply.id.clone()));
        };
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(SendError::InvalidProgress(progress));
        }
        if let Some(previous) = inflight.last_progress {
            if progress <= previous {
                return Err(SendError::ProgressNotIncreasing { previous, next: progress });
            }
        }
        inflight.last_progress = Some(progress);
        let route = inflight.route;
        let message = message.filter(|_| self.version.is_none_or(|v| v.supports(Feature::ProgressMessage)));
        let params = ProgressNotificationParams::new(token, progress, total, message);
        let n =
            Notification::new("notifications/progress", Some(params)).map_err(|e| SendError::Encode(e.to_string()))?;
        self.transmit(route, n.into());
        Ok(())
    }

    /// Checks that the client of `request` declared `capability`, as a handler that needs it
    /// (say, elicitation) must before relying on it.
    ///
    /// The capabilities are the request's own in the stateless era (2026-07-28) and the
    /// session's from `initialize` before it. Server capabilities are not the client's to
    /// declare and always pass.
    ///
    /// # Errors
    ///
    /// The error to answer the request with: -32021 `MissingRequiredClientCapability` naming
    /// the capability in the stateless era, -32600 before it.
    pub fn require_client_capability(
        &self,
        request: &IncomingRequest,
        capability: Capability,
    ) -> Result<(), ErrorObject> {
        if capability.advertised_by() != Side::Client {
            return Ok(());
        }
        let per_request = request.meta.as_ref().and_then(|m| m.client_capabilities.as_ref());
        let declared = per_request.or(self.peer_caps.client()).is_some_and(|caps| caps.has(capability));
        if declared {
            return Ok(());
        }
        let required = required_capabilities(capability);
        if self.version.is_some_and(|v| v.supports(Feature::Stateless)) {
            let message = format!("This request requires the client capability {required}");
            Err(ErrorObject::missing_required_client_capability(message, required))
        } else {
            Err(ErrorObject::invalid_request(&format!("the client did not declare the {required} capability")))
        }
    }

    /// Whether the peer request `reply` answers is still in flight (not answered, not
    /// cancelled).
    #[must_use]
    pub fn is_in_flight(&self, reply: &ReplyToken) -> bool {
        self.inbound.contains(&reply.id)
    }

    /// Sends a notification about a peer request on that request's route (its HTTP response
    /// stream, or the connection). For a `subscriptions/listen` request (2026-07-28) the
    /// notification's `_meta` carries `io.modelcontextprotocol/subscriptionId`, the request's id.
    ///
    /// # Errors
    ///
    /// The gating errors of [`Session::notify`], [`SendError::ParamsNotAnObject`] when the
    /// subscription id must be added to params that are not an object, [`SendError::Closed`].
    pub fn notify_related(
        &mut self,
        reply: &ReplyToken,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<(), SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        self.check_outgoing(method)?;
        let Some(inflight) = self.inbound.get_mut(&reply.id) else { return Ok(()) };
        let (route, listen) = (inflight.route, inflight.listen);
        let params = if listen {
            let mut entries = Meta::new();
            entries.insert(meta_keys::SUBSCRIPTION_ID.into(), id_value(&reply.id));
            Some(with_meta(params, entries)?)
        } else {
            params
        };
        self.transmit(route, Notification { method: method.to_owned(), params }.into());
        Ok(())
    }

    /// Asks the adapter to end the HTTP response stream of a request that is still in flight,
    /// so that the client reconnects later (2025-11-25 "SSE polling": the server frees the
    /// connection during long work and the client resumes with `Last-Event-ID` after the
    /// stream's `retry` delay). Emits [`Output::StreamDisconnect`] and returns `true` when the
    /// request came on a response stream of a legacy-era session from 2025-11-25 on; otherwise
    /// does nothing and returns `false` (stdio and WebSocket have no such stream; in the
    /// stateless era closing the stream would cancel the request).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use talaria_core::schema::lifecycle::ServerCapabilities;
    /// use talaria_core::schema::Implementation;
    /// use talaria_core::session::{Event, Output, Route, Server, ServerConfig, Session, StreamId};
    ///
    /// let now = Instant::now();
    /// let caps = ServerCapabilities { tools: Some(Default::default()), ..Default::default() };
    /// let mut server = Session::<Server>::new(ServerConfig::new(Implementation::new("s", "1")).with_capabilities(caps));
    /// let hello = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
    ///     "capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    /// server.handle_frame(now, Route::Stream(StreamId(1)), hello.as_bytes());
    /// server.handle_frame(now, Route::Stream(StreamId(1)), br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    /// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long"}}"#;
    /// server.handle_frame(now, Route::Stream(StreamId(2)), call);
    /// let mut reply = None;
    /// while let Some(out) = server.poll_output() {
    ///     if let Output::Event(Event::Request(request)) = out {
    ///         reply = Some(request.reply);
    ///     }
    /// }
    /// let reply = reply.unwrap();
    /// assert!(server.close_sse_stream(&reply));
    /// assert!(matches!(server.poll_output(), Some(Output::StreamDisconnect(StreamId(2)))));
    /// # server.respond(reply, Ok(serde_json::value::to_raw_value(&serde_json::json!({})).unwrap())).unwrap();
    /// ```
    pub fn close_sse_stream(&mut self, reply: &ReplyToken) -> bool {
        let polling = crate::http::stream_start::primes_streams(self.version);
        if self.phase == Phase::Closed || !polling {
            return false;
        }
        let Some(Route::Stream(stream)) = self.inbound.get_mut(&reply.id).map(|inflight| inflight.route) else {
            return false;
        };
        self.out.push_back(Output::StreamDisconnect(stream));
        true
    }

    /// Sends a log message if the session's level lets it through (legacy era, on the
    /// long-lived channel). Returns whether it was sent.
    ///
    /// # Errors
    ///
    /// [`SendError::MissingCapability`] if the server did not advertise `logging`,
    /// [`SendError::Closed`].
    pub fn log(
        &mut self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: serde_json::Value,
    ) -> Result<bool, SendError> {
        self.check_outgoing("notifications/message")?;
        self.check_may_speak("notifications/message")?;
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        if !self.level_allows(level, None) {
            return Ok(false);
        }
        self.send_log(Route::Connection, level, logger, data)
    }

    /// Sends a log message about one request, on its route. In the stateless era it goes out
    /// only if the request asked for logs at that level.
    ///
    /// # Errors
    ///
    /// As [`Session::log`].
    pub fn log_for(
        &mut self,
        reply: &ReplyToken,
        level: LoggingLevel,
        logger: Option<&str>,
        data: serde_json::Value,
    ) -> Result<bool, SendError> {
        self.check_outgoing("notifications/message")?;
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        let Some(inflight) = self.inbound.get_mut(&reply.id) else { return Ok(false) };
        let (route, request_level) = (inflight.route, inflight.log_level);
        if !self.level_allows(level, Some(request_level)) {
            return Ok(false);
        }
        self.send_log(route, level, logger, data)
    }

    /// The level filter: per request in the stateless era (absent: nothing), else the level
    /// set by the client (absent: the configured default; absent too: everything).
    fn level_allows(&self, level: LoggingLevel, request_level: Option<Option<LoggingLevel>>) -> bool {
        let stateless = self.version.is_some_and(|v| v.supports(Feature::Stateless));
        if stateless {
            return request_level.flatten().is_some_and(|min| level >= min);
        }
        let default = match &self.local {
            Local::Server(s) => s.default_log_level,
            Local::Client(_) => None,
        };
        self.log_level.or(default).is_none_or(|min| level >= min)
    }

    fn send_log(
        &mut self,
        route: Route,
        level: LoggingLevel,
        logger: Option<&str>,
        data: serde_json::Value,
    ) -> Result<bool, SendError> {
        let params = LoggingMessageNotificationParams::new(level, logger, data);
        let n =
            Notification::new("notifications/message", Some(params)).map_err(|e| SendError::Encode(e.to_string()))?;
        self.transmit(route, n.into());
        Ok(true)
    }
}

/// The `ClientCapabilities` object that declares `capability`, as the -32021 error's
/// `requiredCapabilities` names it: `{"sampling": {}}`, `{"sampling": {"tools": {}}}`, ...
pub(crate) fn required_capabilities(capability: Capability) -> serde_json::Value {
    let (member, sub) = match capability {
        Capability::Roots => ("roots", None),
        Capability::RootsListChanged => ("roots", Some("listChanged")),
        Capability::Sampling => ("sampling", None),
        Capability::SamplingTools => ("sampling", Some("tools")),
        Capability::Elicitation => ("elicitation", None),
        Capability::ElicitationUrl => ("elicitation", Some("url")),
        _ => ("tasks", None),
    };
    let inner = match sub {
        // `listChanged` is a flag, the others objects.
        Some("listChanged") => serde_json::json!({"listChanged": true}),
        Some(sub) => serde_json::json!({ sub: {} }),
        None => serde_json::json!({}),
    };
    serde_json::json!({ member: inner })
}

fn id_value(id: &RequestId) -> serde_json::Value {
    match id {
        RequestId::Number(n) => (*n).into(),
        RequestId::String(s) => s.clone().into(),
    }
}

fn to_value<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
