//! The `talaria` binary's task commands (`task`, `watch`, `task-status`, `task-result`,
//! `tasks`, `cancel-task`) against its demo server over stdio, in both task designs: 2025-11-25
//! and the 2026-07-28 extension.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
use common::{code, json_lines, stderr, stdio};

#[test]
fn tools_run_as_tasks_from_the_command_line() {
    // Without an id, the task commands mean the task started last.
    let commands = "task slow steps=2 step_ms=1 ::: task-result ::: task-status task-1 ::: tasks ::: cancel-task";
    let output = stdio(&["--protocol-version", "2025-11-25"], commands);
    assert_eq!(code(&output), 3, "the last command is refused: the task has ended; {}", stderr(&output));
    let values = json_lines(&output);
    assert_eq!(values[0]["task"]["taskId"], "task-1", "{values:?}");
    assert_eq!(values[1]["content"][0]["text"], "done after 2 steps");
    assert_eq!(values[2]["status"], "completed");
    assert_eq!(values[3]["tasks"][0]["taskId"], "task-1");
    assert_eq!(
        (values[4]["code"].as_i64(), values[4]["kind"].as_str()),
        (Some(-32602), Some("protocol")),
        "{values:?}"
    );
    assert!(values[4]["message"].as_str().unwrap().contains("already completed"), "{values:?}");
    // Watched (2025-11-25: tasks/get until it ends, then tasks/result), each change printed.
    let output = stdio(&["--protocol-version", "2025-11-25"], "task slow steps=4 step_ms=150 ::: watch");
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(json_lines(&output)[1]["content"][0]["text"], "done after 4 steps");
    let err = stderr(&output);
    assert!(err.contains("task task-1: ") && err.contains("completed"), "{err}");
}

#[test]
fn tasks_of_the_2026_extension_are_started_watched_looked_at_and_cancelled() {
    // Started and kept; watched to the end with each change printed; looked at afterwards.
    let commands = "task slow steps=6 step_ms=100 ::: watch ::: task-status ::: tasks";
    let output = stdio(&["--protocol-version", "2026-07-28"], commands);
    assert_eq!(code(&output), 2, "tasks/list does not exist in the extension; {}", stderr(&output));
    let values = json_lines(&output);
    let id = values[0]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {values:?}"));
    assert_eq!(values[0]["resultType"], "task");
    assert_eq!(values[1]["content"][0]["text"], "done after 6 steps", "{values:?}");
    assert_eq!((values[2]["taskId"].as_str(), values[2]["status"].as_str()), (Some(id), Some("completed")));
    assert_eq!(values[3]["kind"], "usage", "{values:?}");
    let err = stderr(&output);
    assert!(err.contains(&format!("task {id}: step ")), "each change of the task is printed: {err}");
    // Cancelled by id while it runs.
    let output =
        stdio(&["--protocol-version", "2026-07-28"], "task slow steps=100 step_ms=50 ::: cancel-task ::: task-result");
    let values = json_lines(&output);
    assert_eq!(values[1]["ok"], true, "{values:?}");
    assert_eq!(values[2]["kind"], "protocol", "the task ended cancelled: {values:?}");
    assert_eq!(code(&output), 3, "{}", stderr(&output));
}
