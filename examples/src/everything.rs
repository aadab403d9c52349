//! The everything server: every MCP feature in one router, served over any transport.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use talaria::core::http::reply::ReplyMode;
use talaria::core::schema::completion::Completion;
use talaria::core::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use talaria::core::schema::resources::{Resource, ResourceTemplate};
use talaria::core::schema::roots::ListRoots;
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::schema::{BlobResourceContents, JsonObject, LoggingLevel, RequestParams, TextResourceContents};
use talaria::core::server::{Router, ToolError};
use talaria::server::Server;
use talaria::ws::{WsServer, WsServerOptions};

/// How to run it.
pub const USAGE: &str =
    "usage: everything-server --transport stdio|http|sse|ws [--host 127.0.0.1] [--port N] [--runtime blocking|smol] [--threads N] [--reply-mode json|sse]";

/// Which transport to serve on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// This process's stdin/stdout.
    Stdio,
    /// WebSocket at `/ws`.
    WebSocket,
    /// Streamable HTTP at `/mcp`.
    Http,
    /// Legacy HTTP+SSE at `/sse`.
    Sse,
}

/// The command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The transport.
    pub transport: Transport,
    /// The address to bind (network transports).
    pub host: String,
    /// The port to bind (0: any free port, printed on stderr).
    pub port: u16,
    /// Serve stdio or HTTP with the smol flavour instead of the blocking one.
    pub smol: bool,
    /// Streamable HTTP replies: JSON where possible (the default), or always SSE.
    pub reply_mode: ReplyMode,
    /// Share sessions, SSE event logs and tasks with other processes through the Redis at
    /// this URL (`--redis redis://127.0.0.1:6379`).
    pub redis: Option<String>,
    /// With `--redis`: the session store's client, async (the default: awaited on the server's
    /// executor, where its connection's task runs too, whichever the runtime) or blocking
    /// (`--redis-store blocking`: a pool of connections called from smol's blocking pool).
    pub redis_async: bool,
    /// With `--runtime smol`: the threads that run the server's executor (`--threads N`;
    /// default, one per core). Several processes on one machine share its cores.
    pub threads: Option<usize>,
}

impl Options {
    /// Parses the arguments (without the program name).
    ///
    /// # Errors
    ///
    /// What is wrong with them.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_examples::everything::{Options, Transport};
    ///
    /// let o = Options::parse(&["--transport".into(), "ws".into(), "--port".into(), "0".into()]).unwrap();
    /// assert_eq!(o.transport, Transport::WebSocket);
    /// assert!(Options::parse(&["--transport".into(), "pigeon".into()]).is_err());
    /// ```
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut options = Self {
            transport: Transport::Stdio,
            host: "127.0.0.1".into(),
            port: 0,
            smol: false,
            reply_mode: ReplyMode::Json,
            redis: None,
            redis_async: true,
            threads: None,
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--transport" => {
                    options.transport = match value()?.as_str() {
                        "stdio" => Transport::Stdio,
                        "ws" => Transport::WebSocket,
                        "http" => Transport::Http,
                        "sse" => Transport::Sse,
                        other => return Err(format!("unknown transport {other:?}")),
                    }
                }
                "--host" => options.host = value()?,
                "--redis" => options.redis = Some(value()?),
                "--redis-store" => {
                    options.redis_async = match value()?.as_str() {
                        "async" => true,
                        "blocking" => false,
                        other => return Err(format!("unknown Redis store {other:?} (async or blocking)")),
                    }
                }
                "--runtime" => options.smol = crate::parse_runtime(&value()?)?,
                "--port" => options.port = value()?.parse().map_err(|e| format!("bad --port: {e}"))?,
                "--threads" => {
                    let threads = value()?.parse().map_err(|e| format!("bad --threads: {e}"))?;
                    options.threads = Some(threads).filter(|&n| n > 0);
                }
                "--reply-mode" => {
                    options.reply_mode = match value()?.as_str() {
                        "json" => ReplyMode::Json,
                        "sse" => ReplyMode::Sse,
                        other => return Err(format!("unknown reply mode {other:?}")),
                    }
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(options)
    }
}

/// Serves the everything server as `options` say, until the transport ends.
///
/// # Errors
///
/// I/O errors (the address cannot be bound, stdin or stdout failed).
pub fn run(options: &Options) -> std::io::Result<()> {
    let server = match &options.redis {
        Some(url) => server_on_redis(url)?,
        None => server(),
    };
    match options.transport {
        Transport::Stdio if options.smol => smol::block_on(talaria::smol::serve_stdio(&server)),
        Transport::Stdio => talaria::stdio::serve(&server),
        Transport::WebSocket => {
            let listening = WsServer::bind(&server, (options.host.as_str(), options.port), WsServerOptions::default())?;
            eprintln!("everything-server: listening on ws://{}/ws", listening.local_addr());
            listening.wait();
            Ok(())
        }
        Transport::Http | Transport::Sse => {
            // One server: Streamable HTTP at /mcp, the legacy transport at /sse and /messages.
            let http_options = talaria::http::HttpServerOptions::default().reply_mode(options.reply_mode);
            // The async store's connection runs its task on the executor the requests run on.
            let with_redis = |executor: &std::sync::Arc<smol::Executor<'static>>| match &options.redis {
                Some(url) => {
                    let store_on =
                        if options.redis_async { StoreOn::Async(Some(executor.clone())) } else { StoreOn::Blocking };
                    shared_through_redis(http_options, url, store_on)
                }
                None => Ok(http_options),
            };
            let executor = options.smol.then(|| crate::smol_executor(options.threads));
            let path = if options.transport == Transport::Sse { "sse" } else { "mcp" };
            crate::serve_http(&server, (options.host.as_str(), options.port), with_redis, executor.as_ref(), |addr| {
                eprintln!("everything-server: listening on http://{addr}/{path}");
            })
        }
    }
}

#[derive(Deserialize)]
struct Echo {
    text: String,
}

#[derive(Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Serialize)]
struct Sum {
    sum: i64,
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The `forecast` tool's arguments.
#[derive(Debug, Deserialize)]
struct Forecast {
    region: String,
    days: i64,
}

/// The per-connection state: how many calls this connection made.
#[derive(Debug, Default)]
pub struct Calls(pub u64);

/// The everything router.
///
/// # Examples
///
/// ```
/// let router = talaria_examples::everything::router();
/// assert!(router.tools().any(|t| t.name == "echo"));
/// ```
#[must_use]
#[allow(clippy::too_many_lines)]
pub fn router() -> Router<Calls> {
    everything_router(None)
}

/// [`router`], its tasks kept in `tasks` when given (a store shared between processes).
fn everything_router(tasks: Option<std::sync::Arc<dyn talaria::core::server::TaskStore>>) -> Router<Calls> {
    let text_schema =
        schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}));
    let add_schema =
        schema(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"], "additionalProperties": false}));
    let sum_schema = schema(json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}));
    let empty = || schema(json!({"type": "object"}));
    // 2026-07-28: both arguments are mirrored into headers (Mcp-Param-Region, Mcp-Param-Days).
    let forecast_schema = schema(json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "days": {"type": "integer", "x-mcp-header": "Days"}}, "required": ["region", "days"]}));
    let builder = Router::<Calls>::builder();
    let builder = match tasks {
        Some(store) => builder.task_store(store),
        None => builder,
    };
    let builder = builder
        .tool(Tool::new("echo", text_schema).with_description("Echoes the text back"), |ctx, args: Echo| {
            ctx.state().0 += 1;
            Ok(CallToolResult::text(args.text))
        })
        .structured_tool(
            Tool::new("add", add_schema).with_description("Adds two integers").with_output_schema(sum_schema),
            |_ctx, args: Add| Ok(Sum { sum: args.a.saturating_add(args.b) }),
        )
        .tool(Tool::new("fail", empty()).with_description("Always fails"), |_ctx, _: Value| {
            Err(ToolError::execution("this tool always fails"))
        })
        .tool(
            Tool::new("calls", empty()).with_description("How many echo calls this connection made"),
            |ctx, _: Value| Ok(CallToolResult::text(ctx.state().0.to_string())),
        )
        .tool(Tool::new("log", empty()).with_description("Logs at every level"), |ctx, _: Value| {
            for level in [LoggingLevel::Debug, LoggingLevel::Info, LoggingLevel::Warning, LoggingLevel::Error] {
                let _ = ctx.log(level, json!({"level": format!("{level:?}")}));
            }
            Ok(CallToolResult::text("logged"))
        })
        .tool(Tool::new("crash", empty()).with_description("Exits the server process abruptly"), |_ctx, _: Value| {
            std::process::exit(3)
        })
        .tool(
            Tool::new("slow-stats", empty())
                .with_description("How this process's slow calls ended: {started, completed, cancelled}"),
            |_ctx, _: Value| {
                let stats = serde_json::to_value(talaria_cli::demo_tools::slow_calls()).unwrap_or_default();
                Ok(CallToolResult::text(stats.to_string()))
            },
        );
    let builder =
        talaria_cli::demo_tools::elicit(talaria_cli::demo_tools::sample(talaria_cli::demo_tools::slow(builder, 100)))
            .blocking_tool(Tool::new("roots", empty()).with_description("Lists the client's roots"), |job, _: Value| {
                let roots =
                    job.ask::<ListRoots>(&RequestParams::default()).map_err(|e| ToolError::execution(e.to_string()))?;
                let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
                Ok(CallToolResult::text(uris.join("\n")))
            })
            .tool(
                Tool::new("forecast", forecast_schema)
                    .with_description("A made-up forecast; its arguments travel as Mcp-Param-* headers over HTTP"),
                |_ctx, args: Forecast| {
                    Ok(CallToolResult::text(format!("{}: sunny for {} days", args.region, args.days)))
                },
            )
            .prompt(
                Prompt::new("greet")
                    .with_description("Greets someone")
                    .with_argument(PromptArgument::required("name"))
                    .with_argument(PromptArgument::optional("tone")),
                |_ctx, args| {
                    let tone = args.get("tone").map_or("warm", String::as_str);
                    let name = args.get("name").map_or("", String::as_str);
                    Ok(GetPromptResult::new(vec![
                        PromptMessage::user_text(format!("Greet {name} in a {tone} tone.")),
                        PromptMessage::assistant_text(format!("Hello, {name}!")),
                    ]))
                },
            )
            .resource(
                Resource::new("file:///readme.md", "readme").with_mime_type("text/markdown"),
                |_ctx, uri, _vars| {
                    Ok(vec![TextResourceContents::new(uri, "# Everything\nA server with every feature.")
                        .with_mime_type("text/markdown")
                        .into()])
                },
            )
            .resource(Resource::new("file:///pixel.png", "pixel").with_mime_type("image/png"), |_ctx, uri, _vars| {
                Ok(vec![BlobResourceContents::new(uri, "iVBORw0KGgo=").with_mime_type("image/png").into()])
            });
    let builder = match builder.resource_template(ResourceTemplate::new("notes://{id}", "notes"), |_ctx, uri, vars| {
        Ok(vec![TextResourceContents::new(uri, format!("note {}", vars.get("id").map_or("", String::as_str))).into()])
    }) {
        Ok(builder) => builder,
        Err(e) => unreachable_template(&e),
    };
    builder
        .completion(|_ctx, request| {
            let names = ["Ada", "Alan", "Barbara", "Grace", "Linus", "Margaret"];
            let prefix = request.argument.value.to_lowercase();
            Ok(Completion::from_values(
                names.iter().filter(|n| n.to_lowercase().starts_with(&prefix)).map(|n| (*n).to_owned()),
            ))
        })
        .subscriptions(|_ctx, _uri| Ok(()), |_ctx, _uri| Ok(()))
        .logging()
        .notify_list_changes()
        .build()
}

#[allow(clippy::panic)]
fn unreachable_template(e: &dyn std::fmt::Display) -> ! {
    panic!("the notes template is valid: {e}")
}

/// [`server`] with its tasks in the Redis at `url`, and each session's call count kept in
/// its record (so that it goes on in another process).
///
/// # Errors
///
/// Redis cannot be reached.
pub fn server_on_redis(url: &str) -> std::io::Result<Server<Calls>> {
    let tasks = talaria_redis::RedisTaskStore::connect(url, talaria_redis::RedisOptions::default())
        .map_err(std::io::Error::other)?;
    let router = everything_router(Some(std::sync::Arc::new(tasks)));
    Ok(Server::new("everything-server", env!("CARGO_PKG_VERSION"), router)
        .instructions("A test server exposing every MCP feature. Try the echo tool first.")
        .session_state(|calls: &Calls| Some(serde_json::json!(calls.0)), |saved| saved.as_u64().map(Calls))
        // Two processes that served the session at once each counted their own calls.
        .merge_session_state(|base, ours, theirs| {
            let count = |state: Option<&Value>| state.and_then(Value::as_u64).unwrap_or(0);
            let mine = count(ours.as_ref()).saturating_sub(count(base));
            Some(serde_json::json!(count(theirs.as_ref()) + mine))
        }))
}

/// Which session store [`shared_through_redis`] gives the server.
#[derive(Debug, Clone)]
pub enum StoreOn {
    /// The async store (one multiplexed connection, awaited), its connection's task on the
    /// executor given (the one the server runs on), or else on smol's global executor.
    Async(Option<std::sync::Arc<smol::Executor<'static>>>),
    /// A pool of blocking stores, called from smol's blocking pool.
    Blocking,
}

/// `options` with sessions and SSE event logs in the Redis at `url`, and answers relayed
/// through it to the process that asked; sessions through the store `sessions` says.
///
/// # Errors
///
/// Redis cannot be reached.
pub fn shared_through_redis(
    options: talaria::http::HttpServerOptions,
    url: &str,
    sessions: StoreOn,
) -> std::io::Result<talaria::http::HttpServerOptions> {
    use talaria::http::{SharedEventStore, SharedSessionStore};
    use talaria_redis::AsyncRedisSessionStore;
    let redis = talaria_redis::RedisOptions::default;
    let sessions = match sessions {
        StoreOn::Async(on) => {
            let store = match on {
                Some(executor) => smol::block_on(AsyncRedisSessionStore::connect_on(executor, url, redis())),
                None => smol::block_on(AsyncRedisSessionStore::connect(url, redis())),
            };
            SharedSessionStore::from_async(store.map_err(std::io::Error::other)?)
        }
        StoreOn::Blocking => {
            // Several connections, so that requests wait for Redis side by side.
            let stores: Result<Vec<_>, _> =
                (0..8).map(|_| talaria_redis::RedisSessionStore::connect(url, redis())).collect();
            SharedSessionStore::pool(stores.map_err(std::io::Error::other)?)
        }
    };
    let retention = talaria::core::http::event_log::Retention::default;
    let events: Result<Vec<_>, _> =
        (0..4).map(|_| talaria_redis::RedisEventStore::connect(url, redis(), retention())).collect();
    let relay = talaria_redis::RedisRelay::connect(url, redis()).map_err(std::io::Error::other)?;
    Ok(options
        .session_store(sessions)
        .event_store(SharedEventStore::pool(events.map_err(std::io::Error::other)?))
        .relay(std::sync::Arc::new(relay)))
}

/// The everything server, ready to serve.
#[must_use]
pub fn server() -> Server<Calls> {
    Server::new("everything-server", env!("CARGO_PKG_VERSION"), router())
        .instructions("A test server exposing every MCP feature. Try the echo tool first.")
}
