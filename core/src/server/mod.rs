//! The typed server layer: a router of tools, prompts and resources above the session.
//!
//! A [`Router`] holds what a server offers and answers the requests a [`Session<Server>`]
//! hands over as [`Event::Request`]. It calls the application's handlers synchronously with
//! typed arguments and a [`Context`] (the request, the session, per-session state); it never
//! blocks, spawns or reads a clock, so it runs under any executor. A handler that needs time
//! takes the reply with [`Context::defer`] and answers later with [`Router::complete_tool`].
//!
//! [`Session<Server>`]: crate::session::Session
//! [`Event::Request`]: crate::session::Event::Request
//!
//! # Examples
//!
//! ```
//! use serde::Deserialize;
//! use serde_json::json;
//! use talaria_core::schema::tools::{CallToolResult, Tool};
//! use talaria_core::server::Router;
//!
//! #[derive(Deserialize)]
//! struct Echo {
//!     text: String,
//! }
//!
//! let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
//! let router = Router::<()>::builder()
//!     .tool(Tool::new("echo", serde_json::from_value(schema).unwrap()), |_ctx, args: Echo| {
//!         Ok(CallToolResult::text(args.text))
//!     })
//!     .build();
//! assert!(router.capabilities().tools.is_some());
//! ```

mod async_job;
mod builder;
mod cancel;
mod context;
mod deferred;
mod deferred_reports;
mod endpoint;
mod error;
mod ext_task_requests;
mod extras;
mod job;
mod link;
mod offload;
pub mod pagination;
mod prompts;
mod resources;
mod rounds;
mod router;
mod task;
mod task_board;
mod tasks;
mod tools;
pub mod uri_template;
/// The JSON-Schema validator tool arguments are checked with (it lives in [`crate::schema`],
/// shared by both sides).
pub use crate::schema::validate;

/// A request's headers: an HTTP type ([`crate::http::Headers`]), re-exported here where
/// handlers meet it ([`TransportInfo::headers`]).
pub use crate::http::{HeaderIter, Headers};
pub use async_job::{AsyncJob, ToolFuture};
pub use builder::RouterBuilder;
pub use cancel::CancelFlag;
pub use context::Context;
pub use deferred::Deferred;
pub use endpoint::{ClientAnswer, Endpoint};
pub use error::{PromptError, ResourceError, ToolError};
pub use extras::TransportInfo;
pub use job::Job;
pub use link::{Answer, LaterAnswer, Link};
pub use router::{ListChanged, Router};
pub use task::{Spawn, Task};
pub use task_board::{
    MemoryTaskStore, StoredTask, TaskBoard, TaskStore, TaskStoreError, EXT_POLL_INTERVAL_MS, EXT_TASK_TTL_MS,
    MEMORY_STORE_CAPACITY,
};
pub use tasks::{iso8601, WallClock, DEFAULT_TASK_TTL_MS, MAX_TASKS, MAX_TASK_TTL_MS, POLL_INTERVAL_MS};

#[cfg(test)]
mod tests;
