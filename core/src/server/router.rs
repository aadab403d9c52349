//! The router: what the server offers, and how requests reach it.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::context::Context;
use super::deferred::Deferred;
use super::error::ToolError;
use super::extras::Extras;
use super::pagination::paginate;
use super::prompts::{error_of, PromptEntry};
use super::resources::{find, ResourceEntry, TemplateEntry};
use super::task_board::TaskBoard;
use super::tools::{register, typed, upsert, ToolEntry};
use crate::http::param_headers::check_param_headers;
use crate::jsonrpc::ErrorObject;
use crate::schema::completion::{CompleteRequestParams, CompleteResult, Completion, CompletionReference};
use crate::schema::lifecycle::RequestMeta;
use crate::schema::lifecycle::{ListChangedCapability, ResourcesCapability, ServerCapabilities};
use crate::schema::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt};
use crate::schema::resources::{
    resource_not_found, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate, ResourceUpdatedNotificationParams, SubscribeRequestParams,
};
use crate::schema::tools::{CallToolRequestParams, CallToolResult, ListToolsResult, TaskSupport, Tool};
use crate::schema::ResourceContents;
use crate::schema::{CacheScope, ForRevision, JsonObject, PaginatedRequestParams, ProgressToken};
use crate::session::{IncomingRequest, ReplyToken, SendError, Server, Session};

/// What a server offers, and the handlers behind it.
///
/// Immutable once built, so one router can serve many sessions (share it behind an `Arc`);
/// per-session data lives in the state `S` the adapter keeps beside each session.
pub struct Router<S> {
    pub(super) tools: Vec<ToolEntry<S>>,
    pub(super) tools_by_name: BTreeMap<String, usize>,
    pub(super) prompts: Vec<PromptEntry<S>>,
    pub(super) prompts_by_name: BTreeMap<String, usize>,
    pub(super) resources: Vec<ResourceEntry<S>>,
    pub(super) templates: Vec<TemplateEntry<S>>,
    pub(super) completion: Option<CompleteFn<S>>,
    pub(super) subscriptions: Option<(SubscribeFn<S>, SubscribeFn<S>)>,
    pub(super) logging: bool,
    pub(super) list_changes: bool,
    /// The extensions the server declares (2026-07-28), by id.
    pub(super) extensions: BTreeMap<String, serde_json::Value>,
    pub(super) cache: Option<(u64, CacheScope)>,
    pub(super) page_size: usize,
    /// The tasks of the 2026-07-28 tasks extension, shared by every connection.
    pub(super) task_board: Arc<TaskBoard>,
}

/// A subscription handler: the URI subscribed to (or from).
pub(super) type SubscribeFn<S> = Box<dyn Fn(&mut Context<'_, S>, &str) -> Result<(), ToolError> + Send + Sync>;

/// A completion handler: the request in, the suggestions out.
pub(super) type CompleteFn<S> =
    Box<dyn Fn(&mut Context<'_, S>, &CompleteRequestParams) -> Result<Completion, ToolError> + Send + Sync>;

/// A change to what the router offers, to announce to every open session.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tools::{CallToolResult, Tool};
/// use talaria_core::server::Router;
///
/// let mut router = Router::<()>::builder().notify_list_changes().build();
/// let change = router.add_tool(Tool::new("late", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("hi")));
/// assert_eq!(change.method(), "notifications/tools/list_changed");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "announce the change to every session with `ListChanged::notify`"]
pub struct ListChanged(&'static str);

impl ListChanged {
    /// The notification that announces it.
    #[must_use]
    pub const fn method(self) -> &'static str {
        self.0
    }

    /// Announces the change on `session`'s connection. Sessions that did not negotiate
    /// `listChanged`, or are not initialized yet, are skipped; in the stateless era announce
    /// it on each `subscriptions/listen` stream with `Session::notify_related` instead.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] if the session is closed.
    pub fn notify(self, session: &mut Session<Server>) -> Result<(), SendError> {
        match session.notify(self.0, None) {
            Err(SendError::MissingCapability { .. } | SendError::NotReady) => Ok(()),
            other => other,
        }
    }
}

impl<S> Router<S> {
    /// The capabilities this router's contents call for, to put in the `ServerConfig`.
    #[must_use]
    pub fn capabilities(&self) -> ServerCapabilities {
        let changes = self.list_changes.then_some(true);
        let list = || ListChangedCapability { list_changed: changes, ..ListChangedCapability::default() };
        ServerCapabilities {
            tools: (self.list_changes || !self.tools.is_empty()).then(list),
            prompts: (self.list_changes || !self.prompts.is_empty()).then(list),
            resources: (self.list_changes || self.offers_resources()).then(|| ResourcesCapability {
                list_changed: changes,
                subscribe: self.subscriptions.is_some().then_some(true),
                ..ResourcesCapability::default()
            }),
            completions: self.completion.is_some().then(JsonObject::new),
            logging: self.logging.then(JsonObject::new),
            // 2025-11-25: tools may run as tasks, which can be listed and cancelled.
            tasks: self.offers_tasks().then(|| {
                let tasks = serde_json::json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
                tasks.as_object().cloned().unwrap_or_default()
            }),
            extensions: self.declared_extensions(),
            ..ServerCapabilities::default()
        }
    }

    /// The extensions the server declares: the application's, and the tasks extension
    /// (2026-07-28) when any tool may run as a task.
    fn declared_extensions(&self) -> Option<JsonObject> {
        let mut declared: JsonObject =
            self.extensions.iter().map(|(id, settings)| (id.clone(), settings.clone())).collect();
        if self.offers_tasks() {
            declared
                .entry(crate::schema::tasks::ext::EXTENSION_ID)
                .or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
        }
        (!declared.is_empty()).then_some(declared)
    }

    /// The board of the tasks extension's tasks (2026-07-28), shared by every connection:
    /// adapters give it a wall clock, entropy for ids, and a watcher for notifications.
    #[must_use]
    pub fn task_board(&self) -> &Arc<TaskBoard> {
        &self.task_board
    }

    /// The registered tools, in registration order (the order `tools/list` uses).
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|t| &t.tool)
    }

    /// The registered prompts, in registration order (the order `prompts/list` uses).
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter().map(|p| &p.prompt)
    }

    /// Adds (or replaces) a tool while sessions are open. Send the returned change to every
    /// session so clients refresh their list.
    pub fn add_tool<A, F>(&mut self, tool: Tool, handler: F) -> ListChanged
    where
        A: DeserializeOwned,
        F: Fn(&mut Context<'_, S>, A) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
    {
        register(&mut self.tools, tool, |name| typed(name, handler));
        self.reindex();
        ListChanged("notifications/tools/list_changed")
    }

    /// Removes a tool; `None` if there was none by that name.
    pub fn remove_tool(&mut self, name: &str) -> Option<ListChanged> {
        let before = self.tools.len();
        self.tools.retain(|t| t.tool.name != name);
        self.reindex();
        (self.tools.len() != before).then_some(ListChanged("notifications/tools/list_changed"))
    }

    /// Adds (or replaces) a prompt while sessions are open.
    pub fn add_prompt<F>(&mut self, prompt: Prompt, handler: F) -> ListChanged
    where
        F: Fn(&mut Context<'_, S>, BTreeMap<String, String>) -> Result<GetPromptResult, ToolError>
            + Send
            + Sync
            + 'static,
    {
        upsert(&mut self.prompts, PromptEntry { prompt, get: Box::new(handler) }, |a, b| {
            a.prompt.name == b.prompt.name
        });
        self.reindex();
        ListChanged("notifications/prompts/list_changed")
    }

    /// Removes a prompt; `None` if there was none by that name.
    pub fn remove_prompt(&mut self, name: &str) -> Option<ListChanged> {
        let before = self.prompts.len();
        self.prompts.retain(|p| p.prompt.name != name);
        self.reindex();
        (self.prompts.len() != before).then_some(ListChanged("notifications/prompts/list_changed"))
    }

    /// Adds (or replaces) a fixed resource while sessions are open.
    pub fn add_resource<F>(&mut self, resource: Resource, handler: F) -> ListChanged
    where
        F: Fn(&mut Context<'_, S>, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, ToolError>
            + Send
            + Sync
            + 'static,
    {
        let entry = ResourceEntry { resource, read: Box::new(handler) };
        upsert(&mut self.resources, entry, |a, b| a.resource.uri == b.resource.uri);
        ListChanged("notifications/resources/list_changed")
    }

    /// Removes a fixed resource; `None` if there was none at that URI.
    pub fn remove_resource(&mut self, uri: &str) -> Option<ListChanged> {
        let before = self.resources.len();
        self.resources.retain(|r| r.resource.uri != uri);
        (self.resources.len() != before).then_some(ListChanged("notifications/resources/list_changed"))
    }

    fn reindex(&mut self) {
        self.tools_by_name = self.tools.iter().enumerate().map(|(i, t)| (t.tool.name.clone(), i)).collect();
        self.prompts_by_name = self.prompts.iter().enumerate().map(|(i, p)| (p.prompt.name.clone(), i)).collect();
    }

    /// The fixed resources, in registration order.
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.resources.iter().map(|r| &r.resource)
    }

    /// The resource templates, in registration order.
    pub fn resource_templates(&self) -> impl Iterator<Item = &ResourceTemplate> {
        self.templates.iter().map(|t| &t.template)
    }

    /// Answers a list request: the page the cursor asks for, the next cursor, the cache hints,
    /// adapted to the revision.
    fn list<E, I, R>(
        &self,
        session: &mut Session<Server>,
        req: Req,
        entries: &[E],
        item: impl Fn(&E) -> I,
        make: impl FnOnce(Vec<I>) -> R,
    ) -> Result<(), SendError>
    where
        R: Serialize + ForRevision + Listed,
    {
        let (reply, cursor) = match req.cursor() {
            Ok(c) => c,
            Err((reply, error)) => return session.respond(reply, Err(error)),
        };
        let page = match paginate(entries, cursor.as_deref(), self.page_size) {
            Ok(page) => page,
            Err(e) => return session.respond(reply, Err(e.to_error_object())),
        };
        let mut result = make(page.items.iter().map(item).collect());
        let (next, ttl, scope) = result.paging_fields();
        *next = page.next_cursor;
        self.hint(ttl, scope);
        respond_adapted(session, reply, result)
    }

    /// Applies the configured cache hints (dropped again for revisions without them).
    fn hint(&self, ttl_ms: &mut Option<u64>, scope: &mut Option<CacheScope>) {
        if let Some((ttl, s)) = self.cache {
            *ttl_ms = Some(ttl);
            *scope = Some(s);
        }
    }

    /// Whether a resource or template answers `uri`.
    pub(super) fn offers_uri(&self, uri: &str) -> bool {
        find(&self.resources, &self.templates, uri).is_some()
    }

    fn offers_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Answers one request the session handed over, calling the matching handler.
    ///
    /// # Errors
    ///
    /// Only [`SendError::Closed`] (or an encoding failure) from answering: a bad request is
    /// answered on the wire, never returned.
    pub fn dispatch(
        &self,
        session: &mut Session<Server>,
        state: &mut S,
        request: IncomingRequest,
    ) -> Result<(), SendError> {
        self.dispatch_with(session, state, request, Extras::default())
    }

    /// [`Router::dispatch`] with what the adapter knows beyond the JSON.
    pub(crate) fn dispatch_with(
        &self,
        session: &mut Session<Server>,
        state: &mut S,
        request: IncomingRequest,
        extras: Extras,
    ) -> Result<(), SendError> {
        let IncomingRequest { reply, method, params, progress_token, meta } = request;
        let req = Req { reply, method, params, progress_token, meta, extras, as_task: false };
        match req.method.as_str() {
            "tools/list" if self.list_changes || !self.tools.is_empty() => self.list_tools(session, req),
            "tools/call" if self.list_changes || !self.tools.is_empty() => self.call_tool(session, state, req),
            "prompts/list" if self.list_changes || !self.prompts.is_empty() => self.list_prompts(session, req),
            "prompts/get" if self.list_changes || !self.prompts.is_empty() => self.get_prompt(session, state, req),
            "resources/list" if self.list_changes || self.offers_resources() => self.list_resources(session, req),
            "resources/templates/list" if self.list_changes || self.offers_resources() => {
                self.list_templates(session, req)
            }
            "resources/read" if self.list_changes || self.offers_resources() => self.read_resource(session, state, req),
            "completion/complete" if self.completion.is_some() => self.complete(session, state, req),
            "resources/subscribe" | "resources/unsubscribe" if self.subscriptions.is_some() => {
                self.subscribe(session, state, req)
            }
            _ => {
                let error = ErrorObject::method_not_found(&req.method);
                session.respond(req.reply, Err(error))
            }
        }
    }

    fn list_tools(&self, session: &mut Session<Server>, req: Req) -> Result<(), SendError> {
        self.list(session, req, &self.tools, |t| t.tool.clone(), ListToolsResult::new)
    }

    fn call_tool(&self, session: &mut Session<Server>, state: &mut S, req: Req) -> Result<(), SendError> {
        match self.run_tool(session, state, req) {
            ToolRun::Answer(reply, outcome) => answer(session, reply, outcome),
            ToolRun::InputRequired(reply, needed) => respond_adapted(session, reply, needed),
            ToolRun::Deferred => Ok(()),
        }
    }

    /// Runs the tool a `tools/call` names (checking its params, headers and arguments
    /// first), as a task when `as_task`: a tool whose `taskSupport` does not fit how it is
    /// called is refused with -32601 (2025-11-25).
    fn run_tool(&self, session: &mut Session<Server>, state: &mut S, req: Req) -> ToolRun {
        let protocol = |reply, error| ToolRun::Answer(reply, Err(ToolError::Protocol(error)));
        let call: CallToolRequestParams = match decode(req.params.as_deref()) {
            Ok(c) => c,
            Err(e) => return protocol(req.reply, invalid_params(&req.method, &e)),
        };
        let Some(&index) = self.tools_by_name.get(&call.name) else {
            return protocol(req.reply, ErrorObject::invalid_params(format!("Unknown tool: {}", call.name)));
        };
        let entry = &self.tools[index];
        if let Err(error) = check_task_support(session, &entry.tool, req.as_task) {
            return protocol(req.reply, error);
        }
        if let Err(error) = check_mirrored_arguments(session, &req.extras, entry, call.arguments.as_ref()) {
            return protocol(req.reply, error);
        }
        let arguments = serde_json::Value::Object(call.arguments.unwrap_or_default());
        let violations = crate::schema::validate::validate(&entry.tool.input_schema, &arguments);
        let arguments = match arguments {
            serde_json::Value::Object(map) => map,
            _ => JsonObject::new(),
        };
        if let Some(problems) = crate::schema::validate::describe(&violations) {
            let message = format!("Invalid arguments for tool {}: {problems}", call.name);
            return ToolRun::Answer(req.reply, Err(ToolError::Execution(message)));
        }
        let mut ctx = req.context(session, state, call.name);
        ctx.input_responses = call.input_responses;
        ctx.request_state = call.request_state;
        let outcome = (entry.call)(&mut ctx, arguments);
        let input_required = ctx.input_required.take();
        match (ctx.reply.take(), input_required) {
            (Some(reply), Some(needed)) => ToolRun::InputRequired(reply, needed),
            (Some(reply), None) => ToolRun::Answer(reply, outcome),
            (None, _) => ToolRun::Deferred,
        }
    }

    /// Runs a `tools/call` as a task (2025-11-25): its answer goes to the task, not to the
    /// wire, so `request` carries a detached reply token.
    pub(crate) fn run_tool_as_task(
        &self,
        session: &mut Session<Server>,
        state: &mut S,
        request: IncomingRequest,
        extras: Extras,
    ) -> ToolRun {
        let IncomingRequest { reply, method, params, progress_token, meta } = request;
        let req = Req { reply, method, params, progress_token, meta, extras, as_task: true };
        self.run_tool(session, state, req)
    }

    /// The `taskSupport` of the tool `name`, if the router has it.
    pub(crate) fn task_support(&self, name: &str) -> Option<TaskSupport> {
        self.tools_by_name.get(name).map(|&index| self.tools[index].tool.task_support())
    }

    /// Whether any tool may be called as a task.
    pub(crate) fn offers_tasks(&self) -> bool {
        self.tools.iter().any(|entry| entry.tool.task_support() != TaskSupport::Forbidden)
    }

    fn list_prompts(&self, session: &mut Session<Server>, req: Req) -> Result<(), SendError> {
        self.list(session, req, &self.prompts, |p| p.prompt.clone(), ListPromptsResult::new)
    }

    fn list_resources(&self, session: &mut Session<Server>, req: Req) -> Result<(), SendError> {
        self.list(session, req, &self.resources, |r| r.resource.clone(), ListResourcesResult::new)
    }

    fn list_templates(&self, session: &mut Session<Server>, req: Req) -> Result<(), SendError> {
        self.list(session, req, &self.templates, |t| t.template.clone(), ListResourceTemplatesResult::new)
    }

    fn read_resource(&self, session: &mut Session<Server>, state: &mut S, req: Req) -> Result<(), SendError> {
        let read: ReadResourceRequestParams = match decode(req.params.as_deref()) {
            Ok(r) => r,
            Err(e) => return session.respond(req.reply, Err(invalid_params(&req.method, &e))),
        };
        let Some((reader, name, vars)) = find(&self.resources, &self.templates, &read.uri) else {
            let version = session.version().unwrap_or(crate::version::ProtocolVersion::LATEST_LEGACY);
            return session.respond(req.reply, Err(resource_not_found(&read.uri, version)));
        };
        let mut ctx = req.context(session, state, name.to_owned());
        let outcome = reader(&mut ctx, &read.uri, &vars);
        let Some(reply) = ctx.reply.take() else { return Ok(()) };
        match outcome {
            Ok(contents) => {
                let mut result = ReadResourceResult::new(contents);
                self.hint(&mut result.ttl_ms, &mut result.cache_scope);
                respond_adapted(session, reply, result)
            }
            Err(e) => session.respond(reply, Err(error_of(e))),
        }
    }

    fn subscribe(&self, session: &mut Session<Server>, state: &mut S, req: Req) -> Result<(), SendError> {
        let Some((on_subscribe, on_unsubscribe)) = &self.subscriptions else { return Ok(()) };
        let params: SubscribeRequestParams = match decode(req.params.as_deref()) {
            Ok(p) => p,
            Err(e) => return session.respond(req.reply, Err(invalid_params(&req.method, &e))),
        };
        let subscribing = req.method == "resources/subscribe";
        if subscribing && find(&self.resources, &self.templates, &params.uri).is_none() {
            let version = session.version().unwrap_or(crate::version::ProtocolVersion::LATEST_LEGACY);
            return session.respond(req.reply, Err(resource_not_found(&params.uri, version)));
        }
        let handler = if subscribing { on_subscribe } else { on_unsubscribe };
        let mut ctx = req.context(session, state, params.uri.clone());
        let outcome = handler(&mut ctx, &params.uri);
        let Some(reply) = ctx.reply.take() else { return Ok(()) };
        match outcome {
            Ok(()) => session.respond_with(reply, &crate::schema::EmptyResult::default()),
            Err(e) => session.respond(reply, Err(error_of(e))),
        }
    }

    /// Tells `session`'s client that the resource at `uri` changed (send it to the sessions
    /// subscribed to it).
    ///
    /// # Errors
    ///
    /// [`SendError::MissingCapability`] unless `subscriptions` was configured,
    /// [`SendError::Closed`].
    pub fn resource_updated(&self, session: &mut Session<Server>, uri: &str) -> Result<(), SendError> {
        let params = serde_json::value::to_raw_value(&ResourceUpdatedNotificationParams::new(uri))
            .map_err(|e| SendError::Encode(e.to_string()))?;
        session.notify("notifications/resources/updated", Some(params))
    }

    fn complete(&self, session: &mut Session<Server>, state: &mut S, req: Req) -> Result<(), SendError> {
        let Some(handler) = &self.completion else { return Ok(()) };
        let params: CompleteRequestParams = match decode(req.params.as_deref()) {
            Ok(p) => p,
            Err(e) => return session.respond(req.reply, Err(invalid_params(&req.method, &e))),
        };
        let target = match &params.reference {
            CompletionReference::Prompt(p) if self.prompts_by_name.contains_key(&p.name) => p.name.clone(),
            CompletionReference::Resource(r) if self.templates.iter().any(|t| t.template.uri_template == r.uri) => {
                r.uri.clone()
            }
            CompletionReference::Prompt(p) => {
                return session
                    .respond(req.reply, Err(ErrorObject::invalid_params(format!("Unknown prompt: {}", p.name))));
            }
            CompletionReference::Resource(r) => {
                let error = ErrorObject::invalid_params(format!("Unknown resource template: {}", r.uri));
                return session.respond(req.reply, Err(error));
            }
            _ => return session.respond(req.reply, Err(ErrorObject::invalid_params("Unknown completion reference"))),
        };
        let mut ctx = req.context(session, state, target);
        let outcome = handler(&mut ctx, &params);
        let Some(reply) = ctx.reply.take() else { return Ok(()) };
        match outcome {
            Ok(completion) => respond_adapted(session, reply, CompleteResult::new(completion)),
            Err(e) => session.respond(reply, Err(error_of(e))),
        }
    }

    fn get_prompt(&self, session: &mut Session<Server>, state: &mut S, req: Req) -> Result<(), SendError> {
        let get: GetPromptRequestParams = match decode(req.params.as_deref()) {
            Ok(g) => g,
            Err(e) => return session.respond(req.reply, Err(invalid_params(&req.method, &e))),
        };
        let Some(entry) = self.prompts_by_name.get(&get.name).map(|&i| &self.prompts[i]) else {
            let error = ErrorObject::invalid_params(format!("Unknown prompt: {}", get.name));
            return session.respond(req.reply, Err(error));
        };
        let arguments = get.arguments.unwrap_or_default();
        if let Some(error) = entry.missing_argument(&arguments) {
            return session.respond(req.reply, Err(error));
        }
        let mut ctx = req.context(session, state, get.name);
        let outcome = (entry.get)(&mut ctx, arguments);
        let Some(reply) = ctx.reply.take() else { return Ok(()) };
        match outcome {
            Ok(result) => respond_adapted(session, reply, result),
            Err(e) => session.respond(reply, Err(error_of(e))),
        }
    }

    /// Answers a request whose handler deferred it.
    ///
    /// # Errors
    ///
    /// As [`Router::dispatch`].
    pub fn complete_tool(
        &self,
        session: &mut Session<Server>,
        deferred: Deferred,
        outcome: Result<CallToolResult, ToolError>,
    ) -> Result<(), SendError> {
        answer(session, deferred.reply, outcome)
    }

    /// Answers a prompt or resource read whose async handler deferred it.
    ///
    /// # Errors
    ///
    /// As [`Router::dispatch`].
    pub fn complete_answer(
        &self,
        session: &mut Session<Server>,
        deferred: Deferred,
        answer: super::LaterAnswer,
    ) -> Result<(), SendError> {
        let reply = deferred.reply;
        match answer {
            super::LaterAnswer::Prompt(Ok(result)) => respond_adapted(session, reply, result),
            super::LaterAnswer::Resource(Ok(contents)) => {
                let mut result = ReadResourceResult::new(contents);
                self.hint(&mut result.ttl_ms, &mut result.cache_scope);
                respond_adapted(session, reply, result)
            }
            super::LaterAnswer::Prompt(Err(e)) | super::LaterAnswer::Resource(Err(e)) => {
                session.respond(reply, Err(error_of(e)))
            }
        }
    }
}

/// The members a list result's page and cache hints go into.
trait Listed {
    fn paging_fields(&mut self) -> (&mut Option<String>, &mut Option<u64>, &mut Option<CacheScope>);
}

macro_rules! listed {
    ($($ty:ty),*) => {
        $(impl Listed for $ty {
            fn paging_fields(&mut self) -> (&mut Option<String>, &mut Option<u64>, &mut Option<CacheScope>) {
                (&mut self.next_cursor, &mut self.ttl_ms, &mut self.cache_scope)
            }
        })*
    };
}

listed!(ListToolsResult, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult);

/// How a tool call ran.
pub(crate) enum ToolRun {
    /// The tool (or a check before it) answered.
    Answer(ReplyToken, Result<CallToolResult, ToolError>),
    /// The tool needs the client's input first (2026-07-28).
    InputRequired(ReplyToken, crate::schema::mrtr::InputRequiredResult),
    /// The tool runs on; it answers through its [`Deferred`] later.
    Deferred,
}

/// 2025-11-25: a tool that must be called as a task, called otherwise, or one that must not,
/// called as a task, is refused with -32601, as the spec says a server must (should, for the
/// latter). Other revisions have no tasks, and call every tool normally.
fn check_task_support(session: &Session<Server>, tool: &Tool, as_task: bool) -> Result<(), ErrorObject> {
    if !session.version().is_some_and(|v| v.supports(crate::version::Feature::Tasks)) {
        return Ok(());
    }
    match (tool.task_support(), as_task) {
        (TaskSupport::Required, false) => Err(ErrorObject::new(
            crate::jsonrpc::ErrorCode::METHOD_NOT_FOUND,
            format!("tool {} must be called as a task", tool.name),
        )),
        (TaskSupport::Forbidden, true) => Err(ErrorObject::new(
            crate::jsonrpc::ErrorCode::METHOD_NOT_FOUND,
            format!("tool {} cannot be called as a task", tool.name),
        )),
        _ => Ok(()),
    }
}

/// The outcome of a tool call as a task keeps it: the result as the revision encodes it (an
/// execution error as an `isError` result), or the JSON-RPC error; and whether the task
/// failed (an error, or an `isError` result).
pub(crate) fn task_outcome(
    version: Option<crate::version::ProtocolVersion>,
    outcome: Result<CallToolResult, ToolError>,
) -> (Result<Box<serde_json::value::RawValue>, ErrorObject>, bool) {
    let mut result = match outcome {
        Ok(result) => result,
        Err(ToolError::Execution(message)) => CallToolResult::error(message),
        Err(ToolError::Protocol(error)) => return (Err(error), true),
        Err(ToolError::InputRequired(_)) => {
            return (Err(ErrorObject::internal("the tool asked for input_required outside 2026-07-28")), true);
        }
    };
    if let Some(version) = version {
        result.adapt_to(version);
    }
    let failed = result.is_error();
    match serde_json::value::to_raw_value(&result) {
        Ok(raw) => (Ok(raw), failed),
        Err(e) => (Err(ErrorObject::internal(e.to_string())), true),
    }
}

/// A stateless-era call over HTTP: its `Mcp-Param-*` headers must match the `arguments`
/// the tool's schema mirrors (a `-32020` error, HTTP 400, when they do not).
fn check_mirrored_arguments<S>(
    session: &Session<Server>,
    extras: &Extras,
    entry: &ToolEntry<S>,
    arguments: Option<&JsonObject>,
) -> Result<(), ErrorObject> {
    let stateless = session.version().is_some_and(|v| v.supports(crate::version::Feature::Stateless));
    let Some(transport) = extras.transport.as_deref().filter(|t| t.kind == "http" && stateless) else {
        return Ok(());
    };
    if entry.mirrored.is_empty() {
        return Ok(());
    }
    let none = JsonObject::new();
    check_param_headers(&entry.mirrored, arguments.unwrap_or(&none), &transport.headers)
}

/// A request on its way to a handler.
struct Req {
    reply: ReplyToken,
    method: String,
    params: Option<Box<serde_json::value::RawValue>>,
    progress_token: Option<ProgressToken>,
    meta: Option<Box<RequestMeta>>,
    extras: Extras,
    /// A `tools/call` run as a task (2025-11-25).
    as_task: bool,
}

impl Req {
    /// The `cursor` of a list request, or the error answer with the reply back.
    fn cursor(self) -> Result<(ReplyToken, Option<String>), (ReplyToken, ErrorObject)> {
        match decode::<PaginatedRequestParams>(self.params.as_deref()) {
            Ok(p) => Ok((self.reply, p.cursor)),
            Err(e) => Err((self.reply, invalid_params(&self.method, &e))),
        }
    }

    /// The handler's context for this request about `target`.
    fn context<'a, S>(self, session: &'a mut Session<Server>, state: &'a mut S, target: String) -> Context<'a, S> {
        let id = self.reply.id().clone();
        Context {
            session,
            state,
            reply: Some(self.reply),
            id,
            target,
            progress_token: self.progress_token,
            meta: self.meta,
            extras: self.extras,
            input_responses: None,
            request_state: None,
            input_required: None,
        }
    }
}

/// Sends a result adapted to the negotiated revision.
pub(super) fn respond_adapted<T: Serialize + ForRevision>(
    session: &mut Session<Server>,
    reply: ReplyToken,
    mut result: T,
) -> Result<(), SendError> {
    if let Some(v) = session.version() {
        result.adapt_to(v);
    }
    session.respond_with(reply, &result)
}

/// Sends a tool's outcome: results adapted to the revision, execution errors as `isError`
/// results, protocol errors as JSON-RPC errors.
pub(super) fn answer(
    session: &mut Session<Server>,
    reply: ReplyToken,
    outcome: Result<CallToolResult, ToolError>,
) -> Result<(), SendError> {
    let result = match outcome {
        Ok(result) => result,
        Err(ToolError::Execution(message)) => CallToolResult::error(message),
        Err(ToolError::Protocol(error)) => match url_elicitations_as_input(session, &error) {
            // 2026-07-28 has no -32042: the pages to visit become the call's input requests.
            Some(needed) => return respond_adapted(session, reply, needed),
            None => return session.respond(reply, Err(error)),
        },
        Err(ToolError::InputRequired(needed)) => {
            if session.version().is_some_and(|v| v.supports(crate::version::Feature::Mrtr)) {
                return respond_adapted(session, reply, *needed);
            }
            let error = ErrorObject::internal("the tool asked for input_required outside 2026-07-28");
            return session.respond(reply, Err(error));
        }
    };
    respond_adapted(session, reply, result)
}

/// In the stateless era, a -32042 URL-elicitation-required error (which 2026-07-28 no longer
/// has) as the `input_required` answer that carries the same URL elicitations as input
/// requests (`url-1`, `url-2`, ...): the client sends the user to each page and calls again,
/// and the tool decides anew. `None` for any other error or revision.
fn url_elicitations_as_input(
    session: &Session<Server>,
    error: &ErrorObject,
) -> Option<crate::schema::mrtr::InputRequiredResult> {
    use crate::schema::mrtr::{InputRequest, InputRequiredResult};
    if error.code != crate::jsonrpc::ErrorCode::URL_ELICITATION_REQUIRED
        || !session.version().is_some_and(|v| v.supports(crate::version::Feature::Mrtr))
    {
        return None;
    }
    let pages = error.data.as_ref()?.get("elicitations")?.as_array()?;
    let mut needed = InputRequiredResult::new();
    for (i, page) in pages.iter().enumerate() {
        let mut params = page.clone();
        if let Some(params) = params.as_object_mut() {
            params.insert("mode".into(), serde_json::Value::String("url".into()));
            // 2026-07-28 correlates through the input request's key, not an elicitation id.
            params.remove("elicitationId");
        }
        let request = serde_json::json!({"method": "elicitation/create", "params": params});
        let request: InputRequest = serde_json::from_value(request).ok()?;
        needed.input_requests.get_or_insert_with(Default::default).insert(format!("url-{}", i + 1), request);
    }
    needed.input_requests.is_some().then_some(needed)
}

fn decode<T: DeserializeOwned>(params: Option<&serde_json::value::RawValue>) -> Result<T, serde_json::Error> {
    serde_json::from_str(params.map_or("{}", serde_json::value::RawValue::get))
}

fn invalid_params(method: &str, e: &serde_json::Error) -> ErrorObject {
    ErrorObject::invalid_params(format!("Invalid params for {method}: {e}"))
}
