//! The names most servers and clients use, in one import.
//!
//! ```
//! use talaria::prelude::*;
//!
//! let router = Router::<()>::builder()
//!     .tool(Tool::new("ping", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("pong")))
//!     .build();
//! let server = Server::new("pinger", "1.0", router);
//! assert_eq!(server.info().name, "pinger");
//! ```

pub use crate::client::{Client, ClientError, ClientOptions};
pub use crate::server::Server;
pub use talaria_core::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
pub use talaria_core::schema::resources::{Resource, ResourceTemplate};
pub use talaria_core::schema::tools::{CallToolResult, Tool};
pub use talaria_core::schema::{BlobResourceContents, TextResourceContents};
pub use talaria_core::server::{AsyncJob, Context, Job, PromptError, ResourceError, Router, ToolError};
