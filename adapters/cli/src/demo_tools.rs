//! Tools that show off the long-running and server-to-client parts of the SDK, shared by the
//! CLI's demo server and the `everything-server` example: a slow tool with progress that
//! honours cancellation, and tools that ask the client's model (with a tool offered, if asked)
//! and user (with a form, or by sending them to a URL).
//!
//! # Examples
//!
//! ```
//! use talaria::core::server::Router;
//!
//! let router = talaria_cli::demo_tools::elicit(talaria_cli::demo_tools::sample(talaria_cli::demo_tools::slow(Router::<()>::builder(), 100))).build();
//! let names: Vec<&str> = router.tools().map(|t| t.name.as_str()).collect();
//! assert_eq!(names, ["slow", "sample", "elicit"]);
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use talaria_core::schema::elicitation::{Elicit, ElicitAction, ElicitRequestParams, ElicitRequestUrlParams};
use talaria_core::schema::sampling::{
    CreateMessage, CreateMessageRequestParams, CreateMessageResult, SamplingContent, SamplingMessage, StopReason,
    ToolChoice, ToolChoiceMode, ToolResultContent,
};
use talaria_core::schema::tools::{CallToolResult, TaskSupport, Tool};
use talaria_core::schema::{ContentBlock, JsonObject, Role};
use talaria_core::server::{Job, RouterBuilder, ToolError};

#[derive(Deserialize)]
struct Slow {
    #[serde(default = "default_steps")]
    steps: u32,
    #[serde(default)]
    step_ms: Option<u64>,
}

const fn default_steps() -> u32 {
    5
}

#[derive(Deserialize)]
struct Sample {
    #[serde(default)]
    question: String,
    /// Offer the model the `weather` tool, and run the tool when the model asks for it.
    #[serde(default)]
    tools: bool,
}

#[derive(Deserialize)]
struct Ask {
    #[serde(default)]
    question: String,
    /// Send the user to this URL instead of showing a form.
    #[serde(default)]
    url: Option<String>,
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn sample_schema() -> JsonObject {
    schema(json!({"type": "object", "properties": {
        "question": {"type": "string"},
        "tools": {"type": "boolean", "default": false,
            "description": "Offer the model a weather tool (sampling with tools, 2025-11-25+)"}}}))
}

fn elicit_schema() -> JsonObject {
    schema(json!({"type": "object", "properties": {
        "question": {"type": "string"},
        "url": {"type": "string", "format": "uri",
            "description": "Send the user to this URL instead of showing a form (URL mode, 2025-11-25+)"}}}))
}

/// Adds `slow`: counts `steps` (default 5) of `step_ms` (default `default_step_ms`) with a
/// progress report after each, stopping early when the client cancels; answers
/// `done after N steps`.
pub fn slow<S: 'static>(builder: RouterBuilder<S>, default_step_ms: u64) -> RouterBuilder<S> {
    let input = schema(json!({"type": "object", "properties": {
        "steps": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 5},
        "step_ms": {"type": "integer", "minimum": 0, "maximum": 60000, "default": default_step_ms}}}));
    builder.blocking_tool(
        Tool::new("slow", input)
            .with_description("Counts steps with progress; honours cancellation")
            .with_task_support(TaskSupport::Optional),
        move |job, args: Slow| {
            SLOW_CALLS.started.fetch_add(1, Ordering::Relaxed);
            let pause = Duration::from_millis(args.step_ms.unwrap_or(default_step_ms));
            for step in 1..=args.steps {
                if job.is_cancelled() {
                    SLOW_CALLS.cancelled.fetch_add(1, Ordering::Relaxed);
                    return Err(ToolError::execution("cancelled"));
                }
                std::thread::sleep(pause);
                job.progress(f64::from(step), Some(f64::from(args.steps)), Some(format!("step {step}")));
            }
            SLOW_CALLS.completed.fetch_add(1, Ordering::Relaxed);
            Ok(CallToolResult::text(format!("done after {} steps", args.steps)))
        },
    )
}

/// What became of this process's `slow` calls: how many started, ran to the end, and stopped
/// early because the client cancelled them (the proof, for interop tests, that a cancellation
/// stops the work).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct SlowCalls {
    /// Calls that started.
    pub started: u64,
    /// Calls that ran every step.
    pub completed: u64,
    /// Calls that saw the cancellation and stopped.
    pub cancelled: u64,
}

struct SlowCounters {
    started: AtomicU64,
    completed: AtomicU64,
    cancelled: AtomicU64,
}

static SLOW_CALLS: SlowCounters =
    SlowCounters { started: AtomicU64::new(0), completed: AtomicU64::new(0), cancelled: AtomicU64::new(0) };

/// The counts of this process's `slow` calls so far.
///
/// # Examples
///
/// ```
/// let before = talaria_cli::demo_tools::slow_calls();
/// assert!(talaria_cli::demo_tools::slow_calls().started >= before.started);
/// ```
#[must_use]
pub fn slow_calls() -> SlowCalls {
    SlowCalls {
        started: SLOW_CALLS.started.load(Ordering::Relaxed),
        completed: SLOW_CALLS.completed.load(Ordering::Relaxed),
        cancelled: SLOW_CALLS.cancelled.load(Ordering::Relaxed),
    }
}

/// Adds `sample`: asks the client's model the `question` (`sampling/createMessage`) and answers
/// `the model said: [content]`.
///
/// With `tools: true` the request also offers the model a `weather` tool (`toolChoice` auto;
/// the client must have declared `sampling.tools`). When the model asks for it (`tool_use`,
/// `stopReason: "toolUse"`), the tool runs (`sunny, 18 degrees in CITY`) and its result goes
/// back to the model (`tool_result`) in a second request; the answer is then the model's
/// final content.
pub fn sample<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    builder.blocking_tool(
        Tool::new("sample", sample_schema()).with_description("Asks the client's model, with a tool offered if asked"),
        |job, args: Sample| {
            let question = SamplingMessage::new(Role::User, SamplingContent::text(args.question));
            let mut params = CreateMessageRequestParams::new(vec![question.clone()], 100);
            if args.tools {
                params.tools = Some(vec![weather_tool()]);
                params.tool_choice = Some(ToolChoice::new(ToolChoiceMode::Auto));
            }
            let mut answer = ask_model(job, &params)?;
            let call = answer.content.iter().find_map(|c| match c {
                SamplingContent::ToolUse(call) if args.tools => Some(call.clone()),
                _ => None,
            });
            if let Some(call) = call.filter(|_| answer.stop_reason == Some(StopReason::ToolUse)) {
                if call.name != "weather" {
                    return Err(ToolError::execution(format!("the model asked for an unknown tool {:?}", call.name)));
                }
                let city = call.input.get("city").and_then(Value::as_str).unwrap_or("nowhere").to_owned();
                let result = ToolResultContent {
                    tool_use_id: call.id.clone(),
                    content: vec![ContentBlock::text(format!("sunny, 18 degrees in {city}"))],
                    ..ToolResultContent::default()
                };
                params.messages = vec![
                    question,
                    SamplingMessage::new(Role::Assistant, SamplingContent::ToolUse(call)),
                    SamplingMessage::new(Role::User, SamplingContent::ToolResult(result)),
                ];
                answer = ask_model(job, &params)?;
            }
            let content: Vec<Value> =
                answer.content.as_slice().iter().filter_map(|c| serde_json::to_value(c).ok()).collect();
            Ok(CallToolResult::text(format!("the model said: {}", Value::Array(content))))
        },
    )
}

/// The tool `sample` offers the model with `tools: true`.
fn weather_tool() -> Tool {
    let input = schema(json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}));
    Tool::new("weather", input).with_description("Today's weather in a city")
}

fn ask_model(job: &Job<'_>, params: &CreateMessageRequestParams) -> Result<CreateMessageResult, ToolError> {
    job.ask::<CreateMessage>(params).map_err(|e| ToolError::execution(e.to_string()))
}

/// The elicitation ids `elicit` hands out to URL-mode requests.
static URL_ELICITATIONS: AtomicU64 = AtomicU64::new(0);

/// Adds `elicit`: asks the user the `question` with a one-field form (`elicitation/create`)
/// and answers with the user's reply as JSON.
///
/// With a `url`, the user is sent to that page instead (URL mode, 2025-11-25+; the client
/// must have declared `elicitation.url`) under a fresh `elicitationId` (`url-N`). When the user
/// accepts, the tool says the page's flow is complete (`notifications/elicitation/complete`,
/// 2025-11-25 only) and answers `{"action", "elicitationId", "completionSent"}`.
pub fn elicit<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    builder.blocking_tool(
        Tool::new("elicit", elicit_schema()).with_description("Asks the user a question, or sends them to a URL"),
        |job, args: Ask| {
            if let Some(url) = args.url {
                let id = format!("url-{}", URL_ELICITATIONS.fetch_add(1, Ordering::Relaxed) + 1);
                let mut page = ElicitRequestUrlParams::new(args.question, url);
                page.elicitation_id = Some(id.clone());
                let answer = job
                    .ask::<Elicit>(&ElicitRequestParams::Url(page))
                    .map_err(|e| ToolError::execution(e.to_string()))?;
                let sent = answer.action == ElicitAction::Accept && job.elicitation_complete(&id);
                let reply = json!({"action": answer.action, "elicitationId": id, "completionSent": sent});
                return Ok(CallToolResult::text(reply.to_string()));
            }
            let params: ElicitRequestParams = serde_json::from_value(json!({
                "message": args.question,
                "requestedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
            }))
            .map_err(|e| ToolError::execution(e.to_string()))?;
            let answer = job.ask::<Elicit>(&params).map_err(|e| ToolError::execution(e.to_string()))?;
            Ok(CallToolResult::text(serde_json::to_string(&answer).unwrap_or_default()))
        },
    )
}
