//! The conformance server: exactly the tools, resources and prompts the official MCP
//! conformance suite (`@modelcontextprotocol/conformance`) calls in its server scenarios, with
//! the texts and shapes its checks look for.
//!
//! Served by the `conformance-server` binary; `tests/interop/conformance.sh` runs the suite
//! against it.
//!
//! # Examples
//!
//! ```
//! let router = talaria_examples::conformance::router();
//! assert!(router.tools().any(|t| t.name == "test_simple_text"));
//! assert!(router.tools().any(|t| t.name == "json_schema_2020_12_tool"));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use talaria::core::http::reply::ReplyMode;
use talaria::core::schema::completion::Completion;
use talaria::core::schema::elicitation::{
    Elicit, ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ElicitationSchema,
};
use talaria::core::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use talaria::core::schema::resources::{Resource, ResourceTemplate};
use talaria::core::schema::sampling::{CreateMessage, CreateMessageRequestParams, SamplingContent};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::schema::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent, JsonObject, LoggingLevel,
    ResourceContents, Role, TextResourceContents,
};
use talaria::core::server::{Context, Job, Router, RouterBuilder, ToolError};
use talaria::http::HttpServerOptions;
use talaria::server::Server;

/// How to run it.
pub const USAGE: &str =
    "usage: conformance-server [--transport http|stdio] [--host 127.0.0.1] [--port N] [--runtime blocking|smol]";

/// A 1x1 red PNG, base64.
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

/// Eight samples of silence as an 8 kHz mono 8-bit WAV, base64.
pub const SILENT_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// Which transport to serve on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP at `/mcp`, replies always as SSE streams.
    Http,
    /// This process's stdin/stdout.
    Stdio,
}

/// The command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The transport (default HTTP).
    pub transport: Transport,
    /// The address to bind (HTTP).
    pub host: String,
    /// The port to bind (HTTP; 0, the default: any free port).
    pub port: u16,
    /// Serve HTTP with the smol server instead of the blocking one (`--runtime smol`).
    pub smol: bool,
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
    /// use talaria_examples::conformance::{Options, Transport};
    ///
    /// let o = Options::parse(&["--port".into(), "3001".into()]).unwrap();
    /// assert_eq!((o.transport, o.port), (Transport::Http, 3001));
    /// assert!(Options::parse(&["--transport".into(), "ws".into()]).is_err());
    /// ```
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut options = Self { transport: Transport::Http, host: "127.0.0.1".into(), port: 0, smol: false };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--transport" => {
                    options.transport = match value()?.as_str() {
                        "http" => Transport::Http,
                        "stdio" => Transport::Stdio,
                        other => return Err(format!("unknown transport {other:?}")),
                    }
                }
                "--host" => options.host = value()?,
                "--port" => options.port = value()?.parse().map_err(|e| format!("bad --port: {e}"))?,
                "--runtime" => options.smol = crate::parse_runtime(&value()?)?,
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(options)
    }
}

/// Serves the conformance server as `options` say, until the transport ends. Over HTTP the
/// URL goes to stderr (`conformance-server: listening on http://127.0.0.1:PORT/mcp`).
///
/// # Errors
///
/// I/O errors (the address cannot be bound, stdin or stdout failed).
pub fn run(options: &Options) -> std::io::Result<()> {
    let server = server();
    match options.transport {
        Transport::Stdio => talaria::stdio::serve(&server),
        Transport::Http => {
            // SSE replies: the suite's SSE polling scenarios read the POST's event stream, and
            // a `retry` delay tells a client when to resume a stream `test_reconnection` ends.
            let http_options =
                HttpServerOptions::default().reply_mode(ReplyMode::Sse).sse_retry(Duration::from_millis(500));
            crate::serve_http(
                &server,
                (options.host.as_str(), options.port),
                |_| Ok(http_options),
                options.smol.then(|| crate::smol_executor(None)).as_ref(),
                |addr| {
                    eprintln!("conformance-server: listening on http://{addr}/mcp");
                },
            )
        }
    }
}

/// Per-connection state: the resources this session subscribed to.
#[derive(Debug, Default)]
pub struct Subscriptions(pub BTreeSet<String>);

/// The conformance server, ready to serve.
#[must_use]
pub fn server() -> Server<Subscriptions> {
    Server::new("talaria-conformance-server", env!("CARGO_PKG_VERSION"), router())
}

/// The router: every tool, resource and prompt the suite's server scenarios use, plus
/// logging, completions and subscriptions.
#[must_use]
pub fn router() -> Router<Subscriptions> {
    let builder = Router::<Subscriptions>::builder();
    let builder = content_tools(builder);
    let builder = long_running_tools(builder);
    let builder = asking_tools(builder);
    let builder = resources(builder);
    prompts(builder)
        .completion(|_ctx, request| {
            let candidates: &[&str] = match request.argument.name.as_str() {
                "arg1" => &["paris", "park", "party"],
                "arg2" => &["red", "green", "blue"],
                _ => &[],
            };
            let prefix = request.argument.value.to_lowercase();
            Ok(Completion::from_values(candidates.iter().filter(|c| c.starts_with(&prefix)).copied()))
        })
        .subscriptions(
            |ctx, uri| {
                ctx.state().0.insert(uri.to_owned());
                Ok(())
            },
            |ctx, uri| {
                ctx.state().0.remove(uri);
                Ok(())
            },
        )
        .logging()
        .build()
}

/// A JSON object from a `json!` literal (anything else: empty).
fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A tool without arguments.
fn no_args(name: &str, description: &str) -> Tool {
    Tool::new(name, object(json!({"type": "object", "properties": {}}))).with_description(description)
}

/// A tool with one required string argument.
fn one_string(name: &str, description: &str, argument: &str, argument_description: &str) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {argument: {"type": "string", "description": argument_description}},
        "required": [argument],
    });
    Tool::new(name, object(schema)).with_description(description)
}

/// Tools answering at once with each kind of content, or an error.
fn content_tools<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    let schema_2020_12 = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            },
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": false,
    });
    builder
        .tool(no_args("test_simple_text", "Returns a simple text response"), |_ctx: &mut Context<'_, S>, _: Value| {
            Ok(CallToolResult::text("This is a simple text response for testing."))
        })
        .tool(no_args("test_image_content", "Returns an image (a red pixel)"), |_ctx, _: Value| {
            Ok(CallToolResult::new(vec![image()]))
        })
        .tool(no_args("test_audio_content", "Returns a short WAV clip"), |_ctx, _: Value| {
            Ok(CallToolResult::new(vec![ContentBlock::Audio(AudioContent::new(SILENT_WAV, "audio/wav"))]))
        })
        .tool(no_args("test_embedded_resource", "Returns an embedded text resource"), |_ctx, _: Value| {
            Ok(CallToolResult::new(vec![embedded(
                TextResourceContents::new("test://embedded-resource", "This is an embedded resource content.")
                    .with_mime_type("text/plain"),
            )]))
        })
        .tool(
            no_args("test_multiple_content_types", "Returns text, an image and an embedded resource"),
            |_ctx, _: Value| {
                let data = json!({"test": "data", "value": 123}).to_string();
                Ok(CallToolResult::new(vec![
                    ContentBlock::text("Multiple content types test:"),
                    image(),
                    embedded(
                        TextResourceContents::new("test://mixed-content-resource", data)
                            .with_mime_type("application/json"),
                    ),
                ]))
            },
        )
        .tool(no_args("test_error_handling", "Always fails"), |_ctx, _: Value| {
            Err(ToolError::execution("This tool intentionally returns an error for testing"))
        })
        .tool(
            Tool::new("json_schema_2020_12_tool", object(schema_2020_12))
                .with_description("Tool with JSON Schema 2020-12 features"),
            |_ctx, arguments: Value| Ok(CallToolResult::text(format!("Received: {arguments}"))),
        )
}

/// Tools that take a while: logging, progress, and the SSE reconnection test.
fn long_running_tools<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    let pause = Duration::from_millis(50);
    builder
        .blocking_tool(
            no_args("test_tool_with_logging", "Logs three messages while it runs"),
            move |job: &Job<'_>, _: Value| {
                job.log(LoggingLevel::Info, json!("Tool execution started"));
                std::thread::sleep(pause);
                job.log(LoggingLevel::Info, json!("Tool processing data"));
                std::thread::sleep(pause);
                job.log(LoggingLevel::Info, json!("Tool execution completed"));
                Ok(CallToolResult::text("Tool with logging executed successfully"))
            },
        )
        .blocking_tool(
            no_args("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100"),
            move |job: &Job<'_>, _: Value| {
                for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if step > 0 {
                        std::thread::sleep(pause);
                    }
                    job.progress(progress, Some(100.0), None);
                }
                Ok(CallToolResult::text("Tool with progress executed successfully"))
            },
        )
        .blocking_tool(
            no_args(
                "test_reconnection",
                "Closes its SSE stream mid-call; the result comes after the client reconnects",
            ),
            |job: &Job<'_>, _: Value| {
                // Frees the connection: the result waits in the event log for the client to
                // resume the stream (2025-11-25; earlier revisions keep the stream open).
                job.close_sse_stream();
                std::thread::sleep(Duration::from_millis(100));
                Ok(CallToolResult::text("Reconnection test completed successfully"))
            },
        )
}

#[derive(Deserialize)]
struct SamplingArgs {
    prompt: String,
}

#[derive(Deserialize)]
struct ElicitationArgs {
    message: String,
}

/// Tools that ask the client: its model (sampling) or its user (elicitation).
fn asking_tools<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    builder
        .blocking_tool(
            one_string("test_sampling", "Asks the client's model", "prompt", "The prompt to send to the LLM"),
            |job: &Job<'_>, args: SamplingArgs| {
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": args.prompt}}],
                    "maxTokens": 100,
                }))
                .map_err(|e| ToolError::execution(e.to_string()))?;
                let answer = job.ask::<CreateMessage>(&params).map_err(|e| ToolError::execution(e.to_string()))?;
                let text: Vec<String> = answer
                    .content
                    .as_slice()
                    .iter()
                    .map(|block| match block {
                        SamplingContent::Text(text) => text.text.clone(),
                        other => serde_json::to_string(other).unwrap_or_default(),
                    })
                    .collect();
                Ok(CallToolResult::text(format!("LLM response: {}", text.join(" "))))
            },
        )
        .blocking_tool(
            one_string(
                "test_elicitation",
                "Asks the user for a username and email",
                "message",
                "The message to show the user",
            ),
            |job: &Job<'_>, args: ElicitationArgs| {
                let form = json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"},
                    },
                    "required": ["username", "email"],
                });
                let answer = elicit(job, &args.message, form)?;
                Ok(CallToolResult::text(format!("User response: {}", describe(&answer))))
            },
        )
        .blocking_tool(
            no_args("test_elicitation_sep1034_defaults", "Asks the user with a form whose fields have defaults"),
            |job: &Job<'_>, _: Value| {
                let form = json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {
                            "type": "string",
                            "description": "User status",
                            "enum": ["active", "inactive", "pending"],
                            "default": "active",
                        },
                        "verified": {"type": "boolean", "description": "Verification status", "default": true},
                    },
                });
                let answer = elicit(job, "Please review your profile (every field has a default)", form)?;
                Ok(CallToolResult::text(format!("Elicitation completed: {}", describe(&answer))))
            },
        )
        .blocking_tool(
            no_args("test_elicitation_sep1330_enums", "Asks the user with every kind of enum field"),
            |job: &Job<'_>, _: Value| {
                let form = json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {
                            "type": "string",
                            "oneOf": [
                                {"const": "value1", "title": "First Option"},
                                {"const": "value2", "title": "Second Option"},
                                {"const": "value3", "title": "Third Option"},
                            ],
                        },
                        "legacyEnum": {
                            "type": "string",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"],
                        },
                        "untitledMulti": {
                            "type": "array",
                            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        },
                        "titledMulti": {
                            "type": "array",
                            "items": {
                                "anyOf": [
                                    {"const": "value1", "title": "First Choice"},
                                    {"const": "value2", "title": "Second Choice"},
                                    {"const": "value3", "title": "Third Choice"},
                                ],
                            },
                        },
                    },
                });
                let answer = elicit(job, "Pick from each kind of list", form)?;
                Ok(CallToolResult::text(format!("Elicitation completed: {}", describe(&answer))))
            },
        )
}

/// Asks the user to fill in `form` (a `requestedSchema` as JSON).
fn elicit(job: &Job<'_>, message: &str, form: Value) -> Result<ElicitResult, ToolError> {
    let schema: ElicitationSchema =
        serde_json::from_value(form).map_err(|e| ToolError::execution(format!("bad form: {e}")))?;
    let params = ElicitRequestParams::Form(ElicitRequestFormParams::new(message, schema));
    job.ask::<Elicit>(&params).map_err(|e| ToolError::execution(e.to_string()))
}

/// `action=accept, content={...}`.
fn describe(answer: &ElicitResult) -> String {
    let action = serde_json::to_value(answer.action).unwrap_or(Value::Null);
    let content = serde_json::to_string(&answer.content).unwrap_or_default();
    format!("action={}, content={content}", action.as_str().unwrap_or_default())
}

/// The red pixel as image content.
fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent::new(RED_PIXEL_PNG, "image/png"))
}

/// `contents` embedded as resource content.
fn embedded(contents: impl Into<ResourceContents>) -> ContentBlock {
    ContentBlock::Resource(Box::new(EmbeddedResource::new(contents.into())))
}

/// The static resources, the template and the subscribable resource.
fn resources<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    let text = |uri: &str, text: &str| -> Vec<ResourceContents> {
        vec![TextResourceContents::new(uri, text).with_mime_type("text/plain").into()]
    };
    let builder = builder
        .resource(
            Resource::new("test://static-text", "static-text")
                .with_description("A static text resource")
                .with_mime_type("text/plain"),
            move |_ctx, uri, _vars| Ok(text(uri, "This is the content of the static text resource.")),
        )
        .resource(
            Resource::new("test://static-binary", "static-binary")
                .with_description("A static binary resource (a red pixel)")
                .with_mime_type("image/png"),
            |_ctx, uri, _vars| {
                Ok(vec![BlobResourceContents::new(uri, RED_PIXEL_PNG).with_mime_type("image/png").into()])
            },
        )
        .resource(
            Resource::new("test://watched-resource", "watched-resource")
                .with_description("A resource to subscribe to")
                .with_mime_type("text/plain"),
            move |_ctx, uri, _vars| Ok(text(uri, "This resource is watched for changes.")),
        );
    let template = ResourceTemplate {
        description: Some("Data for an id".into()),
        mime_type: Some("application/json".into()),
        ..ResourceTemplate::new("test://template/{id}/data", "template-data")
    };
    let read = |_ctx: &mut Context<'_, S>, uri: &str, vars: &BTreeMap<String, String>| {
        let id = vars.get("id").map_or("", String::as_str);
        let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
        Ok(vec![TextResourceContents::new(uri, data.to_string()).with_mime_type("application/json").into()])
    };
    match builder.resource_template(template, read) {
        Ok(builder) => builder,
        Err(e) => unreachable_template(&e),
    }
}

#[allow(clippy::panic)]
fn unreachable_template(e: &dyn std::fmt::Display) -> ! {
    panic!("test://template/{{id}}/data is a level-1 template: {e}")
}

/// The prompts: plain, with arguments, with an embedded resource, with an image.
fn prompts<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    builder
        .prompt(
            Prompt::new("test_simple_prompt").with_description("A simple prompt without arguments"),
            |_ctx, _args| {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text("This is a simple prompt for testing.")]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_arguments")
                .with_description("A prompt with two required arguments")
                .with_argument(PromptArgument::required("arg1").with_description("First test argument"))
                .with_argument(PromptArgument::required("arg2").with_description("Second test argument")),
            |_ctx, args| {
                let arg = |name: &str| args.get(name).map_or("", String::as_str);
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                ))]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_embedded_resource")
                .with_description("A prompt embedding the resource it is given")
                .with_argument(
                    PromptArgument::required("resourceUri").with_description("URI of the resource to embed"),
                ),
            |_ctx, args| {
                let uri = args.get("resourceUri").map_or("", String::as_str);
                let contents = TextResourceContents::new(uri, "Embedded resource content for testing.")
                    .with_mime_type("text/plain");
                Ok(GetPromptResult::new(vec![
                    PromptMessage::new(Role::User, embedded(contents)),
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]))
            },
        )
        .prompt(Prompt::new("test_prompt_with_image").with_description("A prompt with an image"), |_ctx, _args| {
            Ok(GetPromptResult::new(vec![
                PromptMessage::new(Role::User, image()),
                PromptMessage::user_text("Please analyze the image above."),
            ]))
        })
}
