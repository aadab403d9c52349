//! Handlers that run off the I/O loop: the [`RouterBuilder`] registrations of blocking and
//! async tools and of async prompts and resources, and the [`Context`] methods that hand
//! their work to the adapter's [`Spawn`](super::Spawn) (or run it here where there is none).

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use core::future::Future;

use serde::de::DeserializeOwned;

use super::async_job::{block_on, run_inline, AnswerWork, AsyncJob, AsyncWork, ToolFuture};
use super::builder::RouterBuilder;
use super::context::Context;
use super::error::{PromptError, ResourceError, ToolError};
use super::job::{settle, Job};
use super::link::LaterAnswer;
use super::rounds::Rounds;
use super::task::{Task, Work};
use super::uri_template::TemplateError;
use crate::jsonrpc::ErrorObject;
use crate::schema::prompts::{GetPromptResult, Prompt};
use crate::schema::resources::{Resource, ResourceTemplate};
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::ResourceContents;
use crate::version::Feature;

impl<S> Context<'_, S> {
    /// Runs `work` off the I/O loop if the adapter provided a [`Spawn`], answering when it
    /// finishes; otherwise runs it here, now. Returns the outcome when it ran here.
    pub(super) fn spawn_or_run(&mut self, work: Work) -> Option<Result<CallToolResult, ToolError>> {
        let rounds = match self.job_rounds() {
            Ok(rounds) => rounds,
            Err(refused) => return Some(Err(ToolError::Protocol(refused))),
        };
        let spawner = self.extras.spawner.clone();
        let task_run = self.extras.task_run.clone();
        // A task's job asks through the task (input requests), not in rounds.
        let rounds = if task_run.is_some() { None } else { rounds };
        match (spawner, self.defer()) {
            (Some(spawner), Some(deferred)) => {
                spawner.spawn(Task::new(deferred, work, rounds, task_run));
                None
            }
            (_, deferred) => {
                // No spawner: run inline. Put the reply back so the router answers.
                if let Some(deferred) = deferred {
                    self.reply = Some(deferred.reply);
                }
                Some(match work {
                    Work::Blocking(work) => {
                        let job =
                            Job { deferred: None, cancel: self.cancel_flag(), link: None, rounds: rounds.as_ref() };
                        settle(work(&job), rounds.as_ref())
                    }
                    Work::Async(work) => run_inline(work, self.cancel_flag(), rounds),
                    Work::Answer(_) => Err(ToolError::execution("not a tool's work")),
                })
            }
        }
    }

    /// In 2026-07-28, the round a long-running call is in (see [`Job::ask`]).
    fn job_rounds(&mut self) -> Result<Option<Rounds>, ErrorObject> {
        if !self.version().is_some_and(|v| v.supports(Feature::Mrtr)) {
            return Ok(None);
        }
        let responses = self.input_responses.take();
        let capabilities = self.client_capabilities().cloned();
        Rounds::start(self.request_state.as_deref(), responses, capabilities).map(Some)
    }
}

impl<S: 'static> RouterBuilder<S> {
    /// Registers a long-running tool: its handler runs off the I/O loop on the adapter's
    /// pool (inline where there is none) and gets a [`Job`] to check for cancellation, report
    /// progress, log and ask the client. Arguments are typed and validated as for
    /// [`RouterBuilder::tool`].
    pub fn blocking_tool<A, F>(self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(&Job<'_>, A) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
    {
        let handler = Arc::new(handler);
        self.tool(tool, move |ctx: &mut Context<'_, S>, args: A| {
            let handler = Arc::clone(&handler);
            let work = Box::new(move |job: &Job<'_>| handler(job, args));
            ctx.spawn_or_run(Work::Blocking(work)).unwrap_or_else(|| Ok(CallToolResult::default()))
        })
    }
}

impl<S: 'static> RouterBuilder<S> {
    /// Registers an async tool: its handler returns a future, which the adapter polls on an
    /// executor (the server's own; inline where there is none), with an [`AsyncJob`] to check
    /// for cancellation, report progress, log and ask the client. Arguments are typed and
    /// validated as for [`RouterBuilder::tool`]. The future may await anything that needs no
    /// particular runtime (channels, async-io timers and sockets, `smol`); work that needs
    /// tokio's runtime can run on it and be awaited through its `JoinHandle`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::tools::{CallToolResult, Tool};
    /// use talaria_core::server::Router;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Fetch {
    ///     url: String,
    /// }
    ///
    /// let router = Router::<()>::builder()
    ///     .async_tool(Tool::new("fetch", Default::default()), |_job, args: Fetch| async move {
    ///         // ... await an HTTP client here ...
    ///         Ok(CallToolResult::text(format!("fetched {}", args.url)))
    ///     })
    ///     .build();
    /// assert_eq!(router.tools().count(), 1);
    /// ```
    pub fn async_tool<A, F, Fut>(self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(AsyncJob, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.tool(tool, move |ctx: &mut Context<'_, S>, args: A| {
            let handler = Arc::clone(&handler);
            let work: AsyncWork = Box::new(move |job: AsyncJob| -> ToolFuture { Box::pin(handler(job, args)) });
            ctx.spawn_or_run(Work::Async(work)).unwrap_or_else(|| Ok(CallToolResult::default()))
        })
    }
}

impl<S> Context<'_, S> {
    /// Runs `answer` off the I/O loop if the adapter provided a spawner (the reply deferred,
    /// answered when the future ends); otherwise here, now. Returns the answer when it ran
    /// here.
    fn spawn_answer(&mut self, answer: AnswerWork) -> Option<LaterAnswer> {
        let spawner = self.extras.spawner.clone();
        match (spawner, self.defer()) {
            (Some(spawner), Some(deferred)) => {
                spawner.spawn(Task::answering(deferred, answer));
                None
            }
            (_, deferred) => {
                if let Some(deferred) = deferred {
                    self.reply = Some(deferred.reply);
                }
                Some(block_on(answer))
            }
        }
    }
}

impl<S: 'static> RouterBuilder<S> {
    /// Registers a prompt whose handler is async: it takes the arguments as `A` (checked as
    /// [`RouterBuilder::typed_prompt`] checks them; a `BTreeMap<String, String>` takes them
    /// all) and returns a future, polled on the adapter's executor as an async tool's is.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use talaria_core::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
    /// use talaria_core::server::Router;
    ///
    /// let prompt = Prompt::new("summarize").with_argument(PromptArgument::required("url"));
    /// let router = Router::<()>::builder()
    ///     .async_prompt(prompt, |args: BTreeMap<String, String>| async move {
    ///         // ... fetch the page here ...
    ///         Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("Summarize {}", args["url"]))]))
    ///     })
    ///     .build();
    /// assert_eq!(router.prompts().count(), 1);
    /// ```
    pub fn async_prompt<A, F, Fut>(self, prompt: Prompt, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, PromptError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.typed_prompt(prompt, move |ctx: &mut Context<'_, S>, args: A| {
            let answer = handler(args);
            match ctx.spawn_answer(Box::pin(async move { LaterAnswer::Prompt(answer.await) })) {
                Some(LaterAnswer::Prompt(outcome)) => outcome,
                // Deferred: the answer goes through the link; this return is not sent.
                _ => Ok(GetPromptResult::new(Vec::new())),
            }
        })
    }

    /// Registers a resource at a fixed URI whose handler is async: it takes the URI read and
    /// returns a future of the contents, polled on the adapter's executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::Resource;
    /// use talaria_core::schema::TextResourceContents;
    /// use talaria_core::server::Router;
    ///
    /// let router = Router::<()>::builder()
    ///     .async_resource(Resource::new("db://stats", "stats"), |uri| async move {
    ///         // ... query the database here ...
    ///         Ok(vec![TextResourceContents::new(uri, "42 rows").into()])
    ///     })
    ///     .build();
    /// assert_eq!(router.resources().count(), 1);
    /// ```
    pub fn async_resource<F, Fut>(self, resource: Resource, handler: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.resource(resource, move |ctx: &mut Context<'_, S>, uri: &str, _vars: &BTreeMap<String, String>| {
            read_later(ctx, handler(uri.to_owned()))
        })
    }

    /// Registers a resource template whose handler is async: it takes the URI read and the
    /// template's variables, and returns a future of the contents.
    ///
    /// # Errors
    ///
    /// [`TemplateError`] when `template.uri_template` is not a level-1 template.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::ResourceTemplate;
    /// use talaria_core::schema::TextResourceContents;
    /// use talaria_core::server::Router;
    ///
    /// let router = Router::<()>::builder()
    ///     .async_resource_template(ResourceTemplate::new("users://{id}", "users"), |uri, vars| async move {
    ///         Ok(vec![TextResourceContents::new(uri, format!("user {}", vars["id"])).into()])
    ///     })?
    ///     .build();
    /// assert_eq!(router.resource_templates().count(), 1);
    /// # Ok::<(), talaria_core::server::uri_template::TemplateError>(())
    /// ```
    pub fn async_resource_template<F, Fut>(self, template: ResourceTemplate, handler: F) -> Result<Self, TemplateError>
    where
        F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.resource_template(template, move |ctx: &mut Context<'_, S>, uri: &str, vars: &BTreeMap<String, String>| {
            read_later(ctx, handler(uri.to_owned(), vars.clone()))
        })
    }
}

/// A resource read answered by `contents`, later (or now, where nothing spawns it).
fn read_later<S>(
    ctx: &mut Context<'_, S>,
    contents: impl Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send + 'static,
) -> Result<Vec<ResourceContents>, ResourceError> {
    match ctx.spawn_answer(Box::pin(async move { LaterAnswer::Resource(contents.await) })) {
        Some(LaterAnswer::Resource(outcome)) => outcome,
        // Deferred: the answer goes through the link; this return is not sent.
        _ => Ok(Vec::new()),
    }
}
