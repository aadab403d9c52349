//! The bundled demo server behind `talaria demo` and `talaria serve-demo`: a small router
//! with one of each feature (typed tools, a structured tool, a slow tool with progress that
//! honours cancellation, logging, sampling and elicitation, a prompt with completion, resources
//! and a template).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use talaria_core::schema::completion::{Completion, CompletionReference};
use talaria_core::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use talaria_core::schema::resources::{Resource, ResourceTemplate};
use talaria_core::schema::tools::{CallToolResult, Tool};
use talaria_core::schema::{BlobResourceContents, JsonObject, LoggingLevel, TextResourceContents};
use talaria_core::server::{Router, RouterBuilder, ToolError};

use talaria::server::Server;

/// The names the completion of `greet`'s `name` offers.
const NAMES: [&str; 6] = ["Ada", "Alan", "Barbara", "Grace", "Linus", "Margaret"];

/// Per-connection state: how many tools this connection called.
#[derive(Debug, Default)]
pub struct DemoState {
    calls: u64,
}

/// The demo server, ready to serve over any transport.
///
/// # Examples
///
/// ```
/// use talaria::client::ClientOptions;
///
/// let client = talaria::memory::connect(&talaria_cli::demo_server(), ClientOptions::new("me", "1"))?;
/// let result = client.call_tool("add", serde_json::json!({"a": 2, "b": 3}))?;
/// assert_eq!(result.structured_content, Some(serde_json::json!({"sum": 5})));
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
#[must_use]
pub fn server() -> Server<DemoState> {
    Server::new("talaria-demo", env!("CARGO_PKG_VERSION"), router())
        .instructions("A demo server with one of each MCP feature. Try the echo tool first.")
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[derive(Deserialize)]
struct Echo {
    text: String,
    #[serde(default)]
    case: Option<String>,
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

#[derive(Deserialize)]
struct Stats {
    values: Vec<f64>,
}

/// The demo router.
#[must_use]
fn router() -> Router<DemoState> {
    let builder = tools(Router::<DemoState>::builder());
    let builder = builder
        .prompt(
            Prompt::new("greet")
                .with_description("Greets someone")
                .with_argument(PromptArgument::required("name").with_description("who to greet"))
                .with_argument(PromptArgument::optional("tone").with_description("warm, formal or pirate")),
            |_ctx, args| {
                let name = args.get("name").map_or("", String::as_str);
                let tone = args.get("tone").map_or("warm", String::as_str);
                Ok(GetPromptResult::new(vec![
                    PromptMessage::user_text(format!("Greet {name} in a {tone} tone.")),
                    PromptMessage::assistant_text(format!("Hello, {name}!")),
                ])
                .with_description("A greeting"))
            },
        )
        .resource(Resource::new("file:///readme.md", "readme").with_mime_type("text/markdown"), |_ctx, uri, _vars| {
            let text = "# Talaria demo\nA server with one of each MCP feature.";
            Ok(vec![TextResourceContents::new(uri, text).with_mime_type("text/markdown").into()])
        })
        .resource(Resource::new("file:///pixel.png", "pixel").with_mime_type("image/png"), |_ctx, uri, _vars| {
            Ok(vec![BlobResourceContents::new(uri, "iVBORw0KGgo=").with_mime_type("image/png").into()])
        });
    let notes = ResourceTemplate::new("notes://{id}", "notes");
    let builder = match builder.resource_template(notes, read_note) {
        Ok(builder) => builder,
        // Invariant: the template above is valid, so this arm is never taken; keep the
        // router without it rather than fail.
        Err(_) => Router::<DemoState>::builder(),
    };
    builder
        .completion(|_ctx, request| {
            let prefix = request.argument.value.to_lowercase();
            let values: Vec<String> = match (&request.reference, request.argument.name.as_str()) {
                (CompletionReference::Prompt(_), "tone") => vec!["warm".into(), "formal".into(), "pirate".into()],
                (CompletionReference::Resource(_), _) => (1..=3).map(|n| n.to_string()).collect(),
                _ => NAMES.iter().map(|n| (*n).to_owned()).collect(),
            };
            Ok(Completion::from_values(values.into_iter().filter(|v| v.to_lowercase().starts_with(&prefix))))
        })
        .subscriptions(|_ctx, _uri| Ok(()), |_ctx, _uri| Ok(()))
        .logging()
        .notify_list_changes()
        .build()
}

fn read_note(
    _ctx: &mut talaria_core::server::Context<'_, DemoState>,
    uri: &str,
    vars: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<talaria_core::schema::ResourceContents>, ToolError> {
    let id = vars.get("id").map_or("", String::as_str);
    Ok(vec![TextResourceContents::new(uri, format!("note {id}")).into()])
}

fn tools(builder: RouterBuilder<DemoState>) -> RouterBuilder<DemoState> {
    let echo = schema(json!({"type": "object", "properties": {
        "text": {"type": "string", "description": "what to echo"},
        "case": {"type": "string", "enum": ["upper", "lower", "as-is"], "default": "as-is"}},
        "required": ["text"]}));
    let add = schema(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"], "additionalProperties": false}));
    let sum = schema(json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}));
    let stats = schema(json!({"type": "object", "properties": {
        "values": {"type": "array", "items": {"type": "number"}, "minItems": 1}}, "required": ["values"]}));
    let empty = || schema(json!({"type": "object"}));
    let builder = builder
        .tool(Tool::new("echo", echo).with_description("Echoes the text back"), |ctx, args: Echo| {
            ctx.state().calls += 1;
            let text = match args.case.as_deref() {
                Some("upper") => args.text.to_uppercase(),
                Some("lower") => args.text.to_lowercase(),
                _ => args.text,
            };
            Ok(CallToolResult::text(text))
        })
        .structured_tool(
            Tool::new("add", add).with_description("Adds two integers").with_output_schema(sum),
            |ctx, args: Add| {
                ctx.state().calls += 1;
                Ok(Sum { sum: args.a.saturating_add(args.b) })
            },
        )
        .tool(Tool::new("stats", stats).with_description("Count, mean, min and max of numbers"), |_ctx, args: Stats| {
            let n = args.values.len();
            let min = args.values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = args.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            // Invariant: at most 2^53 values fit in memory, so the count converts exactly.
            #[allow(clippy::cast_precision_loss)]
            let mean = args.values.iter().sum::<f64>() / n.max(1) as f64;
            Ok(CallToolResult::structured(json!({"count": n, "mean": mean, "min": min, "max": max})))
        })
        .tool(Tool::new("fail", empty()).with_description("Always fails (isError)"), |_ctx, _: Value| {
            Err(ToolError::execution("this tool always fails"))
        })
        .tool(Tool::new("log", empty()).with_description("Sends a log message at each level"), |ctx, _: Value| {
            for level in [LoggingLevel::Debug, LoggingLevel::Info, LoggingLevel::Warning, LoggingLevel::Error] {
                let _ = ctx.log(level, json!(format!("a message at level {}", level_name(level))));
            }
            Ok(CallToolResult::text("logged"))
        });
    crate::demo_tools::elicit(crate::demo_tools::sample(crate::demo_tools::slow(builder, 200)))
}

fn level_name(level: LoggingLevel) -> String {
    serde_json::to_value(level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use talaria::client::ClientOptions;

    #[test]
    fn every_feature_answers_in_memory() {
        let client = talaria::memory::connect(&server(), ClientOptions::new("t", "1")).unwrap();
        let tools: Vec<String> = client.list_all_tools().unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(tools, ["echo", "add", "stats", "fail", "log", "slow", "sample", "elicit"]);
        let echoed = client.call_tool("echo", json!({"text": "Hi", "case": "upper"})).unwrap();
        assert_eq!(echoed.content[0].as_text(), Some("HI"));
        assert!(client.call_tool("fail", json!({})).unwrap().is_error());
        assert_eq!(client.read_resource("notes://7").unwrap().contents[0].uri(), Some("notes://7"));
        let stats = client.call_tool("stats", json!({"values": [1, 2, 6]})).unwrap();
        assert_eq!(stats.structured_content.unwrap()["mean"], json!(3.0));
    }
}
