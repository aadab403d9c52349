//! The typed layers end to end, in memory, on one thread, without I/O: a
//! [`talaria_core::client::Endpoint`] talks to a [`talaria_core::server::Endpoint`] serving a
//! sample [`Router`], over a link that moves every transmitted frame (as a newline-terminated
//! line) to the other side until both are quiet. Every scenario runs under each revision its
//! feature exists in; time stands still unless a test moves it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use talaria_core::client::{self, CallOptions, Handlers, Progress};
use talaria_core::jsonrpc::{CallError, ErrorCode, LocalError, RequestId};
use talaria_core::schema::completion::Completion;
use talaria_core::schema::completion::{Complete, CompleteRequestParams, CompletionArgument, PromptReference};
use talaria_core::schema::lifecycle::SamplingCapability;
use talaria_core::schema::logging::{SetLevel, SetLevelRequestParams};
use talaria_core::schema::mrtr::{InputRequest, InputResponse, ListRootsRequest};
use talaria_core::schema::prompts::{GetPrompt, GetPromptRequestParams, GetPromptResult, ListPrompts, Prompt};
use talaria_core::schema::prompts::{PromptArgument, PromptMessage};
use talaria_core::schema::resources::{
    ListResourceTemplates, ListResources, ReadResource, ReadResourceRequestParams, Resource, ResourceTemplate,
    Subscribe, SubscribeRequestParams, Unsubscribe, UnsubscribeRequestParams,
};
use talaria_core::schema::roots::{ListRoots, Root};
use talaria_core::schema::sampling::{CreateMessage, CreateMessageRequestParams};
use talaria_core::schema::subscriptions::{SubscriptionFilter, SubscriptionsListen, SubscriptionsListenRequestParams};
use talaria_core::schema::tools::{CallTool, CallToolRequestParams, CallToolResult, ListTools, Tool};
use talaria_core::schema::utilities::Ping;
use talaria_core::schema::{
    meta_keys, Capability, Implementation, JsonObject, LoggingLevel, PaginatedRequestParams, RequestMethod,
    RequestParams, ResourceContents, TextResourceContents,
};
use talaria_core::server::{self, Deferred, Router, ToolError};
use talaria_core::session::{ClientConfig, ClientMode, Event, Output, RequestOptions, SendError, ServerConfig};
use talaria_core::version::{Feature, ProtocolVersion};

// ---------------------------------------------------------------------------------------------
// The revision table
// ---------------------------------------------------------------------------------------------

/// One way to open a session: the revision it must end up on and the client mode that gets there.
#[derive(Debug, Clone, Copy)]
struct Row {
    version: ProtocolVersion,
    mode: ClientMode,
}

impl Row {
    fn stateless(self) -> bool {
        self.version.supports(Feature::Stateless)
    }

    fn has(self, feature: Feature) -> bool {
        self.version.supports(feature)
    }
}

/// Every revision: the legacy ones with the client pinned to it, 2026-07-28 both pinned
/// (Stateless) and probed for (Auto).
const ROWS: [Row; 6] = [
    Row { version: ProtocolVersion::V2024_11_05, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2025_03_26, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2025_06_18, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2025_11_25, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2026_07_28, mode: ClientMode::Stateless },
    Row { version: ProtocolVersion::V2026_07_28, mode: ClientMode::Auto },
];

fn rows_with(feature: Feature) -> impl Iterator<Item = Row> {
    ROWS.into_iter().filter(move |r| r.has(feature))
}

fn legacy_rows() -> impl Iterator<Item = Row> {
    ROWS.into_iter().filter(|r| !r.stateless())
}

fn stateless_rows() -> impl Iterator<Item = Row> {
    ROWS.into_iter().filter(|r| r.stateless())
}

// ---------------------------------------------------------------------------------------------
// The sample server
// ---------------------------------------------------------------------------------------------

/// Per-session state: deferred calls waiting for the test, and what the client subscribed to.
#[derive(Debug, Default)]
struct State {
    deferred: Vec<Deferred>,
    subscribed: Vec<String>,
}

#[derive(Deserialize)]
struct Echo {
    text: String,
    times: Option<usize>,
}

#[derive(Deserialize)]
struct City {
    city: String,
}

#[derive(Serialize)]
struct Forecast {
    city: String,
    celsius: f64,
}

fn schema(v: Value) -> JsonObject {
    serde_json::from_value(v).unwrap()
}

fn empty_schema() -> JsonObject {
    schema(json!({"type": "object"}))
}

/// The tools `sample_router` registers, in registration order.
const TOOLS: [&str; 10] =
    ["echo", "weather", "explode", "later", "slow", "whereami", "confirm", "needy", "liar", "noisy"];

fn roots_request() -> InputRequest {
    InputRequest::from(ListRootsRequest::default())
}

fn sample_router(page_size: usize) -> Router<State> {
    let echo = Tool::new(
        "echo",
        schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
            "required": ["text"]
        })),
    )
    .with_description("Repeats the text");
    let weather = Tool::new(
        "weather",
        schema(json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})),
    )
    .with_output_schema(schema(json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["city", "celsius"]
    })));
    let liar = Tool::new("liar", empty_schema()).with_output_schema(schema(json!({
        "type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]
    })));
    let greet = Prompt::new("greet")
        .with_description("Greets someone")
        .with_argument(PromptArgument::required("name"))
        .with_argument(PromptArgument::optional("tone"));
    Router::<State>::builder()
        .page_size(page_size)
        .tool(echo, |_ctx, args: Echo| Ok(CallToolResult::text(args.text.repeat(args.times.unwrap_or(1)))))
        .structured_tool(weather, |_ctx, args: City| Ok(Forecast { city: args.city, celsius: 21.5 }))
        .tool(Tool::new("explode", empty_schema()), |_ctx, _: Value| Err(ToolError::execution("the tool exploded")))
        .tool(Tool::new("later", empty_schema()), |ctx, _: Value| {
            let deferred = ctx.defer().expect("the reply is still there");
            ctx.state().deferred.push(deferred);
            Ok(CallToolResult::text("ignored: the call was deferred"))
        })
        .tool(Tool::new("slow", empty_schema()), |ctx, _: Value| {
            if !ctx.wants_progress() {
                return Ok(CallToolResult::text("no progress asked"));
            }
            for (step, message) in [(1.0, "first"), (2.0, "second")] {
                ctx.progress(step, Some(3.0), Some(message.into())).map_err(|e| ToolError::execution(e.to_string()))?;
            }
            Ok(CallToolResult::text("finished"))
        })
        .tool(Tool::new("whereami", empty_schema()), |ctx, args: Value| {
            // Round 2 (or later): the client's roots are in the input responses.
            if let Some(InputResponse::ListRoots(list)) = ctx.input_responses().and_then(|r| r.get("roots")) {
                assert_eq!(ctx.request_state(), Some("round-1"), "the request state comes back");
                if args.get("defer_after_input") == Some(&Value::Bool(true)) {
                    let deferred = ctx.defer().unwrap();
                    ctx.state().deferred.push(deferred);
                    return Ok(CallToolResult::text("ignored"));
                }
                let uris: Vec<&str> = list.roots.iter().map(|r| r.uri.as_str()).collect();
                return Ok(CallToolResult::text(format!("roots: {}", uris.join(", "))));
            }
            if ctx.require_input([("roots".to_owned(), roots_request())].into(), Some("round-1".into())) {
                Ok(CallToolResult::text("ignored: input required"))
            } else {
                Ok(CallToolResult::text("no input requests in this revision"))
            }
        })
        .tool(Tool::new("confirm", empty_schema()), |ctx, _: Value| {
            let ask: InputRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": {
                "mode": "form", "message": "Sure?",
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}))
            .unwrap();
            if ctx.input_responses().is_none() && ctx.require_input([("ok".to_owned(), ask)].into(), None) {
                return Ok(CallToolResult::text("ignored"));
            }
            Ok(CallToolResult::text("confirmed"))
        })
        .tool(Tool::new("needy", empty_schema()), |ctx, _: Value| {
            // Never satisfied: asks again every round.
            let state = ctx.request_state().unwrap_or("0").parse::<u32>().unwrap() + 1;
            ctx.require_input([("roots".to_owned(), roots_request())].into(), Some(state.to_string()));
            Ok(CallToolResult::text("ignored"))
        })
        .tool(liar, |_ctx, _: Value| Ok(CallToolResult::structured(json!({"count": "many"}))))
        .tool(Tool::new("noisy", empty_schema()), |ctx, _: Value| {
            let info =
                ctx.log(LoggingLevel::Info, json!("an info line")).map_err(|e| ToolError::execution(e.to_string()))?;
            let error =
                ctx.log(LoggingLevel::Error, json!({"oops": 1})).map_err(|e| ToolError::execution(e.to_string()))?;
            Ok(CallToolResult::text(format!("info sent: {info}, error sent: {error}")))
        })
        .prompt(greet, |_ctx, args| {
            let tone = args.get("tone").map_or("warmly", String::as_str);
            let text = format!("Greet {} {tone}", args["name"]);
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(text)]).with_description("A greeting"))
        })
        .resource(Resource::new("file:///readme.md", "readme").with_mime_type("text/markdown"), |_ctx, uri, vars| {
            assert!(vars.is_empty(), "a fixed resource has no variables");
            Ok(vec![TextResourceContents::new(uri, "# Talaria").into()])
        })
        .resource_template(ResourceTemplate::new("notes://{folder}/{id}", "notes"), |_ctx, uri, vars| {
            let text = format!("note {} in {}", vars["id"], vars["folder"]);
            Ok(vec![TextResourceContents::new(uri, text).into()])
        })
        .unwrap()
        .completion(|_ctx, req| {
            let prefix = req.argument.value.clone();
            Ok(Completion::from_values(["Ada", "Alan", "Grace"].into_iter().filter(|n| n.starts_with(&prefix))))
        })
        .subscriptions(
            |ctx, uri| {
                ctx.state().subscribed.push(uri.to_owned());
                Ok(())
            },
            |ctx, uri| {
                ctx.state().subscribed.retain(|u| u != uri);
                Ok(())
            },
        )
        .logging()
        .notify_list_changes()
        .build()
}

// ---------------------------------------------------------------------------------------------
// The link
// ---------------------------------------------------------------------------------------------

/// What a completion or answer callback received: shared with the callback, read by the test.
struct Outcomes<T>(Arc<Mutex<Vec<Result<T, CallError>>>>);

impl<T> Clone for Outcomes<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: Send + 'static> Outcomes<T> {
    fn new() -> Self {
        Self(Arc::new(Mutex::new(Vec::new())))
    }

    fn sink(&self) -> impl FnOnce(Result<T, CallError>) + Send + 'static {
        let shared = Arc::clone(&self.0);
        move |outcome| shared.lock().unwrap().push(outcome)
    }

    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The one outcome; fails unless the callback ran exactly once.
    fn one(&self) -> Result<T, CallError> {
        let mut all = self.0.lock().unwrap();
        assert_eq!(all.len(), 1, "the callback must run exactly once");
        all.pop().unwrap()
    }
}

/// A client endpoint and a server endpoint joined back to back.
struct Link {
    row: Row,
    router: Rc<RefCell<Router<State>>>,
    client: client::Endpoint,
    server: server::Endpoint<State>,
    now: Instant,
    /// Events the client endpoint did not handle itself.
    client_events: Vec<Event>,
    /// Events the server endpoint did not handle itself.
    server_events: Vec<Event>,
    /// Every frame the client sent, parsed.
    to_server: Vec<Value>,
    /// Every frame the server sent, parsed.
    to_client: Vec<Value>,
}

fn default_handlers() -> Handlers {
    let mut handlers = Handlers::default();
    handlers.add_root(Root::new("file:///work").with_name("work"));
    handlers
}

fn client_config(row: Row) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("typed-client", "1.0")).with_mode(row.mode);
    if row.mode != ClientMode::Auto {
        // Pinned: a legacy client offers exactly this revision in `initialize`.
        config.session.versions = vec![row.version];
    }
    config
}

impl Link {
    fn new(row: Row) -> Self {
        Self::with(row, Rc::new(RefCell::new(sample_router(0))), client_config(row), default_handlers())
    }

    fn with(row: Row, router: Rc<RefCell<Router<State>>>, config: ClientConfig, handlers: Handlers) -> Self {
        let now = Instant::now();
        let server_config = ServerConfig::new(Implementation::new("typed-server", "2.0"))
            .with_capabilities(router.borrow().capabilities());
        let mut link = Self {
            row,
            router,
            client: client::Endpoint::new(config, handlers, now),
            server: server::Endpoint::new(server_config, State::default()),
            now,
            client_events: Vec::new(),
            server_events: Vec::new(),
            to_server: Vec::new(),
            to_client: Vec::new(),
        };
        link.settle();
        assert_eq!(link.client.session().version(), Some(row.version), "{row:?}");
        link
    }

    /// Moves frames both ways until neither side has anything left to say.
    fn settle(&mut self) {
        for _ in 0..100 {
            let mut moved = false;
            while let Some(out) = self.client.poll_output() {
                match out {
                    Output::Transmit { payload, .. } => {
                        self.to_server.push(serde_json::from_slice(&payload).unwrap());
                        let mut line = payload;
                        line.push(b'\n');
                        self.server.handle_bytes(self.now, &line);
                        moved = true;
                    }
                    Output::Event(event) => self.client_events.push(event),
                    _ => {}
                }
            }
            let router = Rc::clone(&self.router);
            let router = router.borrow();
            while let Some(out) = self.server.poll_output(&router) {
                match out {
                    Output::Transmit { payload, .. } => {
                        self.to_client.push(serde_json::from_slice(&payload).unwrap());
                        let mut line = payload;
                        line.push(b'\n');
                        self.client.handle_bytes(self.now, &line);
                        moved = true;
                    }
                    Output::Event(event) => self.server_events.push(event),
                    _ => {}
                }
            }
            if !moved {
                return;
            }
        }
        panic!("the link never went quiet");
    }

    /// Starts typed call `M`; its outcomes are collected.
    fn start<M: RequestMethod>(&mut self, params: &M::Params, options: CallOptions) -> (RequestId, Outcomes<M::Result>)
    where
        M::Result: Send + 'static,
    {
        let outcomes = Outcomes::new();
        let id = self.client.call::<M>(self.now, params, options, outcomes.sink()).expect("the call is sent");
        (id, outcomes)
    }

    /// Typed call `M`, run to its end.
    fn call<M: RequestMethod>(&mut self, params: &M::Params) -> Result<M::Result, CallError>
    where
        M::Result: Send + 'static,
    {
        let (_, outcomes) = self.start::<M>(params, CallOptions::default());
        self.settle();
        outcomes.one()
    }

    fn call_tool(&mut self, name: &str, args: Value) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(name);
        if let Value::Object(args) = args {
            params = params.with_arguments(args);
        }
        self.call::<CallTool>(&params)
    }

    /// The notifications the client endpoint passed on with `method`, as their params.
    fn client_notifications(&self, method: &str) -> Vec<Value> {
        notifications(&self.client_events, method)
    }

    fn server_notifications(&self, method: &str) -> Vec<Value> {
        notifications(&self.server_events, method)
    }

    /// The requests the client sent with `method`.
    fn sent_requests(&self, method: &str) -> Vec<&Value> {
        self.to_server.iter().filter(|m| m["method"] == method && m.get("id").is_some()).collect()
    }
}

fn notifications(events: &[Event], wanted: &str) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Notification { method, params } if method == wanted => {
                Some(params.as_ref().map_or(Value::Null, |p| serde_json::from_str(p.get()).unwrap()))
            }
            _ => None,
        })
        .collect()
}

fn text_of(result: &CallToolResult) -> &str {
    result.content.first().and_then(|c| c.as_text()).expect("a text block")
}

/// The peer's JSON-RPC error, or a failure naming what came instead.
fn remote<T: std::fmt::Debug>(outcome: Result<T, CallError>, row: Row) -> talaria_core::jsonrpc::ErrorObject {
    match outcome {
        Err(CallError::Remote(e)) => e,
        other => panic!("{row:?}: expected a JSON-RPC error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Handshake, ping, tools
// ---------------------------------------------------------------------------------------------

#[test]
fn handshake_ping_and_tools_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let ready: Vec<_> = link
            .client_events
            .iter()
            .filter_map(|e| match e {
                Event::Ready(info) => Some(info.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(ready.len(), 1, "{row:?}: one Ready event");
        assert_eq!(ready[0].version, row.version, "{row:?}");
        assert_eq!(link.client.session().peer_info().unwrap().name, "typed-server", "{row:?}");
        let handshake = if row.stateless() { "server/discover" } else { "initialize" };
        assert_eq!(link.to_server[0]["method"], handshake, "{row:?}");

        // Ping exists only in the legacy era.
        if row.has(Feature::Ping) {
            link.call::<Ping>(&RequestParams::default()).expect("pong");
        } else {
            let refused = link.client.call::<Ping>(link.now, &RequestParams::default(), CallOptions::default(), |_| {});
            assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");
            assert_eq!(link.client.pending(), 0, "{row:?}: nothing waits for a refused call");
        }

        let list = link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let names: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, TOOLS, "{row:?}");
        assert_eq!(list.next_cursor, None, "{row:?}: one page");
        assert_eq!(list.tools[0].input_schema["required"], json!(["text"]), "{row:?}");
        assert_eq!(link.server.session().version(), Some(row.version), "{row:?}: the server agrees");

        let echo = link.call_tool("echo", json!({"text": "hi", "times": 3})).unwrap();
        assert_eq!(text_of(&echo), "hihihi", "{row:?}");
        assert!(!echo.is_error(), "{row:?}");

        let weather = link.call_tool("weather", json!({"city": "Oslo"})).unwrap_or_else(|e| panic!("{row:?}: {e}"));
        let structured = json!({"city": "Oslo", "celsius": 21.5});
        let expected = row.has(Feature::StructuredOutput).then(|| structured.clone());
        assert_eq!(weather.structured_content, expected, "{row:?}");
        let text: Value = serde_json::from_str(text_of(&weather)).unwrap();
        assert_eq!(text, structured, "{row:?}: the text block carries the same JSON");

        let exploded = link.call_tool("explode", json!({})).unwrap();
        assert!(exploded.is_error(), "{row:?}");
        assert_eq!(text_of(&exploded), "the tool exploded", "{row:?}");

        let unknown = remote(link.call_tool("nope", json!({})), row);
        assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(unknown.message.contains("nope"), "{row:?}: {unknown:?}");

        let bad = link.call_tool("echo", json!({"text": 5})).unwrap();
        assert!(bad.is_error(), "{row:?}");
        let why = text_of(&bad);
        assert!(why.contains("\"text\"") && why.contains("expected a string"), "{row:?}: {why}");
        let missing = link.call_tool("echo", json!({})).unwrap();
        assert!(missing.is_error() && text_of(&missing).contains("\"text\""), "{row:?}: {missing:?}");

        assert_eq!(link.client.pending(), 0, "{row:?}");
        assert!(
            !link.client_events.iter().any(|e| matches!(e, Event::PeerMisbehaved(_) | Event::Closed { .. })),
            "{row:?}: {:?}",
            link.client_events
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Prompts
// ---------------------------------------------------------------------------------------------

#[test]
fn prompts_list_and_get_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let list = link.call::<ListPrompts>(&PaginatedRequestParams::default()).unwrap();
        assert_eq!(list.prompts.len(), 1, "{row:?}");
        assert_eq!(list.prompts[0].name, "greet", "{row:?}");
        let arguments = list.prompts[0].arguments.clone().unwrap();
        assert_eq!(arguments.iter().filter(|a| a.is_required()).count(), 1, "{row:?}");

        let got = link
            .call::<GetPrompt>(
                &GetPromptRequestParams::new("greet").with_argument("name", "Ada").with_argument("tone", "briskly"),
            )
            .unwrap();
        assert_eq!(got.messages.len(), 1, "{row:?}");
        assert_eq!(got.messages[0].content.as_text(), Some("Greet Ada briskly"), "{row:?}");
        assert_eq!(got.description.as_deref(), Some("A greeting"), "{row:?}");

        let missing =
            remote(link.call::<GetPrompt>(&GetPromptRequestParams::new("greet").with_argument("tone", "x")), row);
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(missing.message.contains("\"name\""), "{row:?}: {missing:?}");

        let unknown = remote(link.call::<GetPrompt>(&GetPromptRequestParams::new("farewell")), row);
        assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(unknown.message.contains("farewell"), "{row:?}: {unknown:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Resources
// ---------------------------------------------------------------------------------------------

fn text_contents(contents: &[ResourceContents]) -> Vec<(&str, &str)> {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::Text(t) => (t.uri.as_str(), t.text.as_str()),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

#[test]
fn resources_list_templates_and_read_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let list = link.call::<ListResources>(&PaginatedRequestParams::default()).unwrap();
        let uris: Vec<&str> = list.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["file:///readme.md"], "{row:?}");
        assert_eq!(list.resources[0].mime_type.as_deref(), Some("text/markdown"), "{row:?}");

        let templates = link.call::<ListResourceTemplates>(&PaginatedRequestParams::default()).unwrap();
        let patterns: Vec<&str> = templates.resource_templates.iter().map(|t| t.uri_template.as_str()).collect();
        assert_eq!(patterns, ["notes://{folder}/{id}"], "{row:?}");

        let read = link.call::<ReadResource>(&ReadResourceRequestParams::new("file:///readme.md")).unwrap();
        assert_eq!(text_contents(&read.contents), [("file:///readme.md", "# Talaria")], "{row:?}");

        let note = link.call::<ReadResource>(&ReadResourceRequestParams::new("notes://inbox/42")).unwrap();
        assert_eq!(text_contents(&note.contents), [("notes://inbox/42", "note 42 in inbox")], "{row:?}");

        let missing = remote(link.call::<ReadResource>(&ReadResourceRequestParams::new("file:///nope")), row);
        let expected = if row.has(Feature::ResourceNotFoundIsInvalidParams) {
            ErrorCode::INVALID_PARAMS
        } else {
            ErrorCode::RESOURCE_NOT_FOUND
        };
        assert_eq!(missing.code, expected, "{row:?}");
        assert_eq!(missing.data.as_ref().and_then(|d| d.get("uri")), Some(&json!("file:///nope")), "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Completion
// ---------------------------------------------------------------------------------------------

#[test]
fn completion_of_a_prompt_argument_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let ask = |value: &str| {
            CompleteRequestParams::new(PromptReference::new("greet"), CompletionArgument::new("name", value))
        };
        let done = link.call::<Complete>(&ask("A")).unwrap();
        assert_eq!(done.completion.values, ["Ada", "Alan"], "{row:?}");
        assert_eq!(done.completion.total, Some(2), "{row:?}");
        assert!(!done.completion.has_more(), "{row:?}");
        let none = link.call::<Complete>(&ask("Z")).unwrap();
        assert!(none.completion.values.is_empty(), "{row:?}");
        let unknown = remote(
            link.call::<Complete>(&CompleteRequestParams::new(
                PromptReference::new("nope"),
                CompletionArgument::new("x", ""),
            )),
            row,
        );
        assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Pagination
// ---------------------------------------------------------------------------------------------

#[test]
fn pagination_walks_every_cursor_in_every_revision() {
    for row in ROWS {
        let router = Rc::new(RefCell::new(sample_router(1)));
        let mut link = Link::with(row, router, client_config(row), default_handlers());
        let mut names = Vec::new();
        let mut pages = 0;
        let mut params = PaginatedRequestParams::default();
        loop {
            let page = link.call::<ListTools>(&params).unwrap();
            pages += 1;
            assert_eq!(page.tools.len(), 1, "{row:?}: page {pages}");
            names.extend(page.tools.into_iter().map(|t| t.name));
            match page.next_cursor {
                Some(cursor) => params = PaginatedRequestParams::after(cursor),
                None => break,
            }
            assert!(pages <= TOOLS.len(), "{row:?}: the cursors never end");
        }
        assert_eq!(names, TOOLS, "{row:?}");
        assert_eq!(pages, TOOLS.len(), "{row:?}");

        let bad = remote(link.call::<ListTools>(&PaginatedRequestParams::after("not-a-cursor")), row);
        assert_eq!(bad.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(bad.message.contains("cursor"), "{row:?}: {bad:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Deferred calls and cancellation
// ---------------------------------------------------------------------------------------------

#[test]
fn a_deferred_call_completes_exactly_once_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}: not answered yet");
        assert_eq!((link.client.pending(), link.server.running()), (1, 1), "{row:?}");
        let deferred = link.server.state().deferred.pop().expect("the handler deferred");
        assert_eq!(deferred.tool(), "later", "{row:?}");
        assert!(!deferred.cancel_flag().is_cancelled(), "{row:?}");

        let router = Rc::clone(&link.router);
        link.server.complete_tool(&router.borrow(), deferred, Ok(CallToolResult::text("done late"))).unwrap();
        link.settle();
        let result = outcomes.one().unwrap();
        assert_eq!(text_of(&result), "done late", "{row:?}");
        assert_eq!((link.client.pending(), link.server.running()), (0, 0), "{row:?}");
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}: no second completion");

        // A deferred call can fail as a tool error too.
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();
        link.server.complete_tool(&router.borrow(), deferred, Err(ToolError::execution("gave up"))).unwrap();
        link.settle();
        let failed = outcomes.one().unwrap();
        assert!(failed.is_error() && text_of(&failed) == "gave up", "{row:?}: {failed:?}");
    }
}

#[test]
fn cancelling_a_deferred_call_reaches_its_handler() {
    for row in ROWS {
        let mut link = Link::new(row);
        let (id, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();

        link.client.cancel(&id, Some("no longer needed")).unwrap();
        link.settle();
        match outcomes.one() {
            Err(CallError::Local(LocalError::Cancelled { reason })) => {
                assert_eq!(reason.as_deref(), Some("no longer needed"), "{row:?}");
            }
            other => panic!("{row:?}: {other:?}"),
        }
        let told = link.to_server.iter().filter(|m| m["method"] == "notifications/cancelled").count();
        assert_eq!(told, 1, "{row:?}: the server is told once");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: the handler sees the cancellation");
        assert_eq!((link.client.pending(), link.server.running()), (0, 0), "{row:?}");

        // The late answer goes nowhere.
        let frames = link.to_client.len();
        let router = Rc::clone(&link.router);
        link.server.complete_tool(&router.borrow(), deferred, Ok(CallToolResult::text("too late"))).unwrap();
        link.settle();
        assert_eq!(link.to_client.len(), frames, "{row:?}: nothing is sent for a cancelled request");
        assert_eq!(outcomes.count(), 0, "{row:?}");
        assert_eq!(link.client.session().late_responses(), 0, "{row:?}");

        // Cancelling again, or an id never issued, is a no-op.
        link.client.cancel(&id, None).unwrap();
        link.client.cancel(&RequestId::from(9999), None).unwrap();
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Progress
// ---------------------------------------------------------------------------------------------

#[test]
fn progress_reaches_the_callback_of_its_call() {
    for row in ROWS {
        let mut link = Link::new(row);
        let reports = Arc::new(Mutex::new(Vec::<Progress>::new()));
        let sink = Arc::clone(&reports);
        let options = CallOptions::default().with_progress(move |p| sink.lock().unwrap().push(p));
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("slow"), options);
        link.settle();
        assert_eq!(text_of(&outcomes.one().unwrap()), "finished", "{row:?}");
        let seen = reports.lock().unwrap().clone();
        let steps: Vec<(f64, Option<f64>)> = seen.iter().map(|p| (p.progress, p.total)).collect();
        assert_eq!(steps, [(1.0, Some(3.0)), (2.0, Some(3.0))], "{row:?}");
        if row.has(Feature::ProgressMessage) {
            let messages: Vec<Option<&str>> = seen.iter().map(|p| p.message.as_deref()).collect();
            assert_eq!(messages, [Some("first"), Some("second")], "{row:?}");
        }
        assert!(!link.client_events.iter().any(|e| matches!(e, Event::Progress { .. })), "{row:?}: all handled");

        // Without the option the server is not asked, and nothing is reported.
        let quiet = link.call_tool("slow", json!({})).unwrap();
        assert_eq!(text_of(&quiet), "no progress asked", "{row:?}");
        assert_eq!(reports.lock().unwrap().len(), 2, "{row:?}");
        assert!(!link
            .to_client
            .iter()
            .any(|m| m["method"] == "notifications/progress" && m["params"]["progress"] == 3.0));
    }
}

#[test]
fn progress_messages_follow_the_revision() {
    // 2024-11-05 has no `message` on progress notifications (Feature::ProgressMessage).
    let row = ROWS[0];
    let mut link = Link::new(row);
    let options = CallOptions::default().with_progress(|_| {});
    let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("slow"), options);
    link.settle();
    outcomes.one().unwrap();
    let progress: Vec<&Value> = link.to_client.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 2);
    for p in progress {
        assert!(p["params"].get("message").is_none(), "2024-11-05 progress carries no message: {p}");
    }
}

// ---------------------------------------------------------------------------------------------
// 8. List changes and resource updates
// ---------------------------------------------------------------------------------------------

#[test]
fn list_changes_are_announced_on_the_connection_in_the_legacy_era() {
    for row in legacy_rows() {
        let mut link = Link::new(row);
        assert_eq!(
            link.client.session().server_capabilities().unwrap().tools.as_ref().unwrap().list_changed,
            Some(true)
        );
        let change = link
            .router
            .borrow_mut()
            .add_tool(Tool::new("late_arrival", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("here")));
        link.server.announce(change).unwrap();
        link.settle();
        assert_eq!(link.client_notifications("notifications/tools/list_changed").len(), 1, "{row:?}");
        let list = link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        assert_eq!(list.tools.last().unwrap().name, "late_arrival", "{row:?}");
        assert_eq!(text_of(&link.call_tool("late_arrival", json!({})).unwrap()), "here", "{row:?}");

        let change = link.router.borrow_mut().remove_tool("late_arrival").unwrap();
        link.server.announce(change).unwrap();
        link.settle();
        assert_eq!(link.client_notifications("notifications/tools/list_changed").len(), 2, "{row:?}");

        // A server that did not negotiate listChanged stays quiet.
        let quiet = Rc::new(RefCell::new(
            Router::<State>::builder()
                .tool(Tool::new("only", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")))
                .build(),
        ));
        let mut quiet_link = Link::with(row, Rc::clone(&quiet), client_config(row), default_handlers());
        let change =
            quiet.borrow_mut().add_tool(Tool::new("x", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")));
        let frames = quiet_link.to_client.len();
        quiet_link.server.announce(change).unwrap();
        quiet_link.settle();
        assert_eq!(quiet_link.to_client.len(), frames, "{row:?}: nothing sent without listChanged");
    }
}

#[test]
fn listen_streams_carry_what_they_asked_for_in_the_stateless_era() {
    for row in stateless_rows() {
        let mut link = Link::new(row);
        // Nothing is announced before anyone listens.
        let change = link
            .router
            .borrow_mut()
            .add_tool(Tool::new("early", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")));
        let frames = link.to_client.len();
        link.server.announce(change).unwrap();
        assert!(!link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        link.settle();
        assert_eq!(link.to_client.len(), frames, "{row:?}");

        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["file:///readme.md".into()]),
            ..SubscriptionFilter::default()
        };
        let (listen_id, listen) =
            link.start::<SubscriptionsListen>(&SubscriptionsListenRequestParams::new(filter), CallOptions::default());
        link.settle();
        assert_eq!(listen.count(), 0, "{row:?}: the listen request stays open");
        let acks = link.client_notifications("notifications/subscriptions/acknowledged");
        assert_eq!(acks.len(), 1, "{row:?}");
        assert_eq!(
            acks[0]["notifications"],
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///readme.md"]}),
            "{row:?}"
        );
        let subscription_id = serde_json::to_value(&listen_id).unwrap();
        assert_eq!(acks[0]["_meta"][meta_keys::SUBSCRIPTION_ID], subscription_id, "{row:?}");

        let change = link
            .router
            .borrow_mut()
            .add_tool(Tool::new("late_arrival", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")));
        link.server.announce(change).unwrap();
        let prompts =
            link.router.borrow_mut().add_prompt(Prompt::new("extra"), |_ctx, _| Ok(GetPromptResult::new(vec![])));
        link.server.announce(prompts).unwrap();
        assert!(link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        assert!(!link.server.resource_updated("notes://inbox/1").unwrap(), "{row:?}: not asked for");
        link.settle();
        let changed = link.client_notifications("notifications/tools/list_changed");
        assert_eq!(changed.len(), 1, "{row:?}");
        assert_eq!(changed[0]["_meta"][meta_keys::SUBSCRIPTION_ID], subscription_id, "{row:?}");
        assert!(link.client_notifications("notifications/prompts/list_changed").is_empty(), "{row:?}: not asked for");
        let updated = link.client_notifications("notifications/resources/updated");
        assert_eq!(updated.len(), 1, "{row:?}");
        assert_eq!(updated[0]["uri"], "file:///readme.md", "{row:?}");

        // A listen request lives until it is cancelled: the request timeouts (30 s, and 10 min
        // in all) do not end it.
        link.now += std::time::Duration::from_secs(3600);
        if let Some(deadline) = link.client.poll_timeout() {
            assert!(deadline > link.now, "{row:?}: no deadline within the hour");
        }
        link.client.handle_timeout(link.now);
        link.settle();
        assert_eq!(listen.count(), 0, "{row:?}: still listening");
        assert!(link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        link.settle();
        assert_eq!(link.client_notifications("notifications/resources/updated").len(), 2, "{row:?}");

        // Ending the listen request ends the stream.
        link.client.cancel(&listen_id, None).unwrap();
        link.settle();
        assert!(matches!(listen.one(), Err(CallError::Local(LocalError::Cancelled { .. }))), "{row:?}");
        let frames = link.to_client.len();
        let change = link.router.borrow_mut().remove_tool("late_arrival").unwrap();
        link.server.announce(change).unwrap();
        assert!(!link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        link.settle();
        assert_eq!(link.to_client.len(), frames, "{row:?}: the stream is gone");
    }
}

#[test]
fn resource_updates_reach_only_subscribed_clients() {
    for row in ROWS {
        let router = Rc::new(RefCell::new(sample_router(0)));
        let mut subscribed = Link::with(row, Rc::clone(&router), client_config(row), default_handlers());
        let mut other = Link::with(row, Rc::clone(&router), client_config(row), default_handlers());
        let uri = "file:///readme.md";
        if row.has(Feature::ResourceSubscribe) {
            subscribed.call::<Subscribe>(&SubscribeRequestParams::new(uri)).unwrap();
            assert_eq!(subscribed.server.state().subscribed, [uri], "{row:?}: the handler ran");
            assert_eq!(subscribed.server.subscriptions().collect::<Vec<_>>(), [uri], "{row:?}");
            let unknown = remote(subscribed.call::<Subscribe>(&SubscribeRequestParams::new("file:///nope")), row);
            assert_eq!(unknown.code, ErrorCode::RESOURCE_NOT_FOUND, "{row:?}");
            assert_eq!(subscribed.server.subscriptions().count(), 1, "{row:?}: not tracked");
        } else {
            let refused = subscribed.client.call::<Subscribe>(
                subscribed.now,
                &SubscribeRequestParams::new(uri),
                CallOptions::default(),
                |_| {},
            );
            assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");
            let filter =
                SubscriptionFilter { resource_subscriptions: Some(vec![uri.into()]), ..SubscriptionFilter::default() };
            let _listen = subscribed
                .start::<SubscriptionsListen>(&SubscriptionsListenRequestParams::new(filter), CallOptions::default());
            subscribed.settle();
        }
        assert!(subscribed.server.resource_updated(uri).unwrap(), "{row:?}");
        assert!(!other.server.resource_updated(uri).unwrap(), "{row:?}");
        assert!(!subscribed.server.resource_updated("notes://a/b").unwrap(), "{row:?}");
        subscribed.settle();
        other.settle();
        let got = subscribed.client_notifications("notifications/resources/updated");
        assert_eq!(got.len(), 1, "{row:?}");
        assert_eq!(got[0]["uri"], uri, "{row:?}");
        assert!(other.client_notifications("notifications/resources/updated").is_empty(), "{row:?}");

        if row.has(Feature::ResourceSubscribe) {
            subscribed.call::<Unsubscribe>(&UnsubscribeRequestParams::new(uri)).unwrap();
            assert!(subscribed.server.state().subscribed.is_empty(), "{row:?}");
            assert!(!subscribed.server.resource_updated(uri).unwrap(), "{row:?}: unsubscribed");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 9. Server-to-client requests
// ---------------------------------------------------------------------------------------------

fn sampling_params() -> CreateMessageRequestParams {
    serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
        "maxTokens": 20
    }))
    .unwrap()
}

#[test]
fn the_server_asks_the_client_for_roots_and_sampling() {
    for row in legacy_rows() {
        let mut link = Link::new(row);
        let roots = Outcomes::new();
        link.server
            .ask::<ListRoots>(link.now, &RequestParams::default(), RequestOptions::default(), roots.sink())
            .unwrap();
        link.settle();
        let got = roots.one().unwrap();
        assert_eq!(got.roots, [Root::new("file:///work").with_name("work")], "{row:?}");

        // Changing the roots tells the server, which then sees the new list.
        let added = link.client.update_roots(|h| h.add_root(Root::new("file:///other"))).unwrap();
        assert!(added);
        link.settle();
        assert_eq!(link.server_notifications("notifications/roots/list_changed").len(), 1, "{row:?}");
        let roots = Outcomes::new();
        link.server
            .ask::<ListRoots>(link.now, &RequestParams::default(), RequestOptions::default(), roots.sink())
            .unwrap();
        link.settle();
        assert_eq!(roots.one().unwrap().roots.len(), 2, "{row:?}");
        // No change, no notification.
        link.client.update_roots(|h| h.add_root(Root::new("file:///other"))).unwrap();
        link.settle();
        assert_eq!(link.server_notifications("notifications/roots/list_changed").len(), 1, "{row:?}");

        // No sampling handler: the client does not declare sampling, so the server may not ask.
        let refused = link.server.ask::<CreateMessage>(link.now, &sampling_params(), RequestOptions::default(), |_| {});
        assert!(
            matches!(refused, Err(SendError::MissingCapability { capability: Capability::Sampling, .. })),
            "{row:?}: {refused:?}"
        );

        // A client that declares sampling without a handler answers -32601.
        let mut config = client_config(row);
        config.capabilities.sampling = Some(SamplingCapability::default());
        let mut liar = Link::with(row, Rc::new(RefCell::new(sample_router(0))), config, default_handlers());
        let answer = Outcomes::new();
        liar.server
            .ask::<CreateMessage>(liar.now, &sampling_params(), RequestOptions::default(), answer.sink())
            .unwrap();
        liar.settle();
        let error = remote(answer.one(), row);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND, "{row:?}");

        // A client with a handler answers.
        let handlers = default_handlers().with_sampling(|params| {
            assert_eq!(params.max_tokens, 20);
            Ok(serde_json::from_value(
                json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}),
            )
            .unwrap())
        });
        let mut sampler = Link::with(row, Rc::new(RefCell::new(sample_router(0))), client_config(row), handlers);
        let answer = Outcomes::new();
        sampler
            .server
            .ask::<CreateMessage>(sampler.now, &sampling_params(), RequestOptions::default(), answer.sink())
            .unwrap();
        sampler.settle();
        let sampled = serde_json::to_value(answer.one().unwrap()).unwrap();
        assert_eq!(sampled["content"]["text"], "Paris", "{row:?}");
    }
    for row in stateless_rows() {
        let mut link = Link::new(row);
        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let refused =
            link.server.ask::<ListRoots>(link.now, &RequestParams::default(), RequestOptions::default(), |_| {});
        assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");
        // Roots changes have no notification in this era: nothing is sent.
        let frames = link.to_server.len();
        assert!(link.client.update_roots(|h| h.add_root(Root::new("file:///other"))).unwrap());
        link.settle();
        assert_eq!(link.to_server.len(), frames, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 10. Multi round-trip requests
// ---------------------------------------------------------------------------------------------

#[test]
fn input_required_results_are_answered_and_retried_transparently() {
    for row in rows_with(Feature::Mrtr) {
        let mut link = Link::new(row);
        let (first_id, outcomes) =
            link.start::<CallTool>(&CallToolRequestParams::new("whereami"), CallOptions::default());
        link.settle();
        let result = outcomes.one().unwrap();
        assert_eq!(text_of(&result), "roots: file:///work", "{row:?}");
        let calls = link.sent_requests("tools/call");
        assert_eq!(calls.len(), 2, "{row:?}: one retry");
        assert_eq!(calls[0]["id"], serde_json::to_value(&first_id).unwrap(), "{row:?}");
        assert_ne!(calls[1]["id"], calls[0]["id"], "{row:?}: the retry has a new id");
        assert_eq!(calls[1]["params"]["requestState"], "round-1", "{row:?}");
        assert_eq!(calls[1]["params"]["inputResponses"]["roots"]["roots"][0]["uri"], "file:///work", "{row:?}");
        assert!(
            calls[1]["params"]["_meta"].get(meta_keys::PROTOCOL_VERSION).is_some(),
            "{row:?}: the retry is stamped"
        );
        assert_eq!(link.client.pending(), 0, "{row:?}");

        // What the client cannot answer fails the call instead of looping.
        match link.call_tool("confirm", json!({})) {
            Err(CallError::Local(LocalError::NotSent(why))) => assert!(why.contains("ok"), "{row:?}: {why}"),
            other => panic!("{row:?}: {other:?}"),
        }
        // A server that never stops asking runs into the round limit.
        link.client.set_max_input_rounds(2);
        let before = link.sent_requests("tools/call").len();
        match link.call_tool("needy", json!({})) {
            Err(CallError::Local(LocalError::MalformedResponse(why))) => {
                assert!(why.contains("2 rounds"), "{row:?}: {why}");
            }
            other => panic!("{row:?}: {other:?}"),
        }
        assert_eq!(link.sent_requests("tools/call").len() - before, 3, "{row:?}: the first attempt and two retries");
        assert_eq!(link.client.pending(), 0, "{row:?}");

        // Cancelling by the first attempt's id cancels the retry in flight.
        let args = json!({"defer_after_input": true}).as_object().cloned().unwrap();
        let (origin, outcomes) = link
            .start::<CallTool>(&CallToolRequestParams::new("whereami").with_arguments(args), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().expect("deferred on the retry");
        assert_ne!(serde_json::to_value(deferred.reply().id()).unwrap(), serde_json::to_value(&origin).unwrap());
        link.client.cancel(&origin, Some("stop")).unwrap();
        link.settle();
        assert!(matches!(outcomes.one(), Err(CallError::Local(LocalError::Cancelled { .. }))), "{row:?}");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: the retry was cancelled on the server");
    }
    for row in ROWS.into_iter().filter(|r| !r.has(Feature::Mrtr)) {
        let mut link = Link::new(row);
        let result = link.call_tool("whereami", json!({})).unwrap();
        assert_eq!(text_of(&result), "no input requests in this revision", "{row:?}");
        assert_eq!(link.sent_requests("tools/call").len(), 1, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 11. Structured output validation on the client
// ---------------------------------------------------------------------------------------------

#[test]
fn structured_output_is_checked_against_the_declared_schema() {
    for row in rows_with(Feature::StructuredOutput) {
        // Before tools/list the client knows no schema, and takes the result as it is.
        let mut link = Link::new(row);
        let unchecked = link.call_tool("liar", json!({})).unwrap();
        assert_eq!(unchecked.structured_content, Some(json!({"count": "many"})), "{row:?}");

        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        match link.call_tool("liar", json!({})) {
            Err(CallError::Local(LocalError::MalformedResponse(why))) => {
                assert!(why.contains("liar") && why.contains("\"count\""), "{row:?}: {why}");
                assert!(why.contains("expected an integer"), "{row:?}: {why}");
            }
            other => panic!("{row:?}: {other:?}"),
        }
        // A result that fits passes; so does a tool error.
        let fits = link.call_tool("weather", json!({"city": "Rome"})).unwrap();
        assert_eq!(fits.structured_content, Some(json!({"city": "Rome", "celsius": 21.5})), "{row:?}");
        let error = link.call_tool("weather", json!({})).unwrap();
        assert!(error.is_error(), "{row:?}: bad arguments are a tool error, not a schema violation");
    }
    for row in ROWS.into_iter().filter(|r| !r.has(Feature::StructuredOutput)) {
        // No structured output in this revision: nothing to check, nothing to demand.
        let mut link = Link::new(row);
        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let liar = link.call_tool("liar", json!({})).unwrap_or_else(|e| panic!("{row:?}: {e}"));
        assert_eq!(liar.structured_content, None, "{row:?}");
        let weather = link.call_tool("weather", json!({"city": "Rome"})).unwrap_or_else(|e| panic!("{row:?}: {e}"));
        assert_eq!(weather.structured_content, None, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Odds and ends of the endpoints
// ---------------------------------------------------------------------------------------------

#[test]
fn calls_made_before_the_handshake_wait_for_it() {
    for row in ROWS {
        let now = Instant::now();
        let router = sample_router(0);
        let server_config =
            ServerConfig::new(Implementation::new("typed-server", "2.0")).with_capabilities(router.capabilities());
        let mut link = Link {
            row,
            router: Rc::new(RefCell::new(router)),
            client: client::Endpoint::new(client_config(row), default_handlers(), now),
            server: server::Endpoint::new(server_config, State::default()),
            now,
            client_events: Vec::new(),
            server_events: Vec::new(),
            to_server: Vec::new(),
            to_client: Vec::new(),
        };
        let (_, outcomes) = link.start::<CallTool>(
            &CallToolRequestParams::new("echo").with_arguments(json!({"text": "early"}).as_object().cloned().unwrap()),
            CallOptions::default(),
        );
        assert_eq!(link.client.pending(), 1, "{:?}", link.row);
        link.settle();
        assert_eq!(text_of(&outcomes.one().unwrap()), "early", "{row:?}");
        assert_eq!(link.client.session().version(), Some(row.version), "{row:?}");
    }
}

#[test]
fn closing_the_transport_fails_every_call_in_flight() {
    for row in ROWS {
        let mut link = Link::new(row);
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();
        link.client.handle_closed(link.now);
        link.server.handle_closed(link.now);
        link.settle();
        assert!(matches!(outcomes.one(), Err(CallError::Local(LocalError::Closed { .. }))), "{row:?}");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: a closed server cancels what its handlers hold");
        assert_eq!(link.server.running(), 0, "{row:?}");
        assert!(matches!(link.client_events.last(), Some(Event::Closed { .. })), "{row:?}");
        assert!(matches!(link.server_events.last(), Some(Event::Closed { .. })), "{row:?}");
    }
}

#[test]
fn a_call_that_times_out_completes_once() {
    for row in ROWS {
        let mut link = Link::new(row);
        let options = CallOptions::default().with_timeout(std::time::Duration::from_secs(2));
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), options);
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();
        let deadline = link.client.poll_timeout().expect("a deadline");
        assert_eq!(deadline, link.now + std::time::Duration::from_secs(2), "{row:?}");
        link.now = deadline;
        link.client.handle_timeout(link.now);
        link.settle();
        assert!(matches!(outcomes.one(), Err(CallError::Local(LocalError::TimedOut))), "{row:?}");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: the server is told");
        let router = Rc::clone(&link.router);
        link.server.complete_tool(&router.borrow(), deferred, Ok(CallToolResult::text("late"))).unwrap();
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}");
    }
}

#[test]
fn a_refused_subscription_gets_no_updates() {
    for row in rows_with(Feature::ResourceSubscribe) {
        let router = Router::<State>::builder()
            .resource(Resource::new("file:///secret", "secret"), |_ctx, uri, _| {
                Ok(vec![TextResourceContents::new(uri, "").into()])
            })
            .subscriptions(|_ctx, _uri| Err(ToolError::execution("not for you")), |_ctx, _uri| Ok(()))
            .build();
        let mut link = Link::with(row, Rc::new(RefCell::new(router)), client_config(row), default_handlers());
        let refused = remote(link.call::<Subscribe>(&SubscribeRequestParams::new("file:///secret")), row);
        assert_eq!(refused.message, "not for you", "{row:?}");
        assert_eq!(link.server.subscriptions().count(), 0, "{row:?}: a refused subscription is not tracked");
        assert!(!link.server.resource_updated("file:///secret").unwrap(), "{row:?}");
    }
}

#[test]
fn a_subscription_inside_a_batch_is_tracked() {
    // 2025-03-26 is the one revision with batches: the answer goes out inside an array.
    let router = sample_router(0);
    let config = ServerConfig::new(Implementation::new("typed-server", "2.0")).with_capabilities(router.capabilities());
    let mut server = server::Endpoint::new(config, State::default());
    let now = Instant::now();
    server.handle_bytes(
        now,
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
[{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///readme.md"}},{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///nope"}}]
"#,
    );
    let mut frames = Vec::new();
    while let Some(out) = server.poll_output(&router) {
        if let Output::Transmit { payload, .. } = out {
            frames.push(serde_json::from_slice::<Value>(&payload).unwrap());
        }
    }
    let batch = frames.last().unwrap().as_array().expect("a batch reply");
    assert_eq!(batch.len(), 2);
    assert_eq!(server.subscriptions().collect::<Vec<_>>(), ["file:///readme.md"]);
    assert_eq!(server.state().subscribed, ["file:///readme.md"]);
    assert!(server.resource_updated("file:///readme.md").unwrap());
}

// ---------------------------------------------------------------------------------------------
// Logging
// ---------------------------------------------------------------------------------------------

fn logs(events: &[Event]) -> Vec<(LoggingLevel, Option<String>, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Log(log) => Some((log.level, log.logger.clone(), log.data.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn handler_logs_follow_the_level_the_client_chose() {
    for row in legacy_rows() {
        let mut link = Link::new(row);
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: true, error sent: true", "{row:?}");
        let seen = logs(&link.client_events);
        assert_eq!(seen.len(), 2, "{row:?}");
        assert_eq!(seen[0], (LoggingLevel::Info, Some("noisy".into()), json!("an info line")), "{row:?}");

        link.call::<SetLevel>(&SetLevelRequestParams::new(LoggingLevel::Warning)).unwrap();
        assert!(
            link.server_events.iter().any(|e| matches!(e, Event::LogLevelChanged(LoggingLevel::Warning))),
            "{row:?}"
        );
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: false, error sent: true", "{row:?}");
        assert_eq!(logs(&link.client_events).len(), 3, "{row:?}");
    }
    for row in stateless_rows() {
        // No level in the request's `_meta`: no logs.
        let mut link = Link::new(row);
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: false, error sent: false", "{row:?}");
        assert!(logs(&link.client_events).is_empty(), "{row:?}");
        let refused = link.client.call::<SetLevel>(
            link.now,
            &SetLevelRequestParams::new(LoggingLevel::Debug),
            CallOptions::default(),
            |_| {},
        );
        assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");

        // The level the client asks for on every request.
        let mut config = client_config(row);
        config.log_level = Some(LoggingLevel::Warning);
        let mut link = Link::with(row, Rc::new(RefCell::new(sample_router(0))), config, default_handlers());
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: false, error sent: true", "{row:?}");
        assert_eq!(logs(&link.client_events), [(LoggingLevel::Error, Some("noisy".into()), json!({"oops": 1}))]);
    }
}

// ---------------------------------------------------------------------------------------------
// Known bugs outside the endpoints
// ---------------------------------------------------------------------------------------------

#[test]
fn tools_list_carries_only_what_the_revision_has() {
    for row in ROWS.into_iter().filter(|r| !r.has(Feature::StructuredOutput)) {
        let mut link = Link::new(row);
        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let list = link.to_client.iter().rev().find(|m| m["result"].get("tools").is_some()).unwrap();
        for tool in list["result"]["tools"].as_array().unwrap() {
            assert!(tool.get("outputSchema").is_none(), "{row:?}: {tool}");
        }
    }
}
