//! The async client handle: the same calls as [`Client`](super::Client), as futures that
//! only wait on a completion, so they run under any executor. Dropping a call's future before
//! it finishes cancels the call and tells the server.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use talaria_core::client::CallOptions;
use talaria_core::jsonrpc::RequestId;
use talaria_core::schema::completion::{Complete, CompleteRequestParams, CompleteResult};
use talaria_core::schema::logging::{SetLevel, SetLevelRequestParams};
use talaria_core::schema::prompts::{GetPrompt, GetPromptResult, ListPrompts, ListPromptsResult, Prompt};
use talaria_core::schema::resources::{
    ListResourceTemplates, ListResourceTemplatesResult, ListResources, ListResourcesResult, ReadResource,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, Subscribe, SubscribeRequestParams,
    Unsubscribe, UnsubscribeRequestParams,
};
use talaria_core::schema::tasks::{
    CallToolAsTask, CancelTask, CancelTaskRequestParams, CreateTaskResult, GetTask, GetTaskPayload,
    GetTaskPayloadRequestParams, GetTaskRequestParams, Task,
};
use talaria_core::schema::tools::{CallTool, CallToolResult, ListTools, ListToolsResult, Tool};
use talaria_core::schema::utilities::Ping;
use talaria_core::schema::{
    Implementation, LoggingLevel, Paginated, PaginatedRequestParams, RequestMethod, RequestParams,
};
use talaria_core::version::ProtocolVersion;

use super::{
    flatten, page, prompt_get, start, start_mapped, task_call, task_payload, too_many_pages, tool_call, ClientError,
    Inner, Started, MAX_LIST_PAGES,
};
use crate::oneshot;

/// An async MCP client. Get one from a connected [`Client`](super::Client) with
/// [`to_async`](super::Client::to_async), or connect one directly (the `smol` module).
///
/// # Examples
///
/// ```no_run
/// use talaria::client::{Client, ClientOptions};
/// use talaria::stdio::StdioCommand;
///
/// let client = Client::stdio(StdioCommand::new("everything-server"), ClientOptions::new("demo", "1.0"))?.to_async();
/// let tools = smol::block_on(client.list_all_tools())?;
/// # let _ = tools;
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
#[derive(Clone)]
pub struct AsyncClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AsyncClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncClient").field("server", &self.inner.ready.peer).finish_non_exhaustive()
    }
}

/// A sent call: its id and where its outcome arrives.
type InFlight<T> = (RequestId, oneshot::Receiver<Result<T, talaria_core::session::CallError>>);

/// A call in flight. Resolves to its typed outcome; dropped early, it cancels the call
/// (`notifications/cancelled` goes to the server).
#[must_use = "a call does nothing useful unless awaited; dropping it cancels it"]
pub struct CallFuture<T> {
    /// The call in flight, or why it could not be sent.
    state: Result<InFlight<T>, Option<ClientError>>,
    inner: Weak<Inner>,
    finished: bool,
}

impl<T> std::fmt::Debug for CallFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallFuture").field("id", &self.id()).field("finished", &self.finished).finish()
    }
}

impl<T> CallFuture<T> {
    fn new(started: Result<Started<T>, ClientError>, inner: &Arc<Inner>) -> Self {
        let state = started.map(|s| (s.id, s.outcome)).map_err(Some);
        Self { state, inner: Arc::downgrade(inner), finished: false }
    }

    /// Blocks this thread until the call ends: blocking code can keep many calls in flight
    /// on one thread by sending them first and waiting in turn.
    ///
    /// # Errors
    ///
    /// As awaiting the future.
    ///
    /// # Examples
    ///
    /// ```
    /// # use talaria::client::ClientOptions;
    /// # use talaria::core::schema::tools::{CallToolResult, Tool};
    /// # use talaria::core::server::Router;
    /// # let router = Router::<()>::builder()
    /// #     .tool(Tool::new("echo", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("e")))
    /// #     .build();
    /// # let server = talaria::server::Server::new("s", "1", router);
    /// let client = talaria::memory::connect(&server, ClientOptions::new("me", "1"))?.to_async();
    /// let calls: Vec<_> = (0..8).map(|_| client.call_tool("echo", serde_json::json!({}))).collect();
    /// for call in calls {
    ///     call.wait()?;
    /// }
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn wait(mut self) -> Result<T, ClientError> {
        let outcome = match &mut self.state {
            Ok((_, outcome)) => flatten(outcome.wait()),
            Err(error) => Err(error.take().unwrap_or(ClientError::Connect("waited twice".into()))),
        };
        self.finished = true;
        outcome
    }

    /// The request's id (`None` if it could not be sent).
    #[must_use]
    pub fn id(&self) -> Option<&RequestId> {
        self.state.as_ref().ok().map(|(id, _)| id)
    }
}

impl<T> Future for CallFuture<T> {
    type Output = Result<T, ClientError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        match &mut this.state {
            Ok((_, outcome)) => match Pin::new(outcome).poll(cx) {
                Poll::Ready(outcome) => {
                    this.finished = true;
                    Poll::Ready(flatten(outcome))
                }
                Poll::Pending => Poll::Pending,
            },
            Err(error) => {
                this.finished = true;
                Poll::Ready(Err(error.take().unwrap_or(ClientError::Connect("polled after completion".into()))))
            }
        }
    }
}

impl<T> Drop for CallFuture<T> {
    fn drop(&mut self) {
        let Ok((id, outcome)) = &self.state else { return };
        if self.finished || outcome.is_done() {
            return;
        }
        if let Some(inner) = self.inner.upgrade() {
            let id = id.clone();
            let _ = inner.conn.with(|endpoint, _| endpoint.cancel(&id, Some("the caller stopped waiting")));
        }
    }
}

impl AsyncClient {
    pub(crate) const fn from_inner(inner: Arc<Inner>) -> Self {
        Self { inner }
    }

    /// The blocking twin of this handle.
    #[must_use]
    pub fn to_blocking(&self) -> super::Client {
        super::Client { inner: Arc::clone(&self.inner) }
    }

    /// The server's name and version.
    #[must_use]
    pub fn server_info(&self) -> &Implementation {
        &self.inner.ready.peer
    }

    /// The negotiated protocol revision.
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.ready.version
    }

    /// Sends request `M` at once; the future resolves to its typed result, or to
    /// [`ClientError::Send`] if it could not be sent.
    pub fn call<M: RequestMethod>(&self, params: &M::Params, options: CallOptions) -> CallFuture<M::Result>
    where
        M::Result: Send + 'static,
    {
        CallFuture::new(start::<M>(&self.inner, params, options), &self.inner)
    }

    async fn typed<M: RequestMethod>(&self, params: M::Params, options: CallOptions) -> Result<M::Result, ClientError>
    where
        M::Result: Send + 'static,
    {
        self.call::<M>(&params, options).await
    }

    /// Calls a tool with per-call options. Sent at once; the future resolves to the result.
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> CallFuture<CallToolResult> {
        self.call::<CallTool>(&tool_call(name, arguments), options)
    }

    /// Calls a tool as a task (2025-11-25); see [`Client::call_tool_as_task`](super::Client::call_tool_as_task).
    /// Sent at once; the future resolves to the task.
    pub fn call_tool_as_task(
        &self,
        name: &str,
        arguments: serde_json::Value,
        ttl: Option<std::time::Duration>,
    ) -> CallFuture<CreateTaskResult> {
        self.call::<CallToolAsTask>(&task_call(name, arguments, ttl), CallOptions::default())
    }

    /// The task `task_id` as the server has it now (`tasks/get`, 2025-11-25).
    pub fn get_task(&self, task_id: &str) -> CallFuture<Task> {
        self.call::<GetTask>(&GetTaskRequestParams::new(task_id), CallOptions::default())
    }

    /// The outcome of the tool call the task runs (`tasks/result`, 2025-11-25), once the task
    /// has ended.
    ///
    /// # Errors
    ///
    /// As [`Client::task_result`](super::Client::task_result).
    pub async fn task_result(&self, task_id: &str, options: CallOptions) -> Result<CallToolResult, ClientError> {
        task_payload(self.call::<GetTaskPayload>(&GetTaskPayloadRequestParams::new(task_id), options).await?)
    }

    /// Cancels the task `task_id` (`tasks/cancel`, 2025-11-25).
    pub fn cancel_task(&self, task_id: &str) -> CallFuture<Task> {
        self.call::<CancelTask>(&CancelTaskRequestParams::new(task_id), CallOptions::default())
    }

    async fn list_all<M>(&self) -> Result<Vec<<M::Result as Paginated>::Item>, ClientError>
    where
        M: RequestMethod<Params = PaginatedRequestParams>,
        M::Result: Paginated + Send + 'static,
    {
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_LIST_PAGES {
            let page = self.typed::<M>(page(cursor), CallOptions::default()).await?;
            cursor = page.next_cursor().map(str::to_owned);
            items.extend(page.into_items());
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(too_many_pages(M::INFO.name))
    }

    /// Every tool, following cursors.
    ///
    /// # Errors
    ///
    /// As [`AsyncClient::call`].
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all::<ListTools>().await
    }

    /// Every prompt, following cursors.
    ///
    /// # Errors
    ///
    /// As [`AsyncClient::call`].
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<ListPrompts>().await
    }

    /// Every resource, following cursors.
    ///
    /// # Errors
    ///
    /// As [`AsyncClient::call`].
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<ListResources>().await
    }

    /// Every resource template, following cursors.
    ///
    /// # Errors
    ///
    /// As [`AsyncClient::call`].
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<ListResourceTemplates>().await
    }
}

/// The typed calls of the async handle (the blocking handle's list, as futures).
macro_rules! async_calls {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty = $marker:ty, |$($p:ident),*| $params:expr, |$r:ident| $map:expr;)*) => {
        impl AsyncClient {
            $(
                $(#[$doc])*
                ///
                /// Sent at once; the future resolves to the outcome (see [`AsyncClient::call`]).
                pub fn $name(&self, $($arg: $ty),*) -> CallFuture<$out> {
                    let make = |$($p: $ty),*| $params;
                    let started = start_mapped::<$marker, _>(&self.inner, &make($($arg),*), CallOptions::default(), |$r| $map);
                    CallFuture::new(started, &self.inner)
                }
            )*
        }
    };
}

super::typed_calls!(async_calls);
