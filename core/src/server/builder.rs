//! Building a [`Router`].

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::context::Context;
use super::error::{PromptError, ResourceError, ToolError};
use super::prompts::PromptEntry;
use super::resources::{ResourceEntry, TemplateEntry};
use super::router::{CompleteFn, Router, SubscribeFn};
use super::task_board::{MemoryTaskStore, TaskBoard, TaskStore};
use super::tools::{register, structured, typed, upsert, ToolEntry};
use super::uri_template::{TemplateError, UriTemplate};
use crate::schema::completion::{CompleteRequestParams, Completion};
use crate::schema::lifecycle::{check_extension_id, ExtensionIdError};
use crate::schema::prompts::{GetPromptResult, Prompt};
use crate::schema::resources::{Resource, ResourceTemplate};
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::{CacheScope, JsonObject, ResourceContents};

/// Builds a [`Router`].
///
/// # Examples
///
/// ```
/// use talaria_core::schema::tools::{CallToolResult, Tool};
/// use talaria_core::server::Router;
///
/// let router = Router::<()>::builder()
///     .page_size(50)
///     .tool(Tool::new("ping_me", Default::default()), |_ctx, _args: serde_json::Value| Ok(CallToolResult::text("pong")))
///     .build();
/// assert_eq!(router.tools().count(), 1);
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct RouterBuilder<S> {
    tools: Vec<ToolEntry<S>>,
    prompts: Vec<PromptEntry<S>>,
    resources: Vec<ResourceEntry<S>>,
    templates: Vec<TemplateEntry<S>>,
    completion: Option<CompleteFn<S>>,
    subscriptions: Option<(SubscribeFn<S>, SubscribeFn<S>)>,
    logging: bool,
    list_changes: bool,
    cache: Option<(u64, CacheScope)>,
    page_size: usize,
    extensions: BTreeMap<String, serde_json::Value>,
    task_store: Option<Arc<dyn TaskStore>>,
}

impl<S> RouterBuilder<S> {
    /// Keeps the state of the tasks of the 2026-07-28 tasks extension in `store` instead of
    /// this process's memory ([`MemoryTaskStore`](super::MemoryTaskStore)): a store shared by
    /// several server processes lets any of them answer `tasks/get`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use talaria_core::server::{MemoryTaskStore, Router};
    ///
    /// let router = Router::<()>::builder().task_store(Arc::new(MemoryTaskStore::with_capacity(100))).build();
    /// # let _ = router;
    /// ```
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Declares the extension `id` (2026-07-28) with `settings` (an empty object for none)
    /// in the server's capabilities. Handlers see whether the client declared it too with
    /// [`Context::client_extension`](super::Context::client_extension): an extension is in
    /// use when both sides declare it.
    ///
    /// # Errors
    ///
    /// [`ExtensionIdError`] if `id` breaks the naming rule
    /// ([`check_extension_id`](crate::schema::lifecycle::check_extension_id)).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::server::Router;
    ///
    /// let router = Router::<()>::builder().extension("com.example/trace", Default::default()).unwrap().build();
    /// assert!(router.capabilities().extension("com.example/trace").is_some());
    /// assert!(Router::<()>::builder().extension("trace", Default::default()).is_err());
    /// ```
    pub fn extension(mut self, id: &str, settings: JsonObject) -> Result<Self, ExtensionIdError> {
        check_extension_id(id)?;
        self.extensions.insert(id.to_owned(), settings.into());
        Ok(self)
    }

    /// Lists at most `n` items per page (0, the default: everything on one page).
    pub const fn page_size(mut self, n: usize) -> Self {
        self.page_size = n;
        self
    }

    /// Registers a tool whose handler takes typed arguments `A` (any `Deserialize` type; use
    /// `serde_json::Value` for raw arguments). Arguments that do not fit `A` become a tool
    /// error result naming the tool and what was wrong. A later tool with the same name
    /// replaces the earlier one.
    pub fn tool<A, F>(mut self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned,
        F: Fn(&mut Context<'_, S>, A) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
    {
        register(&mut self.tools, tool, |name| typed(name, handler));
        self
    }

    /// Registers a tool with a typed output `O`: the output becomes `structuredContent` (and,
    /// for earlier clients, a text block with the same JSON). Give the tool an
    /// `output_schema` describing `O`.
    pub fn structured_tool<A, O, F>(mut self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned,
        O: Serialize,
        F: Fn(&mut Context<'_, S>, A) -> Result<O, ToolError> + Send + Sync + 'static,
    {
        register(&mut self.tools, tool, |name| structured(name, handler));
        self
    }

    /// Registers a tool named `name` whose `inputSchema` is derived from the handler's
    /// arguments type `A` with [`Tool::for_args`] (feature `schemars`); otherwise as
    /// [`tool`](Self::tool). The router checks arguments against the schema before the handler
    /// runs, so arguments of the wrong type come back as a tool error naming the field. For a
    /// title, annotations or icons, build the tool with [`Tool::for_args`] and pass it to
    /// [`tool`](Self::tool).
    ///
    /// # Examples
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use talaria_core::schema::tools::CallToolResult;
    /// use talaria_core::server::Router;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Add {
    ///     a: i64,
    ///     b: i64,
    /// }
    ///
    /// let router = Router::<()>::builder()
    ///     .typed_tool("add", "Adds two integers", |_ctx, args: Add| {
    ///         Ok(CallToolResult::text((args.a + args.b).to_string()))
    ///     })
    ///     .build();
    /// let tool = router.tools().next().unwrap();
    /// assert_eq!(tool.description.as_deref(), Some("Adds two integers"));
    /// assert_eq!(tool.input_schema["required"], serde_json::json!(["a", "b"]));
    /// ```
    #[cfg(feature = "schemars")]
    pub fn typed_tool<A, F>(self, name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema,
        F: Fn(&mut Context<'_, S>, A) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
    {
        self.tool(Tool::for_args::<A>(name).with_description(description), handler)
    }

    /// Registers a tool named `name` with typed arguments `A` and a typed output `O`, its
    /// `inputSchema` derived from `A` with [`Tool::for_args`] and its `outputSchema` from `O`
    /// with [`Tool::with_output_of`] (feature `schemars`); otherwise as
    /// [`structured_tool`](Self::structured_tool). `O` should serialize to a JSON object.
    ///
    /// # Examples
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    /// use talaria_core::server::Router;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Add {
    ///     a: i64,
    ///     b: i64,
    /// }
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// struct Sum {
    ///     sum: i64,
    /// }
    ///
    /// let router = Router::<()>::builder()
    ///     .typed_structured_tool("add", "Adds two integers", |_ctx, args: Add| Ok(Sum { sum: args.a + args.b }))
    ///     .build();
    /// let tool = router.tools().next().unwrap();
    /// let output_schema = tool.output_schema.as_ref().unwrap();
    /// assert_eq!(output_schema["properties"]["sum"]["type"], "integer");
    /// ```
    #[cfg(feature = "schemars")]
    pub fn typed_structured_tool<A, O, F>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema,
        O: Serialize + schemars::JsonSchema,
        F: Fn(&mut Context<'_, S>, A) -> Result<O, ToolError> + Send + Sync + 'static,
    {
        let tool = Tool::for_args::<A>(name).with_description(description).with_output_of::<O>();
        self.structured_tool(tool, handler)
    }

    /// Registers a prompt: its declared required arguments are checked before `handler` runs
    /// (a missing one is answered with -32602 naming it); the handler builds the messages. A
    /// later prompt with the same name replaces the earlier one.
    pub fn prompt<F>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(&mut Context<'_, S>, BTreeMap<String, String>) -> Result<GetPromptResult, PromptError>
            + Send
            + Sync
            + 'static,
    {
        upsert(&mut self.prompts, PromptEntry { prompt, get: Box::new(handler) }, |a, b| {
            a.prompt.name == b.prompt.name
        });
        self
    }

    /// Registers a prompt whose arguments `handler` takes as `A`, any `Deserialize` type:
    /// declared required arguments are checked first (as [`RouterBuilder::prompt`] does), then
    /// the arguments are read into `A`, and a mismatch is answered with -32602 naming it. MCP
    /// prompt arguments are strings: `A`'s fields are `String`, or `Option<String>` for
    /// optional ones.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde::Deserialize;
    /// use talaria_core::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
    /// use talaria_core::schema::{ContentBlock, Role};
    /// use talaria_core::server::Router;
    ///
    /// #[derive(Deserialize)]
    /// struct Review {
    ///     code: String,
    ///     focus: Option<String>,
    /// }
    ///
    /// let prompt = Prompt::new("review")
    ///     .with_argument(PromptArgument::required("code"))
    ///     .with_argument(PromptArgument::optional("focus"));
    /// let router = Router::<()>::builder()
    ///     .typed_prompt(prompt, |_ctx, args: Review| {
    ///         let focus = args.focus.unwrap_or_else(|| "anything".into());
    ///         let text = format!("Review this, looking at {focus}:\n{}", args.code);
    ///         Ok(GetPromptResult::new(vec![PromptMessage::new(Role::User, ContentBlock::text(text))]))
    ///     })
    ///     .build();
    /// assert_eq!(router.prompts().count(), 1);
    /// ```
    pub fn typed_prompt<A, F>(self, prompt: Prompt, handler: F) -> Self
    where
        A: DeserializeOwned,
        F: Fn(&mut Context<'_, S>, A) -> Result<GetPromptResult, PromptError> + Send + Sync + 'static,
    {
        let name = prompt.name.clone();
        self.prompt(prompt, move |ctx, arguments| {
            let object = arguments.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect();
            let args = serde_json::from_value::<A>(serde_json::Value::Object(object)).map_err(|e| {
                PromptError::Protocol(crate::jsonrpc::ErrorObject::invalid_params(format!(
                    "Invalid arguments for prompt {name}: {e}"
                )))
            })?;
            handler(ctx, args)
        })
    }

    /// Registers a resource at a fixed URI; `handler` reads it (the variables it gets are
    /// empty). A later resource with the same URI replaces the earlier one.
    pub fn resource<F>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(&mut Context<'_, S>, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, ResourceError>
            + Send
            + Sync
            + 'static,
    {
        let entry = ResourceEntry { resource, read: Box::new(handler) };
        upsert(&mut self.resources, entry, |a, b| a.resource.uri == b.resource.uri);
        self
    }

    /// Registers a family of resources behind an RFC 6570 level-1 URI template such as
    /// `file:///{path}`; `handler` gets the URI read and the template's variables taken from it.
    /// Fixed resources are matched first, then templates in registration order.
    ///
    /// # Errors
    ///
    /// [`TemplateError`] when `template.uri_template` is not a level-1 template.
    pub fn resource_template<F>(mut self, template: ResourceTemplate, handler: F) -> Result<Self, TemplateError>
    where
        F: Fn(&mut Context<'_, S>, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, ResourceError>
            + Send
            + Sync
            + 'static,
    {
        let pattern = UriTemplate::parse(&template.uri_template)?;
        self.templates.push(TemplateEntry { template, pattern, read: Box::new(handler) });
        Ok(self)
    }

    /// Answers `completion/complete` for prompt arguments and resource-template variables. The
    /// router first checks that the reference names a registered prompt or template (-32602
    /// otherwise); at most 100 values go out, with `total` and `hasMore` set to match.
    pub fn completion<F>(mut self, handler: F) -> Self
    where
        F: Fn(&mut Context<'_, S>, &CompleteRequestParams) -> Result<Completion, ToolError> + Send + Sync + 'static,
    {
        self.completion = Some(Box::new(handler));
        self
    }

    /// Accepts `resources/subscribe` and `resources/unsubscribe` (legacy era) for resources
    /// the router offers, calling these handlers, which keep the subscriptions in the
    /// per-session state; announce changes with [`Router::resource_updated`]. Advertises
    /// `resources.subscribe`.
    pub fn subscriptions<F, G>(mut self, subscribe: F, unsubscribe: G) -> Self
    where
        F: Fn(&mut Context<'_, S>, &str) -> Result<(), ResourceError> + Send + Sync + 'static,
        G: Fn(&mut Context<'_, S>, &str) -> Result<(), ResourceError> + Send + Sync + 'static,
    {
        self.subscriptions = Some((Box::new(subscribe), Box::new(unsubscribe)));
        self
    }

    /// Advertises `listChanged` for tools, prompts and resources: the router's contents may
    /// change while sessions are open (see [`Router::add_tool`] and friends).
    pub const fn notify_list_changes(mut self) -> Self {
        self.list_changes = true;
        self
    }

    /// Advertises the `logging` capability (handlers log through [`Context::log`]).
    pub const fn logging(mut self) -> Self {
        self.logging = true;
        self
    }

    /// The cache hints put on list and read results in the stateless era (2026-07-28): fresh
    /// for `ttl_ms` milliseconds, cacheable by `scope`. Without them: `0` and private.
    pub const fn cache_hints(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.cache = Some((ttl_ms, scope));
        self
    }

    /// The router.
    pub fn build(self) -> Router<S> {
        let tools_by_name = self.tools.iter().enumerate().map(|(i, t)| (t.tool.name.clone(), i)).collect();
        let prompts_by_name = self.prompts.iter().enumerate().map(|(i, p)| (p.prompt.name.clone(), i)).collect();
        Router {
            tools: self.tools,
            tools_by_name,
            prompts: self.prompts,
            prompts_by_name,
            resources: self.resources,
            templates: self.templates,
            completion: self.completion,
            subscriptions: self.subscriptions,
            logging: self.logging,
            list_changes: self.list_changes,
            cache: self.cache,
            page_size: self.page_size,
            extensions: self.extensions,
            task_board: Arc::new(TaskBoard::new(
                self.task_store.unwrap_or_else(|| Arc::new(MemoryTaskStore::default())),
            )),
        }
    }
}

impl<S> Router<S> {
    /// An empty builder.
    pub const fn builder() -> RouterBuilder<S> {
        RouterBuilder {
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            completion: None,
            subscriptions: None,
            logging: false,
            list_changes: false,
            cache: None,
            page_size: 0,
            extensions: BTreeMap::new(),
            task_store: None,
        }
    }
}

#[cfg(all(test, feature = "schemars"))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};

    use crate::schema::tools::CallToolResult;
    use crate::schema::validate::validate;
    use crate::schema::Implementation;
    use crate::server::{Router, ToolError};
    use crate::session::{
        Client, ClientConfig, ClientMode, Event, Output, RequestOptions, Route, Server, ServerConfig, Session,
    };
    use crate::version::ProtocolVersion;

    #[derive(Deserialize, JsonSchema)]
    struct Point {
        x: f64,
        y: f64,
    }

    /// Arguments of `place`.
    #[derive(Deserialize, JsonSchema)]
    struct Place {
        /// The label to put there.
        label: String,
        at: Point,
        #[serde(default)]
        copies: Option<u8>,
    }

    #[derive(Serialize, JsonSchema)]
    struct Placed {
        label: String,
        distance: f64,
        copies: Vec<u8>,
        note: Option<String>,
    }

    fn router() -> Router<()> {
        Router::<()>::builder()
            .typed_tool("place", "Places a label", |_ctx, args: Place| {
                Ok(CallToolResult::text(format!("{} at {},{}", args.label, args.at.x, args.at.y)))
            })
            .typed_structured_tool("measure", "Measures a label's distance", |_ctx, args: Place| {
                if args.label.is_empty() {
                    return Err(ToolError::execution("no label"));
                }
                Ok(Placed {
                    distance: args.at.x.hypot(args.at.y),
                    copies: (1..=args.copies.unwrap_or(1)).collect(),
                    note: (args.at.x < 0.0).then(|| "left of the origin".to_owned()),
                    label: args.label,
                })
            })
            .build()
    }

    /// A client and a server session around `router`, talking in memory.
    struct Pair {
        client: Session<Client>,
        server: Session<Server>,
        router: Router<()>,
        now: crate::time::Instant,
        events: Vec<Event>,
    }

    impl Pair {
        fn new(version: ProtocolVersion) -> Self {
            let now = crate::test_clock::t0();
            let router = router();
            let config = ServerConfig::new(Implementation::new("s", "1")).with_capabilities(router.capabilities());
            let mode = if version == ProtocolVersion::V2026_07_28 { ClientMode::Stateless } else { ClientMode::Legacy };
            let mut client_config = ClientConfig::new(Implementation::new("c", "1")).with_mode(mode);
            client_config.session.versions = vec![version];
            let mut pair = Self {
                client: Session::<Client>::new(client_config, now),
                server: Session::<Server>::new(config),
                router,
                now,
                events: Vec::new(),
            };
            pair.settle();
            assert_eq!(pair.client.version(), Some(version));
            pair
        }

        fn settle(&mut self) {
            let mut moved = true;
            while moved {
                moved = false;
                while let Some(out) = self.client.poll_output() {
                    match out {
                        Output::Transmit { payload, .. } => {
                            self.server.handle_frame(self.now, Route::Connection, &payload);
                            moved = true;
                        }
                        Output::Event(e) => self.events.push(e),
                        Output::StreamDone(_) | Output::StreamDisconnect(_) => {}
                    }
                }
                while let Some(out) = self.server.poll_output() {
                    match out {
                        Output::Transmit { payload, .. } => {
                            self.client.handle_frame(self.now, Route::Connection, &payload);
                            moved = true;
                        }
                        Output::Event(Event::Request(req)) => {
                            self.router.dispatch(&mut self.server, &mut (), req).unwrap();
                            moved = true;
                        }
                        _ => {}
                    }
                }
            }
        }

        /// Sends a request and returns its result (a JSON-RPC error fails the test).
        fn call(&mut self, method: &str, params: &Value) -> Value {
            let raw = serde_json::value::to_raw_value(params).unwrap();
            let id = self.client.send_request(self.now, method, Some(raw), RequestOptions::default()).unwrap();
            self.settle();
            let i = self.events.iter().position(|e| matches!(e, Event::Response { id: got, .. } if *got == id));
            let Event::Response { outcome, .. } = self.events.remove(i.expect("the request ended")) else {
                unreachable!()
            };
            serde_json::from_str(outcome.expect("a result").get()).unwrap()
        }

        fn call_tool(&mut self, name: &str, arguments: &Value) -> Value {
            self.call("tools/call", &json!({"name": name, "arguments": arguments}))
        }
    }

    #[test]
    fn listed_tools_carry_the_derived_schemas() {
        for version in ProtocolVersion::ALL {
            let mut pair = Pair::new(version);
            let list = pair.call("tools/list", &json!({}));
            let place = &list["tools"][0];
            assert_eq!(place["name"], "place", "{version}");
            assert_eq!(place["description"], "Places a label");
            let input = &place["inputSchema"];
            assert_eq!(input["type"], "object");
            assert_eq!(input["description"], "Arguments of `place`.");
            assert_eq!(input["required"], json!(["label", "at"]));
            assert_eq!(
                input["properties"]["label"],
                json!({"type": "string", "description": "The label to put there."})
            );
            assert_eq!(input["properties"]["at"], json!({"$ref": "#/$defs/Point"}));
            assert_eq!(input["$defs"]["Point"]["properties"]["x"]["type"], "number");
            assert!(input.get("$schema").is_none());
            assert!(place.get("outputSchema").is_none());

            let measure = &list["tools"][1];
            assert_eq!(measure["inputSchema"], *input);
            if version.supports(crate::version::Feature::StructuredOutput) {
                assert_eq!(measure["outputSchema"]["type"], "object");
                assert_eq!(measure["outputSchema"]["required"], json!(["label", "distance", "copies", "note"]));
            } else {
                assert!(measure.get("outputSchema").is_none(), "{version}: no output schemas before 2025-06-18");
            }
        }
    }

    #[test]
    fn arguments_of_the_wrong_type_are_rejected_naming_the_field() {
        let mut pair = Pair::new(ProtocolVersion::V2025_11_25);
        let ok = pair.call_tool("place", &json!({"label": "A", "at": {"x": 1, "y": 2.5}}));
        assert_eq!(ok, json!({"content": [{"type": "text", "text": "A at 1,2.5"}]}));

        let r = pair.call_tool("place", &json!({"label": 7, "at": {"x": "1", "y": 2}}));
        assert_eq!(r["isError"], true);
        assert_eq!(
            r["content"][0]["text"],
            r#"Invalid arguments for tool place: "at/x": expected a number, got a string; "label": expected a string, got a number"#
        );

        let r = pair.call_tool("place", &json!({"label": "A", "at": {"x": 1}, "copies": 300}));
        assert_eq!(r["isError"], true);
        assert_eq!(
            r["content"][0]["text"],
            r#"Invalid arguments for tool place: "at": missing required property "y"; "copies": must be at most 255"#
        );

        let r = pair.call_tool("measure", &json!({"label": "A"}));
        assert_eq!(r["content"][0]["text"], r#"Invalid arguments for tool measure: missing required property "at""#);
    }

    #[test]
    fn the_derived_output_schema_accepts_the_handlers_output() {
        let mut pair = Pair::new(ProtocolVersion::V2025_11_25);
        let list = pair.call("tools/list", &json!({}));
        let schema = list["tools"][1]["outputSchema"].as_object().unwrap().clone();
        let calls = [
            json!({"label": "A", "at": {"x": 3, "y": 4}}),
            json!({"label": "B", "at": {"x": -1, "y": 0}, "copies": 3}),
            json!({"label": "C", "at": {"x": 0, "y": 0}, "copies": null}),
        ];
        for arguments in calls {
            let r = pair.call_tool("measure", &arguments);
            assert!(r.get("isError").is_none(), "{r}");
            let out = &r["structuredContent"];
            assert!(out.is_object(), "{r}");
            assert_eq!(validate(&schema, out), [], "{out}");
        }
        let r = pair.call_tool("measure", &json!({"label": "A", "at": {"x": 3, "y": 4}}));
        assert_eq!(r["structuredContent"], json!({"label": "A", "distance": 5.0, "copies": [1], "note": null}));
        let r = pair.call_tool("measure", &json!({"label": "", "at": {"x": 3, "y": 4}}));
        assert_eq!(r, json!({"content": [{"type": "text", "text": "no label"}], "isError": true}));
    }
}
