//! Answering what a server asks of a client (legacy era): roots, sampling, elicitation.

use crate::jsonrpc::ErrorObject;
use crate::schema::elicitation::{ElicitRequestParams, ElicitResult};
use crate::schema::lifecycle::{ClientCapabilities, ElicitationCapability, ListChangedCapability, SamplingCapability};
use crate::schema::mrtr::{InputRequest, InputResponse};
use crate::schema::roots::{ListRootsResult, Root};
use crate::schema::sampling::{CreateMessageRequestParams, CreateMessageResult};
use crate::session::{Client, IncomingRequest, SendError, Session};

/// A sampling handler: the server's `sampling/createMessage` params in, the model's message
/// out (or the error to answer with, e.g. the user declined).
pub type SamplingFn =
    std::sync::Arc<dyn Fn(&CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync>;

/// An elicitation handler: the form or URL the server wants filled in, the user's answer out.
pub type ElicitationFn =
    std::sync::Arc<dyn Fn(&ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync>;

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
    elicitation: Option<ElicitationFn>,
    url_elicitation: bool,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("roots", &self.roots)
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .finish()
    }
}

impl Handlers {
    /// Installs the sampling handler.
    #[must_use]
    pub fn with_sampling(
        mut self,
        handler: impl Fn(&CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.sampling = Some(std::sync::Arc::new(handler));
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
        self.elicitation = Some(std::sync::Arc::new(handler));
        self.url_elicitation = url_mode;
        self
    }

    /// The capabilities to declare in the `ClientConfig`.
    #[must_use]
    pub fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            roots: Some(ListChangedCapability::with_list_changed()),
            sampling: self.sampling.is_some().then(SamplingCapability::default),
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
                handler(&r.params).map(|m| InputResponse::CreateMessage(Box::new(m)))
            }
            (InputRequest::ListRoots(_), _, _) => {
                Ok(InputResponse::ListRoots(ListRootsResult::new(self.roots.clone())))
            }
            (InputRequest::Elicit(r), _, Some(handler)) => handler(&r.params).map(InputResponse::Elicit),
            (InputRequest::CreateMessage(_), None, _) => Err(ErrorObject::method_not_found("sampling/createMessage")),
            (InputRequest::Elicit(_), _, None) => Err(ErrorObject::method_not_found("elicitation/create")),
            _ => Err(ErrorObject::method_not_found("unknown input request")),
        }
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
                Ok(p) => match handler(&p) {
                    Ok(result) => session.respond_with(reply, &result),
                    Err(error) => session.respond(reply, Err(error)),
                },
                Err(e) => session.respond(reply, Err(bad(&e))),
            },
            ("elicitation/create", _, Some(handler)) => match serde_json::from_str(text) {
                Ok(p) => match handler(&p) {
                    Ok(result) => session.respond_with(reply, &result),
                    Err(error) => session.respond(reply, Err(error)),
                },
                Err(e) => session.respond(reply, Err(bad(&e))),
            },
            _ => session.respond(reply, Err(ErrorObject::method_not_found(&method))),
        }
    }
}
