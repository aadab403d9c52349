//! A server exposing every feature, for tests, benchmarks and outside tools.
//!
//! ```text
//! everything-server --transport stdio|http|sse|ws [--host 127.0.0.1] [--port N] [--runtime blocking|smol]
//! ```
//!
//! `http` serves Streamable HTTP at `/mcp` (and the legacy transport beside it), `sse` the
//! legacy HTTP+SSE transport at `/sse`, `ws` WebSocket at `/ws`; network modes print their URL
//! on stderr. Diagnostics go to stderr; over stdio, stdout carries protocol messages only.

use std::process::ExitCode;

use talaria_examples::everything;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match everything::Options::parse(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("everything-server: {message}\n{}", everything::USAGE);
            return ExitCode::from(2);
        }
    };
    match everything::run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("everything-server: {e}");
            ExitCode::FAILURE
        }
    }
}
