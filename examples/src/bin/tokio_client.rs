//! Connects to an MCP server command over stdio from a tokio application and makes 100
//! concurrent echo calls, each as a tokio task.
//!
//! ```text
//! tokio-client                      # the everything-server next to this binary
//! tokio-client <command> [args...]  # any MCP server speaking stdio
//! ```
//!
//! Talaria's futures need no runtime of their own: connecting (`AsyncClient::stdio`) and every
//! call are plain futures that tokio polls, with no `spawn_blocking` anywhere.

use std::process::ExitCode;
use std::time::Instant;

use talaria::client::{AsyncClient, ClientError, ClientOptions};
use talaria::stdio::StdioCommand;

/// How many echo calls run at once.
const CALLS: usize = 100;

#[tokio::main]
async fn main() -> ExitCode {
    let command = match command_line(std::env::args().skip(1)) {
        Ok(command) => command,
        Err(why) => {
            eprintln!("tokio-client: {why}\nusage: tokio-client [<command> [args...]]");
            return ExitCode::from(2);
        }
    };
    match run(command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("tokio-client: {why}");
            ExitCode::FAILURE
        }
    }
}

/// The server to start: the arguments if any, else the everything-server beside this binary.
fn command_line(mut args: impl Iterator<Item = String>) -> Result<StdioCommand, String> {
    if let Some(program) = args.next() {
        return Ok(StdioCommand::new(program).args(args));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let server = exe.with_file_name(format!("everything-server{}", std::env::consts::EXE_SUFFIX));
    if !server.exists() {
        return Err(format!("no server given and {} does not exist", server.display()));
    }
    Ok(StdioCommand::new(server.to_string_lossy()).args(["--transport", "stdio"]))
}

/// Connects, lists the tools, runs the echo calls as tasks and checks every answer.
async fn run(command: StdioCommand) -> Result<(), String> {
    let options = ClientOptions::new("tokio-client", env!("CARGO_PKG_VERSION"));
    let client = AsyncClient::stdio(command, options).await.map_err(|e| e.to_string())?;
    let info = client.server_info();
    println!("connected to {} {} (protocol {})", info.name, info.version, client.protocol_version());
    let tools = client.list_all_tools().await.map_err(|e| e.to_string())?;
    println!("{} tools: {}", tools.len(), tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "));
    if !tools.iter().any(|t| t.name == "echo") {
        return Err("the server has no echo tool".into());
    }

    let start = Instant::now();
    let tasks: Vec<_> = (0..CALLS).map(|i| tokio::spawn(echo(client.clone(), i))).collect();
    let mut wrong = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await {
            Ok(Ok(answer)) if answer == marker(i) => {}
            Ok(Ok(answer)) => wrong.push(format!("call {i} got {answer:?}")),
            Ok(Err(e)) => wrong.push(format!("call {i} failed: {e}")),
            Err(e) => wrong.push(format!("call {i}'s task failed: {e}")),
        }
    }
    let took = start.elapsed();
    if !wrong.is_empty() {
        return Err(format!("{} of {CALLS} echo calls went wrong: {}", wrong.len(), wrong.join("; ")));
    }
    println!("echo: {CALLS} concurrent calls, {CALLS} answers correct, in {} ms", took.as_millis());
    if let Some(threads) = thread_names() {
        println!("threads: {}", threads.join(", "));
    }
    Ok(())
}

/// The names of this process's threads (Linux only): Talaria's own, tokio's, and no other
/// runtime's.
fn thread_names() -> Option<Vec<String>> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let mut names: Vec<String> = tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .collect();
    names.sort();
    Some(names)
}

/// The text call `i` sends and expects back.
fn marker(i: usize) -> String {
    format!("hello #{i} from tokio-client")
}

/// Makes echo call `i` and returns the text of its answer.
async fn echo(client: AsyncClient, i: usize) -> Result<String, ClientError> {
    let result = client.call_tool("echo", serde_json::json!({"text": marker(i)})).await?;
    Ok(result.content.iter().filter_map(|c| c.as_text()).collect())
}
