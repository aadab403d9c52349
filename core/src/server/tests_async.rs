//! Async handlers with no adapter: they run inline, and their asks go by rounds in
//! 2026-07-28.
#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn an_async_tool_asks_in_rounds_in_the_stateless_era() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use crate::client::{Handlers, MrtrCall};
    use crate::schema::roots::{ListRoots, Root};

    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let router = Router::<u32>::builder()
        .async_tool(Tool::new("roots", schema(json!({}))), move |job, _: Value| {
            counted.fetch_add(1, Ordering::Relaxed);
            async move {
                let roots =
                    job.ask::<ListRoots>(&Default::default()).await.map_err(|e| ToolError::execution(e.to_string()))?;
                job.progress(1.0, None, None);
                Ok(CallToolResult::text(format!("{} roots", roots.roots.len())))
            }
        })
        .build();
    let mut handlers = Handlers::default();
    handlers.add_root(Root::new("file:///work"));
    let mut w = World::with_client(ProtocolVersion::V2026_07_28, router, handlers.capabilities());
    let params = json!({"name": "roots", "arguments": {}}).as_object().unwrap().clone();
    let mut call = MrtrCall::start(&mut w.client, w.now, "tools/call", params, 5).unwrap();
    let result = w.finish_mrtr(&mut call, &handlers);
    let result: Value = serde_json::from_str(result.unwrap().get()).unwrap();
    assert_eq!(result["content"][0]["text"], "1 roots");
    assert_eq!(call.rounds(), 1, "one round for the one ask");
    assert_eq!(runs.load(Ordering::Relaxed), 2, "the job runs once per round");
}

#[test]
fn an_async_tool_runs_inline_where_nothing_spawns_it() {
    let router = Router::<u32>::builder()
        .async_tool(Tool::new("later", schema(json!({}))), |job, _: Value| async move {
            // No connection to ask through: the ask fails, the tool says so.
            let asked = job.ask::<crate::schema::roots::ListRoots>(&Default::default()).await;
            Ok(CallToolResult::text(format!("asked: {}", asked.is_ok())))
        })
        .build();
    let mut w = World::with(ProtocolVersion::V2025_11_25, router);
    let result = w.call("tools/call", &json!({"name": "later"}), RequestOptions::default()).unwrap();
    assert_eq!(result["content"][0]["text"], "asked: false");
}

#[test]
fn async_prompts_and_resources_run_inline_where_nothing_spawns_them() {
    use crate::schema::prompts::{Prompt, PromptMessage};
    use crate::schema::resources::Resource;
    let router = Router::<u32>::builder()
        .async_prompt(Prompt::new("p"), |_: std::collections::BTreeMap<String, String>| async {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text("hi")]))
        })
        .async_resource(Resource::new("r://x", "x"), |uri| async move {
            Ok(vec![TextResourceContents::new(uri, "x").into()])
        })
        .build();
    let mut w = World::with(ProtocolVersion::V2025_11_25, router);
    let prompt = w.call("prompts/get", &json!({"name": "p"}), RequestOptions::default()).unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "hi");
    let read = w.call("resources/read", &json!({"uri": "r://x"}), RequestOptions::default()).unwrap();
    assert_eq!(read["contents"][0]["text"], "x");
}
