//! Connecting from async code, under any executor: each transport's connect runs on a short-
//! lived thread of its own (spawning a process, a TCP connect, an upgrade and the MCP
//! handshake all block), and the caller only awaits its outcome. No executor, reactor or
//! blocking pool is started behind the application's back, so the same futures run under
//! tokio, smol, async-std or a hand-written `block_on`.

use std::future::Future;

use super::{AsyncClient, Client, ClientError, ClientOptions};
use crate::oneshot;

/// Runs `connect` on a thread named `name` and resolves to its outcome. Dropping the future
/// early is safe: the thread finishes, and the client it made closes when dropped.
fn off_thread(
    name: &str,
    connect: impl FnOnce() -> Result<Client, ClientError> + Send + 'static,
) -> impl Future<Output = Result<AsyncClient, ClientError>> + Send + 'static {
    let (tx, rx) = oneshot::channel();
    let spawned = std::thread::Builder::new().name(name.into()).spawn(move || tx.send(connect()));
    async move {
        spawned?;
        match rx.await {
            Some(outcome) => outcome.map(|client| client.to_async()),
            None => Err(ClientError::Connect("the connecting thread ended without an answer".into())),
        }
    }
}

impl AsyncClient {
    /// Starts `command` and connects to it over its stdin/stdout, as
    /// [`Client::stdio`](super::Client::stdio) does, without blocking the executor.
    ///
    /// # Errors
    ///
    /// As [`Client::stdio`](super::Client::stdio).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{AsyncClient, ClientOptions};
    /// use talaria::stdio::StdioCommand;
    ///
    /// # smol::block_on(async {
    /// let command = StdioCommand::new("everything-server").args(["--transport", "stdio"]);
    /// let client = AsyncClient::stdio(command, ClientOptions::new("me", "1")).await?;
    /// let tools = client.list_all_tools().await?;
    /// # let _ = tools;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "stdio")]
    pub fn stdio(
        command: crate::stdio::StdioCommand,
        options: ClientOptions,
    ) -> impl Future<Output = Result<Self, ClientError>> + Send + 'static {
        off_thread("talaria-connect", move || Client::stdio(command, options))
    }

    /// Connects to the WebSocket server at `url`, as
    /// [`Client::websocket`](super::Client::websocket) does, without blocking the executor.
    ///
    /// # Errors
    ///
    /// As [`Client::websocket`](super::Client::websocket).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{AsyncClient, ClientOptions};
    ///
    /// # smol::block_on(async {
    /// let client = AsyncClient::websocket("ws://127.0.0.1:8080/ws", &[], ClientOptions::new("me", "1")).await?;
    /// client.ping().await?;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "ws")]
    pub fn websocket(
        url: &str,
        headers: &[(&str, &str)],
        options: ClientOptions,
    ) -> impl Future<Output = Result<Self, ClientError>> + Send + 'static {
        to_url(url, headers, options, Client::websocket)
    }

    /// Connects to the Streamable HTTP endpoint at `url`, as
    /// [`Client::http`](super::Client::http) does, without blocking the executor.
    ///
    /// # Errors
    ///
    /// As [`Client::http`](super::Client::http).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use talaria::client::{AsyncClient, ClientOptions};
    ///
    /// # smol::block_on(async {
    /// let client = AsyncClient::http("http://127.0.0.1:8080/mcp", &[], ClientOptions::new("me", "1")).await?;
    /// client.ping().await?;
    /// # Ok::<(), talaria::client::ClientError>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "http")]
    pub fn http(
        url: &str,
        headers: &[(&str, &str)],
        options: ClientOptions,
    ) -> impl Future<Output = Result<Self, ClientError>> + Send + 'static {
        to_url(url, headers, options, Client::http)
    }

    /// Connects to a legacy HTTP+SSE endpoint (2024-11-05) at `url`, as
    /// [`Client::sse`](super::Client::sse) does, without blocking the executor.
    ///
    /// # Errors
    ///
    /// As [`Client::sse`](super::Client::sse).
    #[cfg(feature = "http")]
    pub fn sse(
        url: &str,
        headers: &[(&str, &str)],
        options: ClientOptions,
    ) -> impl Future<Output = Result<Self, ClientError>> + Send + 'static {
        to_url(url, headers, options, Client::sse)
    }

    /// Connects over Streamable HTTP, falling back to legacy HTTP+SSE as the spec says, as
    /// [`Client::http_or_sse`](super::Client::http_or_sse) does, without blocking the
    /// executor.
    ///
    /// # Errors
    ///
    /// As [`Client::http_or_sse`](super::Client::http_or_sse).
    #[cfg(feature = "http")]
    pub fn http_or_sse(
        url: &str,
        headers: &[(&str, &str)],
        options: ClientOptions,
    ) -> impl Future<Output = Result<Self, ClientError>> + Send + 'static {
        to_url(url, headers, options, Client::http_or_sse)
    }

    /// Connects a new client to `server` in memory, as
    /// [`memory::connect`](crate::memory::connect) does, without blocking the executor.
    ///
    /// # Errors
    ///
    /// As [`memory::connect`](crate::memory::connect).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria::client::{AsyncClient, ClientOptions};
    /// use talaria::core::schema::tools::{CallToolResult, Tool};
    /// use talaria::core::server::Router;
    /// use talaria::server::Server;
    ///
    /// let router = Router::<()>::builder()
    ///     .tool(Tool::new("hi", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("hello")))
    ///     .build();
    /// let server = Server::new("mem", "1.0", router);
    /// let client = smol::block_on(AsyncClient::memory(&server, ClientOptions::new("me", "1")))?;
    /// assert_eq!(smol::block_on(client.list_all_tools())?.len(), 1);
    /// # Ok::<(), talaria::client::ClientError>(())
    /// ```
    pub fn memory<S: Send + 'static>(
        server: &crate::server::Server<S>,
        options: ClientOptions,
    ) -> impl Future<Output = Result<Self, ClientError>> + Send + 'static {
        let server = server.clone();
        off_thread("talaria-connect", move || crate::memory::connect(&server, options))
    }
}

/// A blocking connect to a URL with headers: `Client::http`, `Client::websocket`, ...
#[cfg(any(feature = "ws", feature = "http"))]
type ConnectTo = fn(&str, &[(&str, &str)], ClientOptions) -> Result<Client, ClientError>;

/// `connect` to `url` with `headers`, off the caller's thread: the URL and headers are copied
/// for it.
#[cfg(any(feature = "ws", feature = "http"))]
fn to_url(
    url: &str,
    headers: &[(&str, &str)],
    options: ClientOptions,
    connect: ConnectTo,
) -> impl Future<Output = Result<AsyncClient, ClientError>> + Send + 'static {
    let url = url.to_owned();
    let headers: Vec<(String, String)> =
        headers.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
    off_thread("talaria-connect", move || {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        connect(&url, &headers, options)
    })
}
