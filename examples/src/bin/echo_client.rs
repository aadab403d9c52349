//! Connects to any MCP server command over stdio and runs a few calls.
//!
//! ```text
//! echo-client <command> [args...]
//! echo-client everything-server --transport stdio
//! ```

use std::process::ExitCode;

use talaria::client::{Client, ClientOptions};
use talaria::stdio::StdioCommand;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: echo-client <command> [args...]");
        return ExitCode::from(2);
    };
    match run(StdioCommand::new(program).args(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo-client: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: StdioCommand) -> Result<(), talaria::client::ClientError> {
    let client = Client::stdio(command, ClientOptions::new("echo-client", env!("CARGO_PKG_VERSION")))?;
    let info = client.server_info();
    println!("connected to {} {} (protocol {})", info.name, info.version, client.protocol_version());
    match client.ping() {
        Ok(()) => println!("ping: ok"),
        Err(talaria::client::ClientError::Send(why)) => println!("ping: not sent ({why})"),
        Err(e) => return Err(e),
    }
    let tools = client.list_all_tools()?;
    println!("{} tools: {}", tools.len(), tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "));
    if tools.iter().any(|t| t.name == "echo") {
        let result = client.call_tool("echo", serde_json::json!({"text": "hello from echo-client"}))?;
        let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
        println!("echo: {}", text.join(" "));
    }
    client.close();
    Ok(())
}
