//! The server the official MCP conformance suite's server scenarios run against.
//!
//! ```text
//! conformance-server [--transport http|stdio] [--host 127.0.0.1] [--port N] [--runtime blocking|smol]
//! ```
//!
//! `http` (the default) serves Streamable HTTP at `/mcp` with SSE replies and prints the URL
//! on stderr; `stdio` serves on stdin/stdout. Then, for example:
//!
//! ```text
//! conformance-server --port 3001 &
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3001/mcp --suite all
//! ```
//!
//! `tests/interop/conformance.sh` does all of this and summarises the results.

use std::process::ExitCode;

use talaria_examples::conformance;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match conformance::Options::parse(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("conformance-server: {message}\n{}", conformance::USAGE);
            return ExitCode::from(2);
        }
    };
    match conformance::run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-server: {e}");
            ExitCode::FAILURE
        }
    }
}
