//! What the CLI's end-to-end tests share: running the `talaria` binary, reading its `--json`
//! output, and the demo server on a network transport.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// The binary under test.
pub const TALARIA: &str = env!("CARGO_BIN_EXE_talaria");

/// Runs `talaria ARGS` (no colour, stdin empty) to its end.
pub fn talaria(args: &[&str]) -> Output {
    Command::new(TALARIA).args(args).env("NO_COLOR", "1").stdin(Stdio::null()).output().unwrap()
}

/// Runs `talaria ARGS` with `input` on its stdin.
pub fn with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(TALARIA)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// `talaria --json stdio -- talaria serve-demo ::: <commands>`.
pub fn stdio(extra: &[&str], commands: &str) -> Output {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    args.extend(["stdio", "--", TALARIA, "serve-demo", ":::"]);
    args.extend(commands.split(' '));
    talaria(&args)
}

/// Each line of stdout as JSON (`--json` prints one value per command).
pub fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// The exit code.
pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap()
}

/// What it printed on stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `talaria serve-demo --transport ws|http|sse --port 0`, and the URL it prints.
pub struct NetDemo {
    child: Child,
    /// The URL it serves at.
    pub url: String,
}

impl NetDemo {
    /// `serve-demo --transport TRANSPORT`.
    pub fn start(transport: &str) -> Self {
        Self::start_with(transport, &[])
    }

    /// `serve-demo --transport TRANSPORT` with `extra` options (`--tls-cert`, ...).
    pub fn start_with(transport: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(TALARIA)
            .args(["serve-demo", "--transport", transport, "--port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.split_whitespace().find(|w| w.contains("://")).expect("the URL on stderr").to_owned();
        Self { child, url }
    }
}

impl Drop for NetDemo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
