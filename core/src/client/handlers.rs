//! Answering what a server asks of a client (legacy era): roots, sampling, elicitation.

use crate::alloc_prelude::*;
use crate::jsonrpc::ErrorObject;
use crate::schema::elicitation::{
    ElicitAction, ElicitRequestParams, ElicitResult, ElicitationCompleteNotificationParams,
};
use crate::schema::lifecycle::{ClientCapabilities, ElicitationCapability, ListChangedCapability, SamplingCapability};
use crate::schema::mrtr::{InputRequest, InputResponse};
use crate::schema::roots::{ListRootsResult, Root};
use crate::schema::sampling::{CreateMessageRequestParams, CreateMessageResult};
use crate::session::{Client, IncomingRequest, SendError, Session};

/// A sampling handler: the server's `sampling/createMessage` params in, the model's message
/// out (or the error to answer with, e.g. the user declined).
pub type SamplingFn =
    alloc::sync::Arc<dyn Fn(&CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync>;

/// An elicitation handler: the form or URL the server wants filled in, the user's answer out.
pub type ElicitationFn =
    alloc::sync::Arc<dyn Fn(&ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync>;

/// Told the id of a URL-mode elicitation the server says is complete.
pub type ElicitationCompleteFn = alloc::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// What the client answers to server requests: a roots store and optional sampling and
/// elicitation handlers. Its capabilities follow from what is installed; a request with no
/// handler gets -32601.
///
/// # Examples
///
/// ```
/// use talaria_core::client::Handlers;
/// use talaria_core::schema::roots::Root;
///
/// let mut handlers = Handlers::default();
/// assert!(handlers.add_root(Root::new("file:///project")));
/// let caps = handlers.capabilities();
/// assert_eq!(caps.roots.unwrap().list_changed, Some(true));
/// assert!(caps.sampling.is_none());
/// ```
#[derive(Default, Clone)]
pub struct Handlers {
    roots: Vec<Root>,
    sampling: Option<SamplingFn>,
    /// Whether the sampling handler takes tools (`sampling.tools`, 2025-11-25+).
    sampling_tools: bool,
    elicitation: Option<ElicitationFn>,
    url_elicitation: bool,
    /// Told the id of each URL-mode elicitation the server says is complete.
    on_elicitation_complete: Option<ElicitationCompleteFn>,
    /// The URL-mode elicitations this client accepted that the server has not completed.
    open_url_elicitations: alloc::sync::Arc<crate::sync::Mutex<alloc::collections::VecDeque<String>>>,
}

/// The most accepted URL-mode elicitations remembered for their completion; past it the
/// oldest is forgotten (its late completion is ignored).
const MAX_OPEN_URL_ELICITATIONS: usize = 256;

impl core::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Handlers")
            .field("roots", &self.roots)
            .field("sampling", &self.sampling.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .field("elicitation", &self.elicitation.is_some())
            .field("url_elicitation", &self.url_elicitation)
            .finish()
    }
}

impl Handlers {
    /// Installs the sampling handler. Requests that offer the model tools are refused (the
    /// client does not declare `sampling.tools`); see [`Handlers::with_sampling_tools`].
    #[must_use]
    pub fn with_sampling(
        self,
        handler: impl Fn(&CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.sampling_handler(alloc::sync::Arc::new(handler), false)
    }

    /// Installs a sampling handler that also takes tools (2025-11-25+): the client declares
    /// `sampling.tools`, and the handler gets requests with `tools` and `toolChoice`. It may
    /// answer with `tool_use` content and `stopReason: "toolUse"`; the server then sends the
    /// tool results in a follow-up request.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::client::Handlers;
    /// use talaria_core::schema::sampling::{CreateMessageResult, SamplingContent};
    ///
    /// let handlers = Handlers::default().with_sampling_tools(|params| {
    ///     let tools = params.tools.as_ref().map_or(0, Vec::len);
    ///     Ok(CreateMessageResult::new("model", SamplingContent::text(format!("{tools} tools offered"))))
    /// });
    /// assert!(handlers.capabilities().sampling.unwrap().tools.is_some());
    /// ```
    #[must_use]
    pub fn with_sampling_tools(
        self,
        handler: impl Fn(&CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.sampling_handler(alloc::sync::Arc::new(handler), true)
    }

    /// Installs the sampling `handler`, taking tools or not.
    fn sampling_handler(mut self, handler: SamplingFn, tools: bool) -> Self {
        self.sampling = Some(handler);
        self.sampling_tools = tools;
        self
    }

    /// Installs the elicitation handler; `url_mode` says whether it can send the user to a URL
    /// (2025-11-25+) as well as fill in forms.
    #[must_use]
    pub fn with_elicitation(
        mut self,
        url_mode: bool,
        handler: impl Fn(&ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.elicitation = Some(alloc::sync::Arc::new(handler));
        self.url_elicitation = url_mode;
        self
    }

    /// Calls `on_complete` with the id of each URL-mode elicitation this client accepted that
    /// the server then says is complete (`notifications/elicitation/complete`, 2025-11-25):
    /// the page's flow is done, the UI can move on. Completions of ids this client did not
    /// accept, or already saw completed, are ignored, as the spec asks.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::client::Handlers;
    /// use talaria_core::schema::elicitation::ElicitResult;
    ///
    /// let handlers = Handlers::default()
    ///     .with_elicitation(true, |_| Ok(ElicitResult::accept(Default::default())))
    ///     .with_elicitation_complete(|id| eprintln!("{id} is done"));
    /// assert!(handlers.capabilities().elicitation.unwrap().url.is_some());
    /// ```
    #[must_use]
    pub fn with_elicitation_complete(mut self, on_complete: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_elicitation_complete = Some(alloc::sync::Arc::new(on_complete));
        self
    }

    /// Remembers an accepted URL-mode elicitation, for its completion notification.
    fn opened(&self, params: &ElicitRequestParams, result: &ElicitResult) {
        let ElicitRequestParams::Url(url) = params else { return };
        let Some(id) = url.elicitation_id.as_ref().filter(|_| result.action == ElicitAction::Accept) else { return };
        let mut open = self.open_url_elicitations.lock();
        if open.len() >= MAX_OPEN_URL_ELICITATIONS {
            open.pop_front();
        }
        open.push_back(id.clone());
    }

    /// A `notifications/elicitation/complete` arrived with `params`: whether it names a
    /// URL-mode elicitation this client accepted and had not seen completed (the completion
    /// callback, if any, is called). Anything else is to be ignored.
    pub fn elicitation_completed(&self, params: Option<&serde_json::value::RawValue>) -> bool {
        let Some(params) = params else { return false };
        let Ok(done) = serde_json::from_str::<ElicitationCompleteNotificationParams>(params.get()) else {
            return false;
        };
        let known = {
            let mut open = self.open_url_elicitations.lock();
            let at = open.iter().position(|id| *id == done.elicitation_id);
            at.and_then(|at| open.remove(at)).is_some()
        };
        if known {
            if let Some(on_complete) = &self.on_elicitation_complete {
                on_complete(&done.elicitation_id);
            }
        }
        known
    }

    /// Whether a completion callback is installed.
    #[must_use]
    pub(crate) fn has_elicitation_complete(&self) -> bool {
        self.on_elicitation_complete.is_some()
    }

    /// The capabilities to declare in the `ClientConfig`.
    #[must_use]
    pub fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            roots: Some(ListChangedCapability::with_list_changed()),
            sampling: self.sampling.is_some().then(|| SamplingCapability {
                tools: self.sampling_tools.then(crate::schema::JsonObject::new),
                ..SamplingCapability::default()
            }),
            elicitation: self.elicitation.is_some().then(|| ElicitationCapability {
                form: Some(crate::schema::JsonObject::new()),
                url: self.url_elicitation.then(crate::schema::JsonObject::new),
                ..ElicitationCapability::default()
            }),
            ..ClientCapabilities::default()
        }
    }

    /// The roots, in the order added.
    #[must_use]
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// Adds (or replaces, by URI) a root; whether the list changed.
    pub fn add_root(&mut self, root: Root) -> bool {
        if self.roots.contains(&root) {
            return false;
        }
        self.roots.retain(|r| r.uri != root.uri);
        self.roots.push(root);
        true
    }

    /// Removes the root at `uri`; whether the list changed.
    pub fn remove_root(&mut self, uri: &str) -> bool {
        let before = self.roots.len();
        self.roots.retain(|r| r.uri != uri);
        before != self.roots.len()
    }

    /// Removes every root; whether the list changed.
    pub fn clear_roots(&mut self) -> bool {
        let changed = !self.roots.is_empty();
        self.roots.clear();
        changed
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`), if the
    /// session is ready and the revision has the notification; otherwise does nothing.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`].
    pub fn announce_roots(&self, session: &mut Session<Client>) -> Result<(), SendError> {
        if !session.phase().is_ready() {
            return Ok(());
        }
        match session.notify("notifications/roots/list_changed", None) {
            Err(SendError::NotInRevision { .. } | SendError::MissingCapability { .. }) => Ok(()),
            other => other,
        }
    }

    /// Answers one input request of an `input_required` result (2026-07-28 multi round-trip
    /// requests) with the installed handlers.
    ///
    /// # Errors
    ///
    /// -32601 when no handler is installed for it (or it is of a kind this SDK does not
    /// know), or the handler's own error.
    pub fn answer_input(&self, request: &InputRequest) -> Result<InputResponse, ErrorObject> {
        match (request, &self.sampling, &self.elicitation) {
            (InputRequest::CreateMessage(r), Some(handler), _) => {
                self.check_sampling(&r.params)?;
                handler(&r.params).map(|m| InputResponse::CreateMessage(Box::new(m)))
            }
            (InputRequest::ListRoots(_), _, _) => {
                Ok(InputResponse::ListRoots(ListRootsResult::new(self.roots.clone())))
            }
            (InputRequest::Elicit(r), _, Some(handler)) => {
                self.check_elicitation(&r.params)?;
                let result = handler(&r.params)?;
                self.opened(&r.params, &result);
                Ok(InputResponse::Elicit(result))
            }
            (InputRequest::CreateMessage(_), None, _) => Err(ErrorObject::method_not_found("sampling/createMessage")),
            (InputRequest::Elicit(_), _, None) => Err(ErrorObject::method_not_found("elicitation/create")),
            _ => Err(ErrorObject::method_not_found("unknown input request")),
        }
    }

    /// Refuses (-32602) a sampling request that offers tools when this client did not declare
    /// `sampling.tools`, as the spec says a client must.
    fn check_sampling(&self, params: &CreateMessageRequestParams) -> Result<(), ErrorObject> {
        if (params.tools.is_some() || params.tool_choice.is_some()) && !self.sampling_tools {
            return Err(ErrorObject::invalid_params(
                "this client did not declare sampling.tools: a sampling request may not offer tools",
            ));
        }
        Ok(())
    }

    /// Refuses (-32602) an elicitation in a mode this client did not declare (URL mode
    /// without `elicitation.url`), as the spec says a client must.
    fn check_elicitation(&self, params: &ElicitRequestParams) -> Result<(), ErrorObject> {
        if matches!(params, ElicitRequestParams::Url(_)) && !self.url_elicitation {
            return Err(ErrorObject::invalid_params("this client did not declare URL-mode elicitation"));
        }
        Ok(())
    }

    /// Answers one server request the session handed over.
    ///
    /// # Errors
    ///
    /// Only [`SendError::Closed`] (or an encoding failure) from answering.
    pub fn dispatch(&self, session: &mut Session<Client>, request: IncomingRequest) -> Result<(), SendError> {
        let IncomingRequest { reply, method, params, .. } = request;
        let text = params.as_deref().map_or("{}", serde_json::value::RawValue::get);
        let bad = |e: &serde_json::Error| ErrorObject::invalid_params(format!("Invalid params for {method}: {e}"));
        match (method.as_str(), &self.sampling, &self.elicitation) {
            ("roots/list", _, _) => session.respond_with(reply, &ListRootsResult::new(self.roots.clone())),
            ("sampling/createMessage", Some(handler), _) => match serde_json::from_str(text) {
                Ok(p) => match self.check_sampling(&p).and_then(|()| handler(&p)) {
                    Ok(result) => session.respond_with(reply, &result),
                    Err(error) => session.respond(reply, Err(error)),
                },
                Err(e) => session.respond(reply, Err(bad(&e))),
            },
            ("elicitation/create", _, Some(handler)) => match serde_json::from_str(text) {
                Ok(p) => match self.check_elicitation(&p).and_then(|()| handler(&p)) {
                    Ok(result) => {
                        self.opened(&p, &result);
                        session.respond_with(reply, &result)
                    }
                    Err(error) => session.respond(reply, Err(error)),
                },
                Err(e) => session.respond(reply, Err(bad(&e))),
            },
            _ => session.respond(reply, Err(ErrorObject::method_not_found(&method))),
        }
    }
}
