//! Building a [`Router`].

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::context::Context;
use super::prompts::PromptEntry;
use super::resources::{ResourceEntry, TemplateEntry};
use super::router::{CompleteFn, Router, SubscribeFn};
use super::tools::{register, structured, typed, upsert, ToolEntry, ToolError};
use super::uri_template::{TemplateError, UriTemplate};
use crate::schema::completion::{CompleteRequestParams, Completion};
use crate::schema::prompts::{GetPromptResult, Prompt};
use crate::schema::resources::{Resource, ResourceTemplate};
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::{CacheScope, ResourceContents};

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
}

impl<S> RouterBuilder<S> {
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

    /// Registers a prompt: its declared required arguments are checked before `handler` runs
    /// (a missing one is answered with -32602 naming it); the handler builds the messages. A
    /// later prompt with the same name replaces the earlier one.
    pub fn prompt<F>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(&mut Context<'_, S>, BTreeMap<String, String>) -> Result<GetPromptResult, ToolError>
            + Send
            + Sync
            + 'static,
    {
        upsert(&mut self.prompts, PromptEntry { prompt, get: Box::new(handler) }, |a, b| {
            a.prompt.name == b.prompt.name
        });
        self
    }

    /// Registers a resource at a fixed URI; `handler` reads it (the variables it gets are
    /// empty). A later resource with the same URI replaces the earlier one.
    pub fn resource<F>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(&mut Context<'_, S>, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, ToolError>
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
        F: Fn(&mut Context<'_, S>, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, ToolError>
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
        F: Fn(&mut Context<'_, S>, &str) -> Result<(), ToolError> + Send + Sync + 'static,
        G: Fn(&mut Context<'_, S>, &str) -> Result<(), ToolError> + Send + Sync + 'static,
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
        }
    }
}
