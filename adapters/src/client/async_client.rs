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
use talaria_core::schema::tools::{CallTool, CallToolResult, ListTools, ListToolsResult, Tool};
use talaria_core::schema::utilities::Ping;
use talaria_core::schema::{
    Implementation, LoggingLevel, Paginated, PaginatedRequestParams, RequestMethod, RequestParams,
};
use talaria_core::version::ProtocolVersion;

use super::{flatten, page, prompt_get, start, too_many_pages, tool_call, ClientError, Inner, MAX_LIST_PAGES};
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

/// A call in flight. Resolves to its typed outcome; dropped early, it cancels the call
/// (`notifications/cancelled` goes to the server).
#[must_use = "a call does nothing useful unless awaited; dropping it cancels it"]
pub struct CallFuture<T> {
    id: RequestId,
    outcome: oneshot::Receiver<Result<T, talaria_core::jsonrpc::CallError>>,
    inner: Weak<Inner>,
    finished: bool,
}

impl<T> std::fmt::Debug for CallFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallFuture").field("id", &self.id).field("finished", &self.finished).finish()
    }
}

impl<T> CallFuture<T> {
    /// The request's id.
    #[must_use]
    pub const fn id(&self) -> &RequestId {
        &self.id
    }
}

impl<T> Future for CallFuture<T> {
    type Output = Result<T, ClientError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match Pin::new(&mut self.outcome).poll(cx) {
            Poll::Ready(outcome) => {
                self.finished = true;
                Poll::Ready(flatten(outcome))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T> Drop for CallFuture<T> {
    fn drop(&mut self) {
        if self.finished || self.outcome.is_done() {
            return;
        }
        if let Some(inner) = self.inner.upgrade() {
            let id = self.id.clone();
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

    /// Sends request `M`; the future resolves to its typed result.
    ///
    /// # Errors
    ///
    /// [`ClientError::Send`] at once if it cannot be sent; the future's error otherwise.
    pub fn call<M: RequestMethod>(
        &self,
        params: &M::Params,
        options: CallOptions,
    ) -> Result<CallFuture<M::Result>, ClientError>
    where
        M::Result: Send + 'static,
    {
        let started = start::<M>(&self.inner, params, options)?;
        Ok(CallFuture { id: started.id, outcome: started.outcome, inner: Arc::downgrade(&self.inner), finished: false })
    }

    async fn typed<M: RequestMethod>(&self, params: M::Params, options: CallOptions) -> Result<M::Result, ClientError>
    where
        M::Result: Send + 'static,
    {
        self.call::<M>(&params, options)?.await
    }

    /// Calls a tool with per-call options.
    ///
    /// # Errors
    ///
    /// As [`AsyncClient::call`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.typed::<CallTool>(tool_call(name, arguments), options).await
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
                /// # Errors
                ///
                /// As [`AsyncClient::call`].
                pub async fn $name(&self, $($arg: $ty),*) -> Result<$out, ClientError> {
                    let make = |$($p: $ty),*| $params;
                    let $r = self.typed::<$marker>(make($($arg),*), CallOptions::default()).await?;
                    Ok($map)
                }
            )*
        }
    };
}

super::typed_calls!(async_calls);
