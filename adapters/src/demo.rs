//! Tools that show off the long-running and server-to-client parts of the SDK, shared by the
//! CLI's demo server and the `everything-server` example: a slow tool with progress that
//! honours cancellation, and tools that ask the client's model and user.
//!
//! # Examples
//!
//! ```
//! use talaria::core::server::Router;
//!
//! let router = talaria::demo::elicit(talaria::demo::sample(talaria::demo::slow(Router::<()>::builder(), 100))).build();
//! let names: Vec<&str> = router.tools().map(|t| t.name.as_str()).collect();
//! assert_eq!(names, ["slow", "sample", "elicit"]);
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use talaria_core::schema::elicitation::{Elicit, ElicitRequestParams};
use talaria_core::schema::sampling::{CreateMessage, CreateMessageRequestParams};
use talaria_core::schema::tools::{CallToolResult, TaskSupport, Tool};
use talaria_core::schema::JsonObject;
use talaria_core::server::{RouterBuilder, ToolError};

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
struct Ask {
    #[serde(default)]
    question: String,
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn ask_schema() -> JsonObject {
    schema(json!({"type": "object", "properties": {"question": {"type": "string"}}}))
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
/// let before = talaria::demo::slow_calls();
/// assert!(talaria::demo::slow_calls().started >= before.started);
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
pub fn sample<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    builder.blocking_tool(
        Tool::new("sample", ask_schema()).with_description("Asks the client's model"),
        |job, args: Ask| {
            let params: CreateMessageRequestParams = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": args.question}}],
                "maxTokens": 100
            }))
            .map_err(|e| ToolError::execution(e.to_string()))?;
            let answer = job.ask::<CreateMessage>(&params).map_err(|e| ToolError::execution(e.to_string()))?;
            let content: Vec<Value> =
                answer.content.as_slice().iter().filter_map(|c| serde_json::to_value(c).ok()).collect();
            Ok(CallToolResult::text(format!("the model said: {}", Value::Array(content))))
        },
    )
}

/// Adds `elicit`: asks the user the `question` with a one-field form (`elicitation/create`)
/// and answers with the user's reply as JSON.
pub fn elicit<S: 'static>(builder: RouterBuilder<S>) -> RouterBuilder<S> {
    builder.blocking_tool(
        Tool::new("elicit", ask_schema()).with_description("Asks the user a question"),
        |job, args: Ask| {
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
