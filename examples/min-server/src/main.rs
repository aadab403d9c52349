//! The smallest Talaria server: one `echo` tool over stdio, built with only the `stdio`
//! feature. `scripts/bench-all.sh` reports the size of its stripped release binary.
//!
//! ```text
//! cargo build --release -p talaria-min-server && strip -o /tmp/min target/release/min-stdio-server
//! ```
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::server::Server;

fn main() -> std::io::Result<()> {
    let router = Router::<()>::builder()
        .tool(Tool::new("echo", Default::default()), |_, args: serde_json::Value| {
            Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
        })
        .build();
    talaria::stdio::serve(&Server::new("min", "1.0", router))
}
