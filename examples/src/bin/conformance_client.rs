//! The client the official MCP conformance suite's client scenarios run.
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=<scenario> conformance-client [args...] <server-url>
//! ```
//!
//! The suite starts a test server, then runs this binary with the server's URL as the last
//! argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`:
//!
//! ```text
//! npx @modelcontextprotocol/conformance client --command target/debug/conformance-client --scenario initialize
//! ```
//!
//! Scenarios: `initialize` (connect, list the tools if the server has any, close), `tools_call` (call `add_numbers`
//! with 5 and 3), `elicitation-sep1034-client-defaults` (call the server's tool and accept its
//! elicitation with every field's default), `sse-retry` (call `test_reconnection`, whose
//! stream the server closes mid-call), and every `auth/*` one (OAuth as the scenario asks, see
//! [`talaria_examples::conformance_auth`]). Each connects over Streamable HTTP in the legacy
//! era, with the blocking client, or with the smol one (`talaria::smol::http`) when
//! `TALARIA_CLIENT_RUNTIME=smol` (the scenarios other than `auth/*`). Exit status: 0 done, 1 a
//! call failed, 2 usage or an unknown scenario.

use std::process::ExitCode;

use serde_json::{json, Value};
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::client::Handlers;
use talaria::core::jsonrpc::ErrorObject;
use talaria::core::schema::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult};
use talaria::core::session::ClientMode;

/// The environment variable naming the scenario.
const SCENARIO: &str = "MCP_CONFORMANCE_SCENARIO";

/// The environment variable choosing the client: `smol` for the smol HTTP client.
const RUNTIME: &str = "TALARIA_CLIENT_RUNTIME";

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: {SCENARIO}=<scenario> conformance-client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var(SCENARIO).unwrap_or_default();
    let outcome = match scenario.as_str() {
        "initialize" => initialize(&url),
        "tools_call" => tools_call(&url),
        "elicitation-sep1034-client-defaults" => elicitation_defaults(&url),
        "sse-retry" => sse_retry(&url),
        auth if auth.starts_with("auth/") => {
            talaria_examples::conformance_auth::run(auth, &url).map_err(ClientError::Connect)
        }
        other => {
            eprintln!("conformance-client: unsupported scenario {other:?} (set {SCENARIO})");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Connects to `url` in the legacy era (the suite's test servers speak 2025-11-25 and
/// earlier), accepting elicitations with the form's defaults.
fn connect(url: &str) -> Result<Client, ClientError> {
    let handlers = Handlers::default().with_elicitation(false, accept_defaults);
    let options = ClientOptions::new("talaria-conformance-client", env!("CARGO_PKG_VERSION"))
        .mode(ClientMode::Legacy)
        .handlers(handlers)
        .on_log(|log| eprintln!("server log: {}", log.data));
    let smol = std::env::var(RUNTIME).is_ok_and(|r| r == "smol");
    let client = if smol {
        // The async client, its requests smol tasks; waited on from this thread.
        smol::block_on(talaria::smol::http(url, &[], options))?.to_blocking()
    } else {
        Client::http(url, &[], options)?
    };
    eprintln!(
        "connected to {} {} (protocol {}, {} client)",
        client.server_info().name,
        client.server_info().version,
        client.protocol_version(),
        if smol { "smol" } else { "blocking" }
    );
    Ok(client)
}

/// Answers a form elicitation by accepting it with each field's `default` (fields without
/// one are left out); declines anything else.
fn accept_defaults(params: &ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    let ElicitRequestParams::Form(form) = params else {
        return Ok(ElicitResult::new(ElicitAction::Decline));
    };
    Ok(ElicitResult::accept(form.requested_schema.defaults()))
}

/// Calls `name` and prints its text content.
fn call(client: &Client, name: &str, arguments: Value) -> Result<(), ClientError> {
    let result = client.call_tool(name, arguments)?;
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
    let status = if result.is_error() { "error" } else { "ok" };
    println!("{name} ({status}): {}", text.join(" "));
    Ok(())
}

/// Lists the server's tools and prints their names.
fn list_tools(client: &Client) -> Result<Vec<String>, ClientError> {
    let names: Vec<String> = client.list_all_tools()?.into_iter().map(|t| t.name).collect();
    println!("tools: {}", names.join(", "));
    Ok(names)
}

/// `initialize`: the handshake, a tool listing if the server offers tools, a clean close.
fn initialize(url: &str) -> Result<(), ClientError> {
    let client = connect(url)?;
    if client.server_capabilities().is_some_and(|c| c.tools.is_some()) {
        list_tools(&client)?;
    } else {
        println!("the server offers no tools");
    }
    client.close();
    Ok(())
}

/// `tools_call`: adds 5 and 3 with the server's `add_numbers`.
fn tools_call(url: &str) -> Result<(), ClientError> {
    let client = connect(url)?;
    list_tools(&client)?;
    call(&client, "add_numbers", json!({"a": 5, "b": 3}))?;
    client.close();
    Ok(())
}

/// `elicitation-sep1034-client-defaults`: the server's tool elicits; the handler accepts with
/// the defaults.
fn elicitation_defaults(url: &str) -> Result<(), ClientError> {
    let client = connect(url)?;
    list_tools(&client)?;
    call(&client, "test_client_elicitation_defaults", json!({}))?;
    client.close();
    Ok(())
}

/// `sse-retry`: the server closes the call's stream after a priming event; the client waits
/// the `retry:` time and resumes with a GET carrying `Last-Event-ID`.
fn sse_retry(url: &str) -> Result<(), ClientError> {
    let client = connect(url)?;
    list_tools(&client)?;
    call(&client, "test_reconnection", json!({}))?;
    client.close();
    Ok(())
}
