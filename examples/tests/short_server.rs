//! The short server (`src/bin/short_server.rs`) over stdio, as a client sees it: each tool,
//! the prompt and the template answer, the long-running tool with its progress.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use talaria::core::client::CallOptions;
use talaria::core::schema::prompts::{GetPrompt, GetPromptRequestParams};
use talaria::core::schema::resources::{ReadResource, ReadResourceRequestParams};
use talaria::prelude::*;
use talaria::stdio::StdioCommand;

#[test]
fn the_short_server_answers_every_kind_of_request() {
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_short-server"));
    let client = Client::stdio(command, ClientOptions::new("c", "1")).unwrap();
    let tools: Vec<String> = client.list_all_tools().unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(tools, ["greet", "count", "add"]);

    let greeting = client.call_tool("greet", json!({"name": "Ada"})).unwrap();
    assert_eq!(greeting.content[0].as_text(), Some("Hello, Ada!"));

    let steps = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&steps);
    let options = CallOptions::default().with_progress(move |p| seen.lock().unwrap().push(p.progress));
    let counted = client.call_tool_with("count", json!({"to": 3}), options).unwrap();
    assert_eq!(counted.content[0].as_text(), Some("counted to 3"));
    assert_eq!(*steps.lock().unwrap(), [1.0, 2.0, 3.0]);

    let sum = client.call_tool("add", json!({"a": 2, "b": 40})).unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 42})));
    let refused = client.call_tool("add", json!({"a": "two"})).unwrap();
    assert_eq!(refused.is_error, Some(true), "arguments are checked against the derived schema");

    let mut params = GetPromptRequestParams::new("review");
    params.arguments = Some([("code".to_owned(), "fn main() {}".to_owned())].into());
    let prompt = client.call::<GetPrompt>(&params, CallOptions::default()).unwrap();
    let text = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(text["content"]["text"], "Review this code:\nfn main() {}");

    let note =
        client.call::<ReadResource>(&ReadResourceRequestParams::new("notes://7"), CallOptions::default()).unwrap();
    assert_eq!(serde_json::to_value(&note.contents[0]).unwrap()["text"], "note 7");
}

/// The measure of a short server: at most 40 lines of code (comments and blank lines
/// not counted), for three tools, a prompt and a resource template.
#[test]
fn the_short_server_is_at_most_40_lines_of_code() {
    let source = include_str!("../src/bin/short_server.rs");
    let code = source.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with("//")).count();
    assert!(code <= 40, "short_server.rs has {code} lines of code");
}
