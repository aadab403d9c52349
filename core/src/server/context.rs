//! What a handler sees of its request and session.

use super::cancel::CancelFlag;
use super::deferred::Deferred;
use super::extras::{Extras, TransportInfo};
use crate::alloc_prelude::*;
use crate::jsonrpc::RequestId;
use crate::schema::lifecycle::{ClientCapabilities, RequestMeta};
use crate::schema::mrtr::{InputRequests, InputRequiredResult, InputResponses};
use crate::schema::{Implementation, LoggingLevel, ProgressToken};
use crate::session::{ReplyToken, SendError, Server, Session};
use crate::version::{Feature, ProtocolVersion};

/// A handler's view of the request it answers: the session, per-session state, progress,
/// logging, and the means to answer later.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use talaria_core::schema::tools::{CallToolResult, Tool};
/// use talaria_core::server::Router;
///
/// // Per-session state: a call counter.
/// let router = Router::<u32>::builder()
///     .tool(Tool::new("count", Default::default()), |ctx, _args: serde_json::Value| {
///         *ctx.state() += 1;
///         Ok(CallToolResult::text(ctx.state().to_string()))
///     })
///     .build();
/// # let _ = router;
/// ```
pub struct Context<'a, S> {
    pub(super) session: &'a mut Session<Server>,
    pub(super) state: &'a mut S,
    pub(super) reply: Option<ReplyToken>,
    pub(super) id: RequestId,
    pub(super) target: String,
    pub(super) progress_token: Option<ProgressToken>,
    pub(super) meta: Option<Box<RequestMeta>>,
    /// The transport's additions: cancellation flag, transport metadata.
    pub(super) extras: Extras,
    /// MRTR (2026-07-28): what the client answered to this request's earlier input requests.
    pub(super) input_responses: Option<InputResponses>,
    /// MRTR: the state the server handed out with them.
    pub(super) request_state: Option<String>,
    /// MRTR: set by `require_input`; the router answers with it.
    pub(super) input_required: Option<InputRequiredResult>,
}

impl<S> Context<'_, S> {
    /// The per-session state.
    pub fn state(&mut self) -> &mut S {
        self.state
    }

    /// The id of the request being answered.
    #[must_use]
    pub const fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// The request's `_meta` as the client sent it (stateless era: version, client info and
    /// capabilities; any era: the progress token and custom keys).
    #[must_use]
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.meta.as_deref()
    }

    /// Whether the client has cancelled this request (only an [`Endpoint`](super::Endpoint)
    /// sees cancellations; a bare [`Router::dispatch`](super::Router::dispatch) never does).
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.extras.cancel.is_cancelled()
    }

    /// The flag [`Context::is_cancelled`] reads, to hand to work that outlives the handler.
    #[must_use]
    pub fn cancel_flag(&self) -> CancelFlag {
        self.extras.cancel.clone()
    }

    /// What the transport knows about the peer (session id, address, headers, identity), if
    /// the adapter said.
    #[must_use]
    pub fn transport(&self) -> Option<&TransportInfo> {
        self.extras.transport.as_deref()
    }

    /// The negotiated revision (the request's own in the stateless era).
    #[must_use]
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.session.version()
    }

    /// The client's implementation info: the request's own in the stateless era, the
    /// handshake's before.
    #[must_use]
    pub fn client_info(&self) -> Option<&Implementation> {
        self.meta.as_ref().and_then(|m| m.client_info.as_ref()).or_else(|| self.session.peer_info())
    }

    /// The client's capabilities, the same way.
    #[must_use]
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.meta.as_ref().and_then(|m| m.client_capabilities.as_ref()).or_else(|| self.session.client_capabilities())
    }

    /// The settings of the extension `id` (2026-07-28) if the client declared it for this
    /// request: gate an extension's behaviour on it. The server declares its own with
    /// [`RouterBuilder::extension`](super::RouterBuilder::extension).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::{CallToolResult, Tool};
    /// use talaria_core::server::Router;
    ///
    /// let router = Router::<()>::builder()
    ///     .extension("com.example/verbose", Default::default())
    ///     .unwrap()
    ///     .tool(Tool::new("hello", Default::default()), |ctx, _: serde_json::Value| {
    ///         let verbose = ctx.client_extension("com.example/verbose").is_some();
    ///         Ok(CallToolResult::text(if verbose { "Hello! Nice to meet you." } else { "Hello" }))
    ///     })
    ///     .build();
    /// assert_eq!(router.tools().count(), 1);
    /// ```
    #[must_use]
    pub fn client_extension(&self, id: &str) -> Option<&serde_json::Value> {
        self.client_capabilities()?.extension(id)
    }

    /// Whether the client asked for progress on this request.
    #[must_use]
    pub const fn wants_progress(&self) -> bool {
        self.progress_token.is_some()
    }

    /// Reports progress if the client asked for it (otherwise does nothing).
    ///
    /// # Errors
    ///
    /// [`SendError::ProgressNotIncreasing`] if `progress` does not exceed the last value; once
    /// the reply was deferred, progress goes through the session with the [`Deferred`] token.
    pub fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) -> Result<(), SendError> {
        match (&self.reply, &self.progress_token) {
            (Some(reply), Some(_)) => self.session.progress(reply, progress, total, message),
            _ => Ok(()),
        }
    }

    /// Sends a log message about this request, if the level lets it through. Returns whether
    /// it was sent.
    ///
    /// # Errors
    ///
    /// [`SendError::MissingCapability`] if the server did not advertise `logging`.
    pub fn log(&mut self, level: LoggingLevel, data: serde_json::Value) -> Result<bool, SendError> {
        match &self.reply {
            Some(reply) => self.session.log_for(reply, level, Some(self.target.as_str()), data),
            None => Ok(false),
        }
    }

    /// The client's answers to input requests this handler made in an earlier round
    /// (2026-07-28 multi round-trip requests), keyed as the requests were.
    #[must_use]
    pub const fn input_responses(&self) -> Option<&InputResponses> {
        self.input_responses.as_ref()
    }

    /// The `requestState` the handler handed out with its input requests, as the client sent
    /// it back.
    #[must_use]
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_deref()
    }

    /// Answers `input_required` (2026-07-28): the client is asked for `requests` (sampling,
    /// roots, elicitation) and retries the call with the answers, which this handler then finds
    /// in [`Context::input_responses`]. `state` comes back as [`Context::request_state`]. The
    /// handler's own return value is then ignored. Returns `false`, and does nothing, outside
    /// the stateless era, where a server asks with session requests instead.
    pub fn require_input(&mut self, requests: InputRequests, state: Option<String>) -> bool {
        if !self.session.version().is_some_and(|v| v.supports(Feature::Mrtr)) {
            return false;
        }
        self.input_required = Some(InputRequiredResult {
            input_requests: Some(requests),
            request_state: state,
            ..InputRequiredResult::default()
        });
        true
    }

    /// Takes the reply, to answer later with `Router::complete_tool` (say, after work on
    /// another thread). The handler's own return value is then ignored. `None` if already
    /// taken.
    pub fn defer(&mut self) -> Option<Deferred> {
        let cancel = self.extras.cancel.clone();
        self.reply.take().map(|reply| Deferred { reply, tool: self.target.clone(), cancel })
    }
}
