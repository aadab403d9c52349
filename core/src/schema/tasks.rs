//! Tasks (2025-11-25 core; an extension from 2026-07-28 on).

use super::macros::mcp_struct;

mcp_struct! {
    /// Asks for a request to run as a task (2025-11-25).
    #[derive(Default)]
    pub struct TaskMetadata {
        /// How long, in milliseconds, to keep the task's result after completion.
        opt ttl: u64 = "ttl",
    }
}
