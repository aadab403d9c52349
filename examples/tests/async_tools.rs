//! Async tools end to end, our client and server over the in-process transport: the handler's
//! future awaits a timer, reports progress and asks the client's model, awaiting the answer;
//! many such calls wait at once on the few threads of the server's async executor, not on a
//! thread each; in the stateless era an async tool's asks go by rounds; async prompts and
//! resource reads answer when their futures end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::ClientOptions;
use talaria::core::client::{CallOptions, Handlers};
use talaria::core::schema::roots::{ListRoots, Root};
use talaria::core::schema::sampling::{
    CreateMessage, CreateMessageRequestParams, CreateMessageResult, SamplingContent, SamplingMessage,
};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::schema::Role;
use talaria::core::server::{Router, ToolError};
use talaria::core::session::ClientMode;
use talaria::prelude::TextResourceContents;
use talaria::prelude::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate};

/// The tests of this file one at a time: one counts the process's threads.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[derive(serde::Deserialize)]
struct Topic {
    topic: String,
}

fn object() -> talaria::core::schema::JsonObject {
    json!({"type": "object"}).as_object().cloned().unwrap()
}

/// `think` waits 50 ms, reports progress, asks the model and answers with what it said;
/// `nap` waits 400 ms; `roots` counts the client's roots.
fn server() -> talaria::server::Server<()> {
    let router = Router::<()>::builder()
        .async_tool(Tool::new("think", object()), |job, _: serde_json::Value| async move {
            smol::Timer::after(Duration::from_millis(50)).await;
            job.progress(1.0, Some(2.0), Some("asking the model".into()));
            let question = SamplingMessage::new(Role::User, SamplingContent::text("The answer?"));
            let answer = job
                .ask::<CreateMessage>(&CreateMessageRequestParams::new(vec![question], 10))
                .await
                .map_err(|e| ToolError::execution(e.to_string()))?;
            job.progress(2.0, Some(2.0), None);
            let text = answer.content.iter().find_map(|c| match c {
                SamplingContent::Text(t) => Some(t.text.clone()),
                _ => None,
            });
            Ok(CallToolResult::text(format!("the model said {}", text.unwrap_or_default())))
        })
        .async_tool(Tool::new("nap", object()), |_job, _: serde_json::Value| async move {
            smol::Timer::after(Duration::from_millis(400)).await;
            Ok(CallToolResult::text("rested"))
        })
        .async_tool(Tool::new("roots", object()), |job, _: serde_json::Value| async move {
            let roots =
                job.ask::<ListRoots>(&Default::default()).await.map_err(|e| ToolError::execution(e.to_string()))?;
            Ok(CallToolResult::text(roots.roots.len().to_string()))
        })
        .async_prompt(Prompt::new("later").with_argument(PromptArgument::required("topic")), |args: Topic| async move {
            smol::Timer::after(Duration::from_millis(20)).await;
            if args.topic == "nothing" {
                return Err(ToolError::execution("nothing to say"));
            }
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("Tell me about {}", args.topic))]))
        })
        .async_resource(Resource::new("slow://one", "one"), |uri| async move {
            smol::Timer::after(Duration::from_millis(20)).await;
            Ok(vec![TextResourceContents::new(uri, "one, slowly").into()])
        })
        .async_resource_template(ResourceTemplate::new("slow://n/{n}", "numbers"), |uri, vars| async move {
            Ok(vec![TextResourceContents::new(uri, format!("number {}", vars["n"])).into()])
        })
        .unwrap()
        .build();
    talaria::server::Server::new("async", "1", router)
}

#[test]
fn an_async_tool_awaits_reports_progress_and_asks_the_client() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let handlers =
        Handlers::default().with_sampling(|_| Ok(CreateMessageResult::new("m", SamplingContent::text("42"))));
    // Legacy: the ask is a request to the client, awaited while the call runs on.
    let options = ClientOptions::new("c", "1").mode(ClientMode::Legacy).handlers(handlers);
    let client = talaria::memory::connect(&server(), options).unwrap();
    let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&progress);
    let options = CallOptions::default().with_progress(move |p| {
        seen.lock().unwrap().push(format!("{p:?}"));
    });
    let result = client.call_tool_with("think", json!({}), options).unwrap();
    assert_eq!(result.content[0].as_text(), Some("the model said 42"));
    let progress = progress.lock().unwrap();
    assert_eq!(progress.len(), 2, "both progress notifications arrived: {progress:?}");
}

/// The threads of this process whose name starts with `prefix` (Linux).
#[cfg(target_os = "linux")]
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

#[test]
#[cfg(target_os = "linux")]
fn a_hundred_async_calls_wait_at_once_without_a_thread_each() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let client = talaria::memory::connect(&server(), ClientOptions::new("c", "1")).unwrap();
    let workers_before = threads_named("talaria-worker");
    let started = Instant::now();
    let callers: Vec<_> = (0..100)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                client.call_tool("nap", json!({})).unwrap().content[0].as_text().map(str::to_owned)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (workers, executors) = (threads_named("talaria-worker"), threads_named("talaria-async"));
    for caller in callers {
        assert_eq!(caller.join().unwrap().as_deref(), Some("rested"));
    }
    let took = started.elapsed();
    // A hundred 400 ms naps on a pool of 64 threads would take two waves (800 ms and more).
    assert!(took < Duration::from_millis(790), "the naps overlapped: {took:?}");
    assert!(workers <= workers_before, "no pool worker was started for an async call: {workers} > {workers_before}");
    assert!((1..=4).contains(&executors), "{executors} executor threads");
}

#[test]
fn an_async_tool_asks_in_rounds_in_the_stateless_era() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut handlers = Handlers::default();
    handlers.add_root(Root::new("file:///a"));
    handlers.add_root(Root::new("file:///b"));
    let options = ClientOptions::new("c", "1").mode(ClientMode::Stateless).handlers(handlers);
    let client = talaria::memory::connect(&server(), options).unwrap();
    let result = client.call_tool("roots", json!({})).unwrap();
    assert_eq!(result.content[0].as_text(), Some("2"));
}

#[test]
fn async_prompts_and_resources_answer_when_their_futures_end() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    use talaria::core::schema::prompts::{GetPrompt, GetPromptRequestParams};
    use talaria::core::schema::resources::{ReadResource, ReadResourceRequestParams};
    let http = talaria::http::HttpServer::bind(&server(), "127.0.0.1:0", Default::default()).unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    for (mode, over_http) in [
        (ClientMode::Legacy, false),
        (ClientMode::Stateless, false),
        (ClientMode::Legacy, true),
        (ClientMode::Stateless, true),
    ] {
        let options = ClientOptions::new("c", "1").mode(mode);
        let client = if over_http {
            talaria::client::Client::http(&url, &[], options).unwrap()
        } else {
            talaria::memory::connect(&server(), options).unwrap()
        };
        let mut params = GetPromptRequestParams::new("later");
        params.arguments = Some([("topic".to_owned(), "owls".to_owned())].into());
        let prompt = client.call::<GetPrompt>(&params, CallOptions::default()).unwrap();
        assert_eq!(serde_json::to_value(&prompt.messages[0]).unwrap()["content"]["text"], "Tell me about owls");
        params.arguments = Some([("topic".to_owned(), "nothing".to_owned())].into());
        let refused = client.call::<GetPrompt>(&params, CallOptions::default()).unwrap_err();
        assert!(refused.to_string().contains("nothing to say"), "{refused}");
        let read = |uri: &str| {
            let read =
                client.call::<ReadResource>(&ReadResourceRequestParams::new(uri), CallOptions::default()).unwrap();
            serde_json::to_value(&read.contents[0]).unwrap()["text"].clone()
        };
        assert_eq!(read("slow://one"), "one, slowly");
        assert_eq!(read("slow://n/7"), "number 7");
    }
}
