//! The harness of the typed end-to-end tests (`tests/tests/typed_*.rs`).
//!
//! A [`talaria_core::client::Endpoint`] talks to a [`talaria_core::server::Endpoint`] serving a
//! sample [`Router`] (see [`sample_router`]), in memory, on one thread, without I/O: a [`Link`]
//! moves every transmitted frame (as a newline-terminated line) to the other side until both are
//! quiet. Every scenario runs under each revision its feature exists in (the [`ROWS`] table);
//! time stands still unless a test moves [`Link::now`].
//!
//! The harness is test support: where a broken expectation fails the test (a link that never
//! goes quiet, a call that completes twice, an answer of the wrong kind), it panics, and those
//! functions say so.
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use talaria_tests::typed::{text_of, Link, ROWS};
//!
//! for row in ROWS {
//!     let mut link = Link::new(row);
//!     let echo = link.call_tool("echo", json!({"text": "hi", "times": 2})).unwrap();
//!     assert_eq!(text_of(&echo), "hihi", "{row:?}");
//! }
//! ```

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use talaria_core::client::{self, CallOptions, Handlers};
use talaria_core::jsonrpc::{ErrorObject, RequestId};
use talaria_core::schema::completion::Completion;
use talaria_core::schema::mrtr::{InputRequest, InputResponse, ListRootsRequest};
use talaria_core::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use talaria_core::schema::resources::{Resource, ResourceTemplate};
use talaria_core::schema::roots::Root;
use talaria_core::schema::tools::{CallTool, CallToolRequestParams, CallToolResult, Tool};
use talaria_core::schema::{Implementation, JsonObject, LoggingLevel, RequestMethod, TextResourceContents};
use talaria_core::server::{self, Deferred, Router, ToolError};
use talaria_core::session::{CallError, ClientConfig, ClientMode, Event, Output, ServerConfig};
use talaria_core::version::{Feature, ProtocolVersion};

// ---------------------------------------------------------------------------------------------
// The revision table
// ---------------------------------------------------------------------------------------------

/// One way to open a session: the revision it must end up on and the client mode that gets there.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The revision the session must settle on.
    pub version: ProtocolVersion,
    /// The client mode that gets there.
    pub mode: ClientMode,
}

impl Row {
    /// Whether the row's revision is a stateless one (2026-07-28 and later).
    #[must_use]
    pub fn stateless(self) -> bool {
        self.version.supports(Feature::Stateless)
    }

    /// Whether the row's revision has `feature`.
    #[must_use]
    pub fn has(self, feature: Feature) -> bool {
        self.version.supports(feature)
    }
}

/// Every revision: the legacy ones with the client pinned to it, 2026-07-28 both pinned
/// (Stateless) and probed for (Auto).
pub const ROWS: [Row; 6] = [
    Row { version: ProtocolVersion::V2024_11_05, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2025_03_26, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2025_06_18, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2025_11_25, mode: ClientMode::Legacy },
    Row { version: ProtocolVersion::V2026_07_28, mode: ClientMode::Stateless },
    Row { version: ProtocolVersion::V2026_07_28, mode: ClientMode::Auto },
];

/// The rows whose revision has `feature`.
pub fn rows_with(feature: Feature) -> impl Iterator<Item = Row> {
    ROWS.into_iter().filter(move |r| r.has(feature))
}

/// The rows of the legacy (`initialize`) era.
pub fn legacy_rows() -> impl Iterator<Item = Row> {
    ROWS.into_iter().filter(|r| !r.stateless())
}

/// The rows of the stateless era.
pub fn stateless_rows() -> impl Iterator<Item = Row> {
    ROWS.into_iter().filter(|r| r.stateless())
}

// ---------------------------------------------------------------------------------------------
// The sample server
// ---------------------------------------------------------------------------------------------

/// Per-session state: deferred calls waiting for the test, and what the client subscribed to.
#[derive(Debug, Default)]
pub struct State {
    /// The calls the `later` tool (and `whereami` with `defer_after_input`) deferred, oldest
    /// first.
    pub deferred: Vec<Deferred>,
    /// The URIs the subscribe handler accepted and the unsubscribe handler has not removed.
    pub subscribed: Vec<String>,
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

/// A JSON Schema object from a `json!` object literal.
#[allow(clippy::expect_used, reason = "test support: the schemas are object literals")]
fn schema(v: Value) -> JsonObject {
    serde_json::from_value(v).expect("a schema is a JSON object")
}

/// The schema `{"type": "object"}`: any arguments.
#[must_use]
pub fn empty_schema() -> JsonObject {
    schema(json!({"type": "object"}))
}

/// The tools [`sample_router`] registers, in registration order.
pub const TOOLS: [&str; 10] =
    ["echo", "weather", "explode", "later", "slow", "whereami", "confirm", "needy", "liar", "noisy"];

fn roots_request() -> InputRequest {
    InputRequest::from(ListRootsRequest::default())
}

/// The sample server, listing `page_size` items a page (0: one page).
///
/// Tools (see [`TOOLS`]): `echo` (repeats `text` `times` times), `weather` (structured output),
/// `explode` (a tool error), `later` (defers into [`State::deferred`]), `slow` (two progress
/// reports when asked), `whereami` (asks for the client's roots through input requests, and
/// defers after them given `defer_after_input`), `confirm` (asks for an elicitation the client
/// cannot answer), `needy` (asks for input every round), `liar` (structured output that breaks
/// its schema), `noisy` (logs at info and error). Also the prompt `greet` (`name` required, `tone`
/// optional), the resource `file:///readme.md`, the template `notes://{folder}/{id}`, completion
/// of names, subscriptions kept in [`State::subscribed`], logging, and list-change announcements.
///
/// # Panics
///
/// A handler panics (failing the test) when the endpoint breaks its contract: a call that cannot
/// be deferred, or a retry that does not carry the request state back.
#[must_use]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a handler whose endpoint breaks its contract fails the test"
)]
pub fn sample_router(page_size: usize) -> Router<State> {
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
pub struct Outcomes<T>(Arc<Mutex<Vec<Result<T, CallError>>>>);

impl<T> Clone for Outcomes<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> Default for Outcomes<T> {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Vec::new())))
    }
}

impl<T: Send + 'static> Outcomes<T> {
    /// No outcomes yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A callback that records its outcome here.
    pub fn sink(&self) -> impl FnOnce(Result<T, CallError>) + Send + 'static {
        let shared = Arc::clone(&self.0);
        move |outcome| shared.lock().unwrap_or_else(PoisonError::into_inner).push(outcome)
    }

    /// How many outcomes were recorded and not yet taken.
    #[must_use]
    pub fn count(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// The one outcome; fails unless the callback ran exactly once.
    ///
    /// # Panics
    ///
    /// When the callback ran never or more than once (the point of the check).
    #[allow(clippy::expect_used, reason = "test support: a callback that did not run exactly once fails the test")]
    pub fn one(&self) -> Result<T, CallError> {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(all.len(), 1, "the callback must run exactly once");
        all.pop().expect("one outcome")
    }
}

/// A client endpoint and a server endpoint joined back to back.
pub struct Link {
    /// The revision and client mode the link was opened with.
    pub row: Row,
    /// The router the server endpoint serves (shared, so that tests can change it).
    pub router: Rc<RefCell<Router<State>>>,
    /// The client side.
    pub client: client::Endpoint,
    /// The server side.
    pub server: server::Endpoint<State>,
    /// The time both sides see; only tests move it.
    pub now: Instant,
    /// Events the client endpoint did not handle itself.
    pub client_events: Vec<Event>,
    /// Events the server endpoint did not handle itself.
    pub server_events: Vec<Event>,
    /// Every frame the client sent, parsed.
    pub to_server: Vec<Value>,
    /// Every frame the server sent, parsed.
    pub to_client: Vec<Value>,
}

/// The client handlers of a plain link: one root, `file:///work` named `work`.
#[must_use]
pub fn default_handlers() -> Handlers {
    let mut handlers = Handlers::default();
    handlers.add_root(Root::new("file:///work").with_name("work"));
    handlers
}

/// The client configuration for `row`: its mode, and (unless probing) exactly its revision.
#[must_use]
pub fn client_config(row: Row) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("typed-client", "1.0")).with_mode(row.mode);
    if row.mode != ClientMode::Auto {
        // Pinned: a legacy client offers exactly this revision in `initialize`.
        config.session.versions = vec![row.version];
    }
    config
}

impl Link {
    /// A settled link for `row` to a server of [`sample_router`] with one page.
    ///
    /// # Panics
    ///
    /// When the session does not settle on the row's revision.
    #[must_use]
    pub fn new(row: Row) -> Self {
        Self::with(row, Rc::new(RefCell::new(sample_router(0))), client_config(row), default_handlers())
    }

    /// A settled link for `row` to a server of `router`, with this client configuration and
    /// these handlers.
    ///
    /// # Panics
    ///
    /// When the session does not settle on the row's revision.
    #[must_use]
    pub fn with(row: Row, router: Rc<RefCell<Router<State>>>, config: ClientConfig, handlers: Handlers) -> Self {
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
    ///
    /// # Panics
    ///
    /// When a side sends a frame that is not JSON, or the sides are still talking after 100
    /// rounds.
    #[allow(
        clippy::unwrap_used,
        clippy::panic,
        reason = "test support: invalid JSON on the wire or a link that never goes quiet fails the test"
    )]
    pub fn settle(&mut self) {
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
    ///
    /// # Panics
    ///
    /// When the client refuses to send the call.
    #[allow(clippy::expect_used, reason = "test support: a call the client refuses fails the test")]
    pub fn start<M: RequestMethod>(
        &mut self,
        params: &M::Params,
        options: CallOptions,
    ) -> (RequestId, Outcomes<M::Result>)
    where
        M::Result: Send + 'static,
    {
        let outcomes = Outcomes::new();
        let id = self.client.call::<M>(self.now, params, options, outcomes.sink()).expect("the call is sent");
        (id, outcomes)
    }

    /// Typed call `M`, run to its end.
    ///
    /// # Errors
    ///
    /// The call's failure, local or remote.
    ///
    /// # Panics
    ///
    /// When the call is refused, or does not complete exactly once.
    pub fn call<M: RequestMethod>(&mut self, params: &M::Params) -> Result<M::Result, CallError>
    where
        M::Result: Send + 'static,
    {
        let (_, outcomes) = self.start::<M>(params, CallOptions::default());
        self.settle();
        outcomes.one()
    }

    /// `tools/call` of tool `name` with `args` (an object, or anything else for no arguments),
    /// run to its end.
    ///
    /// # Errors
    ///
    /// The call's failure, local or remote (a tool error is a result).
    ///
    /// # Panics
    ///
    /// When the call is refused, or does not complete exactly once.
    pub fn call_tool(&mut self, name: &str, args: Value) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(name);
        if let Value::Object(args) = args {
            params = params.with_arguments(args);
        }
        self.call::<CallTool>(&params)
    }

    /// The notifications the client endpoint passed on with `method`, as their params.
    #[must_use]
    pub fn client_notifications(&self, method: &str) -> Vec<Value> {
        notifications(&self.client_events, method)
    }

    /// The notifications the server endpoint passed on with `method`, as their params.
    #[must_use]
    pub fn server_notifications(&self, method: &str) -> Vec<Value> {
        notifications(&self.server_events, method)
    }

    /// The requests the client sent with `method`.
    #[must_use]
    pub fn sent_requests(&self, method: &str) -> Vec<&Value> {
        self.to_server.iter().filter(|m| m["method"] == method && m.get("id").is_some()).collect()
    }
}

/// The params (`null` when absent) of the notifications among `events` with method `wanted`.
#[allow(clippy::unwrap_used, reason = "test support: params an endpoint passed on are JSON")]
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

/// The text of the result's first content block.
///
/// # Panics
///
/// When the first block is missing or not text.
#[must_use]
#[allow(clippy::expect_used, reason = "test support: a result without text fails the test")]
pub fn text_of(result: &CallToolResult) -> &str {
    result.content.first().and_then(|c| c.as_text()).expect("a text block")
}

/// The peer's JSON-RPC error, or a failure naming what came instead.
///
/// # Panics
///
/// When the outcome is not a JSON-RPC error from the peer.
#[allow(clippy::panic, reason = "test support: an outcome other than a JSON-RPC error fails the test")]
pub fn remote<T: std::fmt::Debug>(outcome: Result<T, CallError>, row: Row) -> ErrorObject {
    match outcome {
        Err(CallError::Remote(e)) => e,
        other => panic!("{row:?}: expected a JSON-RPC error, got {other:?}"),
    }
}
