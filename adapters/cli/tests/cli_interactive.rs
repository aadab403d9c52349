//! The `talaria` REPL driven through a pseudo-terminal (`scripts/cli_pty_test.py`, Python's
//! standard `pty` module): completion, argument prompts, a live progress bar and Ctrl-C
//! cancelling a slow call, sampling and elicitation answered at the prompt, history.
//!
//! Skipped (with a note) where `python3` is missing.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

const TALARIA: &str = env!("CARGO_BIN_EXE_talaria");
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cli_pty_test.py");

fn scenario(name: &str) {
    let Ok(output) = Command::new("python3").arg(SCRIPT).arg(TALARIA).arg(name).output() else {
        eprintln!("skipped: python3 is not available");
        return;
    };
    assert!(
        output.status.success() && String::from_utf8_lossy(&output.stdout).contains("1 passed, 0 failed"),
        "scenario {name} failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn tab_completes_commands_names_arguments_and_values() {
    scenario("completion");
}

#[test]
fn missing_arguments_are_prompted_for() {
    scenario("prompts");
}

#[test]
fn ctrl_c_cancels_a_slow_call_with_a_progress_bar() {
    scenario("cancel");
}

#[test]
fn sampling_and_elicitation_are_answered_at_the_prompt() {
    scenario("server_requests");
}

#[test]
fn history_persists_and_ctrl_d_leaves() {
    scenario("history");
}

#[test]
fn ctrl_c_while_connecting_leaves() {
    scenario("connect_interrupt");
}
