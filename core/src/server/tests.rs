//! The router end to end in memory: client session, server session, router, and back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::*;
use crate::schema::completion::Completion;
use crate::schema::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use crate::schema::resources::{Resource, ResourceTemplate};
use crate::schema::tools::{CallToolResult, Tool};
use crate::schema::Implementation;
use crate::schema::{CacheScope, TextResourceContents};
use crate::session::{
    Client, ClientConfig, ClientMode, Event, Output, RequestOptions, Route, Server, ServerConfig, Session,
};
use crate::version::ProtocolVersion;

#[derive(Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Serialize)]
struct Sum {
    sum: i64,
}

fn schema(v: Value) -> crate::schema::JsonObject {
    serde_json::from_value(v).unwrap()
}

fn router() -> Router<u32> {
    let add = Tool::new(
        "add",
        schema(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})),
    );
    let sum = Tool::new("sum", schema(json!({"type": "object"})))
        .with_output_schema(schema(json!({"type": "object", "properties": {"sum": {"type": "integer"}}})));
    Router::<u32>::builder()
        .tool(add, |_ctx, args: Add| Ok(CallToolResult::text((args.a + args.b).to_string())))
        .structured_tool(sum, |_ctx, args: Add| Ok(Sum { sum: args.a + args.b }))
        .tool(Tool::new("fail", schema(json!({}))), |_ctx, _: Value| Err(ToolError::execution("no luck")))
        .tool(Tool::new("refuse", schema(json!({}))), |_ctx, _: Value| {
            Err(ToolError::Protocol(crate::jsonrpc::ErrorObject::invalid_params("bad request")))
        })
        .tool(Tool::new("count", schema(json!({}))), |ctx, _: Value| {
            *ctx.state() += 1;
            Ok(CallToolResult::text(ctx.state().to_string()))
        })
        .prompt(greet_prompt(), |_ctx, args| {
            if args.get("name").map(String::as_str) == Some("error") {
                return Err(ToolError::execution("cannot greet that"));
            }
            let text = format!("Say hello to {}", args["name"]);
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(text)]))
        })
        .resource(Resource::new("file:///readme.md", "readme"), |_ctx, uri, _vars| {
            Ok(vec![TextResourceContents::new(uri, "# Hello").with_mime_type("text/markdown").into()])
        })
        .resource_template(ResourceTemplate::new("notes://{id}", "notes"), |_ctx, uri, vars| {
            if vars["id"] == "broken" {
                return Err(ToolError::execution("note store unavailable"));
            }
            Ok(vec![TextResourceContents::new(uri, format!("note {}", vars["id"])).into()])
        })
        .unwrap()
        .completion(|_ctx, req| {
            let names = ["Ada", "Alan", "Grace"].into_iter().chain((0..150).map(|_| "Zed"));
            let prefix = req.argument.value.clone();
            Ok(Completion::from_values(names.filter(|n| n.starts_with(&prefix)).map(str::to_owned)))
        })
        .logging()
        .cache_hints(60_000, CacheScope::Public)
        .tool(Tool::new("slow", schema(json!({}))), |ctx, _: Value| {
            ctx.progress(1.0, Some(2.0), Some("half".into())).unwrap();
            let deferred = ctx.defer().unwrap();
            DEFERRED.with(|d| *d.borrow_mut() = Some(deferred));
            Ok(CallToolResult::text("ignored"))
        })
        .build()
}

fn greet_prompt() -> Prompt {
    serde_json::from_value(json!({"name": "greet", "description": "Greets someone",
        "arguments": [{"name": "name", "required": true}, {"name": "tone"}]}))
    .unwrap()
}

thread_local! {
    static DEFERRED: std::cell::RefCell<Option<Deferred>> = const { std::cell::RefCell::new(None) };
}

struct World {
    client: Session<Client>,
    server: Session<Server>,
    router: Router<u32>,
    state: u32,
    now: Instant,
    client_events: Vec<Event>,
}

impl World {
    fn new(version: ProtocolVersion) -> Self {
        Self::with(version, router())
    }

    fn with(version: ProtocolVersion, router: Router<u32>) -> Self {
        Self::with_client(version, router, crate::schema::lifecycle::ClientCapabilities::default())
    }

    fn with_client(
        version: ProtocolVersion,
        router: Router<u32>,
        capabilities: crate::schema::lifecycle::ClientCapabilities,
    ) -> Self {
        let now = crate::test_clock::t0();
        let config = ServerConfig::new(Implementation::new("s", "1")).with_capabilities(router.capabilities());
        let mode = if version == ProtocolVersion::V2026_07_28 { ClientMode::Stateless } else { ClientMode::Legacy };
        let mut client_config =
            ClientConfig::new(Implementation::new("c", "1")).with_mode(mode).with_capabilities(capabilities);
        client_config.session.versions = vec![version];
        let mut world = Self {
            client: Session::<Client>::new(client_config, now),
            server: Session::<Server>::new(config),
            router,
            state: 0,
            now,
            client_events: Vec::new(),
        };
        world.settle();
        assert_eq!(world.client.version(), Some(version));
        world
    }

    fn settle(&mut self) {
        loop {
            let mut moved = false;
            while let Some(out) = self.client.poll_output() {
                match out {
                    Output::Transmit { payload, .. } => {
                        self.server.handle_frame(self.now, Route::Connection, &payload);
                        moved = true;
                    }
                    Output::Event(e) => self.client_events.push(e),
                    Output::StreamDone(_) | Output::StreamDisconnect(_) => {}
                }
            }
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Transmit { payload, .. } => {
                        self.client.handle_frame(self.now, Route::Connection, &payload);
                        moved = true;
                    }
                    Output::Event(Event::Request(req)) => {
                        self.router.dispatch(&mut self.server, &mut self.state, req).unwrap();
                        moved = true;
                    }
                    _ => {}
                }
            }
            if !moved {
                return;
            }
        }
    }

    /// Sends a request and returns its outcome as JSON (result, or the error object).
    fn call(&mut self, method: &str, params: &Value, options: RequestOptions) -> Result<Value, Value> {
        let raw = serde_json::value::to_raw_value(params).unwrap();
        let id = self.client.send_request(self.now, method, Some(raw), options).unwrap();
        self.settle();
        self.outcome(&id).expect("the request ended")
    }

    /// Runs an MRTR call's rounds (the client answering with `handlers`) until it ends.
    fn finish_mrtr(
        &mut self,
        call: &mut crate::client::MrtrCall,
        handlers: &crate::client::Handlers,
    ) -> Result<Box<serde_json::value::RawValue>, crate::session::CallError> {
        loop {
            self.settle();
            let id = call.pending().clone();
            let outcome = self.outcome_raw(&id).expect("a response");
            match call.on_response(&mut self.client, self.now, handlers, &id, outcome) {
                crate::client::MrtrStep::Retrying => {}
                crate::client::MrtrStep::Done(result) => return result,
                other => panic!("{other:?}"),
            }
        }
    }

    fn outcome_raw(
        &mut self,
        id: &crate::jsonrpc::RequestId,
    ) -> Option<Result<Box<serde_json::value::RawValue>, crate::session::CallError>> {
        let i = self.client_events.iter().position(|e| matches!(e, Event::Response { id: got, .. } if got == id))?;
        let Event::Response { outcome, .. } = self.client_events.remove(i) else { unreachable!() };
        Some(outcome)
    }

    fn outcome(&mut self, id: &crate::jsonrpc::RequestId) -> Option<Result<Value, Value>> {
        let i = self.client_events.iter().position(|e| matches!(e, Event::Response { id: got, .. } if got == id))?;
        let Event::Response { outcome, .. } = self.client_events.remove(i) else { unreachable!() };
        Some(match outcome {
            Ok(raw) => Ok(serde_json::from_str(raw.get()).unwrap()),
            Err(crate::session::CallError::Remote(e)) => Err(serde_json::to_value(e).unwrap()),
            Err(e) => panic!("local failure {e}"),
        })
    }
}

#[test]
fn tools_are_listed_in_registration_order_in_every_revision() {
    for version in ProtocolVersion::ALL {
        let mut w = World::new(version);
        let list = w.call("tools/list", &json!({}), RequestOptions::default()).unwrap();
        let names: Vec<&str> = list["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["add", "sum", "fail", "refuse", "count", "slow"], "{version}");
        assert!(w.client.server_capabilities().unwrap().prompts.is_some(), "{version}");
        let stateless = version == ProtocolVersion::V2026_07_28;
        assert_eq!(list.get("resultType").is_some(), stateless, "{version}");
        assert_eq!(list.get("ttlMs").is_some(), stateless, "{version}");
    }
}

#[test]
fn typed_arguments_reach_the_handler() {
    let mut w = World::new(ProtocolVersion::V2025_06_18);
    let r = w
        .call("tools/call", &json!({"name": "add", "arguments": {"a": 2, "b": 40}}), RequestOptions::default())
        .unwrap();
    assert_eq!(r, json!({"content": [{"type": "text", "text": "42"}]}));
}

#[test]
fn bad_arguments_and_failures_are_tool_errors_the_model_sees() {
    let mut w = World::new(ProtocolVersion::V2025_11_25);
    let r =
        w.call("tools/call", &json!({"name": "add", "arguments": {"a": "two"}}), RequestOptions::default()).unwrap();
    assert_eq!(r["isError"], true);
    let text = r["content"][0]["text"].as_str().unwrap();
    // The input schema names the field and what is wrong with it.
    assert_eq!(text, "Invalid arguments for tool add: \"a\": expected an integer, got a string");
    // What the schema allows but the handler's type does not is still caught, by serde:
    let r = w.call("tools/call", &json!({"name": "add", "arguments": {"a": 1}}), RequestOptions::default()).unwrap();
    assert!(r["content"][0]["text"].as_str().unwrap().contains("missing field `b`"));
    let r = w.call("tools/call", &json!({"name": "fail"}), RequestOptions::default()).unwrap();
    assert_eq!(r, json!({"content": [{"type": "text", "text": "no luck"}], "isError": true}));
}

#[test]
fn unknown_tools_and_protocol_errors_are_json_rpc_errors() {
    let mut w = World::new(ProtocolVersion::V2025_06_18);
    let e = w.call("tools/call", &json!({"name": "nope"}), RequestOptions::default()).unwrap_err();
    assert_eq!(e, json!({"code": -32602, "message": "Unknown tool: nope"}));
    let e = w.call("tools/call", &json!({"name": "refuse"}), RequestOptions::default()).unwrap_err();
    assert_eq!(e["code"], -32602);
    let e = w.call("tools/call", &json!({"arguments": {}}), RequestOptions::default()).unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("missing field `name`"), "{e}");
    let refused = w.client.send_request(w.now, "resources/subscribe", None, RequestOptions::default()).unwrap_err();
    assert!(matches!(refused, crate::session::SendError::MissingCapability { .. }), "no subscriptions advertised");
}

#[test]
fn structured_output_follows_the_revision() {
    let mut w = World::new(ProtocolVersion::V2025_06_18);
    let r = w
        .call("tools/call", &json!({"name": "sum", "arguments": {"a": 1, "b": 2}}), RequestOptions::default())
        .unwrap();
    assert_eq!(r["structuredContent"], json!({"sum": 3}));
    assert_eq!(r["content"][0]["text"], "{\"sum\":3}");
    let mut w = World::new(ProtocolVersion::V2025_03_26);
    let r = w
        .call("tools/call", &json!({"name": "sum", "arguments": {"a": 1, "b": 2}}), RequestOptions::default())
        .unwrap();
    assert!(r.get("structuredContent").is_none(), "2025-03-26 has no structured output: {r}");
    assert_eq!(r["content"][0]["text"], "{\"sum\":3}");
}

#[test]
fn state_is_per_session() {
    let mut w = World::new(ProtocolVersion::V2025_06_18);
    for expected in ["1", "2"] {
        let r = w.call("tools/call", &json!({"name": "count"}), RequestOptions::default()).unwrap();
        assert_eq!(r["content"][0]["text"], expected);
    }
    let mut other = World::new(ProtocolVersion::V2025_06_18);
    let r = other.call("tools/call", &json!({"name": "count"}), RequestOptions::default()).unwrap();
    assert_eq!(r["content"][0]["text"], "1");
}

#[test]
fn a_deferred_call_reports_progress_and_answers_later() {
    let mut w = World::new(ProtocolVersion::V2025_11_25);
    let raw = serde_json::value::to_raw_value(&json!({"name": "slow"})).unwrap();
    let id = w.client.send_request(w.now, "tools/call", Some(raw), RequestOptions::default().with_progress()).unwrap();
    w.settle();
    assert!(w.outcome(&id).is_none(), "not answered yet");
    assert!(w.client_events.iter().any(|e| matches!(e, Event::Progress { progress, .. } if *progress == 1.0)));
    let deferred = DEFERRED.with(|d| d.borrow_mut().take()).unwrap();
    assert_eq!(deferred.tool(), "slow");
    w.router.complete_tool(&mut w.server, deferred, Ok(CallToolResult::text("done"))).unwrap();
    w.settle();
    assert_eq!(w.outcome(&id).unwrap().unwrap(), json!({"content": [{"type": "text", "text": "done"}]}));
}

#[test]
fn prompts_check_their_arguments_before_the_handler() {
    for version in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut w = World::new(version);
        let list = w.call("prompts/list", &json!({}), RequestOptions::default()).unwrap();
        assert_eq!(list["prompts"][0]["name"], "greet");
        let got = w
            .call("prompts/get", &json!({"name": "greet", "arguments": {"name": "Ada"}}), RequestOptions::default())
            .unwrap();
        assert_eq!(got["messages"][0]["content"]["text"], "Say hello to Ada");
        assert_eq!(got["messages"][0]["role"], "user");
        assert_eq!(got.get("resultType").is_some(), version == ProtocolVersion::V2026_07_28);
        let e = w
            .call("prompts/get", &json!({"name": "greet", "arguments": {"tone": "warm"}}), RequestOptions::default())
            .unwrap_err();
        assert_eq!(e, json!({"code": -32602, "message": "Missing required argument \"name\" for prompt greet"}));
        let e = w.call("prompts/get", &json!({"name": "nope"}), RequestOptions::default()).unwrap_err();
        assert_eq!(e, json!({"code": -32602, "message": "Unknown prompt: nope"}));
        let e = w
            .call("prompts/get", &json!({"name": "greet", "arguments": {"name": "error"}}), RequestOptions::default())
            .unwrap_err();
        assert_eq!(e, json!({"code": -32603, "message": "cannot greet that"}));
    }
}

#[test]
fn a_typed_prompt_reads_its_arguments_into_its_type() {
    #[derive(Deserialize)]
    struct Review {
        code: String,
        focus: Option<String>,
    }
    let prompt = Prompt::new("review")
        .with_argument(PromptArgument::required("code"))
        .with_argument(PromptArgument::optional("focus"));
    let router = Router::<u32>::builder()
        .typed_prompt(prompt, |_ctx, args: Review| {
            let text = format!("{} / {}", args.code, args.focus.unwrap_or_default());
            let message = PromptMessage::new(crate::schema::Role::User, crate::schema::ContentBlock::text(text));
            Ok(GetPromptResult::new(vec![message]))
        })
        .build();
    let mut w = World::with(ProtocolVersion::V2025_11_25, router);
    let got = w
        .call(
            "prompts/get",
            &json!({"name": "review", "arguments": {"code": "x", "focus": "y"}}),
            RequestOptions::default(),
        )
        .unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "x / y");
    let got = w
        .call("prompts/get", &json!({"name": "review", "arguments": {"code": "x"}}), RequestOptions::default())
        .unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "x / ");
    // The required one, checked before the type is read.
    let e = w.call("prompts/get", &json!({"name": "review", "arguments": {}}), RequestOptions::default()).unwrap_err();
    assert_eq!(e["code"], -32602);
    assert!(e["message"].as_str().unwrap().contains("Missing required argument \"code\""), "{e}");
}

#[test]
fn resources_are_read_by_uri_or_template() {
    for version in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let mut w = World::new(version);
        let list = w.call("resources/list", &json!({}), RequestOptions::default()).unwrap();
        assert_eq!(list["resources"][0]["uri"], "file:///readme.md");
        let templates = w.call("resources/templates/list", &json!({}), RequestOptions::default()).unwrap();
        assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "notes://{id}");
        let read = w.call("resources/read", &json!({"uri": "file:///readme.md"}), RequestOptions::default()).unwrap();
        assert_eq!(read["contents"][0]["text"], "# Hello");
        assert_eq!(read.get("ttlMs").is_some(), version == ProtocolVersion::V2026_07_28, "{version}");
        let note = w.call("resources/read", &json!({"uri": "notes://a%20b"}), RequestOptions::default()).unwrap();
        assert_eq!(note["contents"][0]["text"], "note a b");
        let missing = w.call("resources/read", &json!({"uri": "file:///nope"}), RequestOptions::default()).unwrap_err();
        let expected = if version == ProtocolVersion::V2026_07_28 { -32602 } else { -32002 };
        assert_eq!(missing["code"], expected, "{version}");
        assert_eq!(missing["data"]["uri"], "file:///nope");
        let broken =
            w.call("resources/read", &json!({"uri": "notes://broken"}), RequestOptions::default()).unwrap_err();
        assert_eq!(broken, json!({"code": -32603, "message": "note store unavailable"}));
    }
}

#[test]
fn completions_are_checked_against_the_registry_and_capped() {
    let mut w = World::new(ProtocolVersion::V2025_06_18);
    let caps = w.client.server_capabilities().unwrap().clone();
    assert!(caps.completions.is_some() && caps.logging.is_some());
    let ask = |value: &str| json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": value}});
    let r = w.call("completion/complete", &ask("A"), RequestOptions::default()).unwrap();
    assert_eq!(r["completion"]["values"], json!(["Ada", "Alan"]));
    let r = w.call("completion/complete", &ask("Z"), RequestOptions::default()).unwrap();
    assert_eq!(r["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!((r["completion"]["total"].clone(), r["completion"]["hasMore"].clone()), (json!(150), json!(true)));
    let unknown = json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}});
    let e = w.call("completion/complete", &unknown, RequestOptions::default()).unwrap_err();
    assert_eq!(e["message"], "Unknown prompt: nope");
    let template =
        json!({"ref": {"type": "ref/resource", "uri": "notes://{id}"}, "argument": {"name": "id", "value": "G"}});
    let r = w.call("completion/complete", &template, RequestOptions::default()).unwrap();
    assert_eq!(r["completion"]["values"], json!(["Grace"]));
}

#[test]
fn cache_hints_go_out_only_in_the_stateless_era() {
    let mut w = World::new(ProtocolVersion::V2026_07_28);
    let list = w.call("tools/list", &json!({}), RequestOptions::default()).unwrap();
    assert_eq!((list["ttlMs"].clone(), list["cacheScope"].clone()), (json!(60_000), json!("public")));
    let read = w.call("resources/read", &json!({"uri": "file:///readme.md"}), RequestOptions::default()).unwrap();
    assert_eq!(read["cacheScope"], "public");
    let mut w = World::new(ProtocolVersion::V2025_11_25);
    let list = w.call("tools/list", &json!({}), RequestOptions::default()).unwrap();
    assert!(list.get("ttlMs").is_none() && list.get("cacheScope").is_none());
}

#[test]
fn list_all_follows_cursors_through_every_page() {
    use crate::client::{ListAll, ListStep};
    use crate::schema::tools::ListTools;

    for version in ProtocolVersion::ALL {
        let mut w = World::with(version, paged_router());
        let mut all = ListAll::<ListTools>::start(&mut w.client, w.now, 10).unwrap();
        let mut pages = 0;
        let names = loop {
            w.settle();
            let id = all.pending().unwrap().clone();
            let Some(outcome) = w.outcome_raw(&id) else { panic!("no response") };
            pages += 1;
            match all.on_response(&mut w.client, w.now, &id, outcome) {
                ListStep::Continue => {}
                ListStep::Done(tools) => break tools.into_iter().map(|t| t.name).collect::<Vec<_>>(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"], "{version}");
        assert_eq!(pages, 3, "{version}");
        let bad = w.call("tools/list", &json!({"cursor": "forged"}), RequestOptions::default()).unwrap_err();
        assert_eq!(bad, json!({"code": -32602, "message": "Invalid cursor"}));
    }
}

/// Five tools, two per page.
fn paged_router() -> Router<u32> {
    (0..5)
        .fold(Router::<u32>::builder().page_size(2), |builder, i| {
            builder.tool(Tool::new(format!("t{i}"), schema(json!({}))), |_ctx, _: Value| Ok(CallToolResult::text("")))
        })
        .build()
}

#[test]
fn runtime_changes_are_announced_where_negotiated() {
    let router = Router::<u32>::builder().notify_list_changes().build();
    assert_eq!(router.capabilities().tools.unwrap().list_changed, Some(true));
    let mut w = World::with(ProtocolVersion::V2025_06_18, router);
    let empty = w.call("tools/list", &json!({}), RequestOptions::default()).unwrap();
    assert_eq!(empty["tools"], json!([]));
    let change =
        w.router.add_tool(Tool::new("late", schema(json!({}))), |_ctx, _: Value| Ok(CallToolResult::text("here")));
    change.notify(&mut w.server).unwrap();
    w.settle();
    assert!(w
        .client_events
        .iter()
        .any(|e| matches!(e, Event::Notification { method, .. } if method == "notifications/tools/list_changed")));
    let r = w.call("tools/call", &json!({"name": "late"}), RequestOptions::default()).unwrap();
    assert_eq!(r["content"][0]["text"], "here");
    assert!(w.router.remove_tool("late").is_some());
    assert!(w.router.remove_tool("late").is_none());
    let e = w.call("tools/call", &json!({"name": "late"}), RequestOptions::default()).unwrap_err();
    assert_eq!(e["message"], "Unknown tool: late");
    // A router that did not advertise listChanged does not notify.
    let mut quiet = World::new(ProtocolVersion::V2025_06_18);
    let change =
        quiet.router.add_tool(Tool::new("x", schema(json!({}))), |_ctx, _: Value| Ok(CallToolResult::text("")));
    change.notify(&mut quiet.server).unwrap();
    quiet.settle();
    assert!(!quiet.client_events.iter().any(|e| matches!(e, Event::Notification { .. })));
}

#[test]
fn subscriptions_reach_the_handlers_and_updates_the_client() {
    let router = Router::<u32>::builder()
        .resource(Resource::new("file:///a.txt", "a"), |_ctx, uri, _| {
            Ok(vec![TextResourceContents::new(uri, "a").into()])
        })
        .subscriptions(
            |ctx, _uri| {
                *ctx.state() += 1;
                Ok(())
            },
            |ctx, _uri| {
                *ctx.state() -= 1;
                Ok(())
            },
        )
        .build();
    assert_eq!(router.capabilities().resources.unwrap().subscribe, Some(true));
    let mut w = World::with(ProtocolVersion::V2025_06_18, router);
    assert_eq!(
        w.call("resources/subscribe", &json!({"uri": "file:///a.txt"}), RequestOptions::default()).unwrap(),
        json!({})
    );
    assert_eq!(w.state, 1);
    let e = w.call("resources/subscribe", &json!({"uri": "file:///nope"}), RequestOptions::default()).unwrap_err();
    assert_eq!(e["code"], -32002);
    w.router.resource_updated(&mut w.server, "file:///a.txt").unwrap();
    w.settle();
    let updated = w.client_events.iter().any(|e| {
        matches!(e, Event::Notification { method, params: Some(p) }
        if method == "notifications/resources/updated" && p.get().contains("file:///a.txt"))
    });
    assert!(updated);
    w.call("resources/unsubscribe", &json!({"uri": "file:///a.txt"}), RequestOptions::default()).unwrap();
    assert_eq!(w.state, 0);
}

#[test]
fn list_and_call_snapshots_per_revision() {
    for version in ProtocolVersion::ALL {
        let mut w = World::new(version);
        let mut out = String::new();
        for (method, params) in [
            ("tools/list", json!({})),
            ("prompts/list", json!({})),
            ("resources/list", json!({})),
            ("tools/call", json!({"name": "sum", "arguments": {"a": 20, "b": 22}})),
        ] {
            let r = w.call(method, &params, RequestOptions::default()).unwrap();
            out.push_str(&format!("{method}: {}\n", serde_json::to_string(&r).unwrap()));
        }
        insta::assert_snapshot!(format!("sample_server_{}", version.as_str().replace('-', "_")), out);
    }
}

#[test]
fn a_tool_asks_for_input_and_the_client_answers_in_rounds() {
    use crate::client::{Handlers, MrtrCall, MrtrStep};
    use crate::schema::elicitation::{ElicitAction, ElicitResult};
    use crate::schema::mrtr::{InputRequest, InputResponse};

    let confirm = || -> InputRequest {
        serde_json::from_value(json!({"method": "elicitation/create", "params": {"mode": "form", "message": "Deploy?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}))
        .unwrap()
    };
    let router = Router::<u32>::builder()
        .tool(Tool::new("deploy", schema(json!({}))), move |ctx, _: Value| {
            let answer = ctx.input_responses().and_then(|r| r.get("confirm"));
            match answer {
                Some(InputResponse::Elicit(r)) if r.action == ElicitAction::Accept => {
                    assert_eq!(ctx.request_state(), Some("s1"));
                    Ok(CallToolResult::text("deployed"))
                }
                Some(_) => Ok(CallToolResult::text("cancelled")),
                None => {
                    assert!(ctx.require_input([("confirm".to_owned(), confirm())].into(), Some("s1".into())));
                    Ok(CallToolResult::text("ignored"))
                }
            }
        })
        .build();
    let mut w = World::with(ProtocolVersion::V2026_07_28, router);
    let handlers = Handlers::default().with_elicitation(false, |params| {
        assert_eq!(params.message(), Some("Deploy?"));
        Ok(ElicitResult::accept([("ok".to_owned(), json!(true))].into()))
    });
    let params = json!({"name": "deploy", "arguments": {}}).as_object().unwrap().clone();
    let mut call = MrtrCall::start(&mut w.client, w.now, "tools/call", params, 3).unwrap();
    let first = call.pending().clone();
    let result = w.finish_mrtr(&mut call, &handlers);
    assert_eq!(call.rounds(), 1);
    assert_ne!(call.pending(), &first, "the retry has a new id");
    let result: Value = serde_json::from_str(result.unwrap().get()).unwrap();
    assert_eq!(result["content"][0]["text"], "deployed");

    // Without an elicitation handler the client cannot answer: the call fails, not loops.
    let params = json!({"name": "deploy"}).as_object().unwrap().clone();
    let mut call = MrtrCall::start(&mut w.client, w.now, "tools/call", params, 3).unwrap();
    w.settle();
    let id = call.pending().clone();
    let outcome = w.outcome_raw(&id).unwrap();
    let step = call.on_response(&mut w.client, w.now, &Handlers::default(), &id, outcome);
    assert!(matches!(
        step,
        MrtrStep::Done(Err(crate::session::CallError::Local(crate::session::LocalError::InputRefused { .. })))
    ));
}

#[test]
fn a_blocking_tool_asks_in_rounds_in_the_stateless_era() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use crate::client::{Handlers, MrtrCall};
    use crate::schema::elicitation::{Elicit, ElicitRequestParams, ElicitResult};
    use crate::schema::roots::{ListRoots, Root};

    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let router = Router::<u32>::builder()
        .blocking_tool(Tool::new("survey", schema(json!({}))), move |job, _: Value| {
            counted.fetch_add(1, Ordering::Relaxed);
            let to_text = |e: crate::session::CallError| ToolError::execution(e.to_string());
            let roots = job.ask::<ListRoots>(&Default::default()).map_err(to_text)?;
            let question: ElicitRequestParams = serde_json::from_value(json!({"mode": "form", "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}))
            .unwrap();
            let answer = job.ask::<Elicit>(&question).map_err(to_text)?;
            let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
            Ok(CallToolResult::text(format!("{} roots, {name}", roots.roots.len())))
        })
        .build();
    let mut handlers = Handlers::default().with_elicitation(false, |params| {
        assert_eq!(params.message(), Some("Name?"));
        Ok(ElicitResult::accept([("name".to_owned(), json!("Ada"))].into()))
    });
    handlers.add_root(Root::new("file:///work"));
    let mut w = World::with_client(ProtocolVersion::V2026_07_28, router, handlers.capabilities());
    let params = json!({"name": "survey", "arguments": {}}).as_object().unwrap().clone();
    let mut call = MrtrCall::start(&mut w.client, w.now, "tools/call", params, 5).unwrap();
    let result = w.finish_mrtr(&mut call, &handlers);
    let result: Value = serde_json::from_str(result.unwrap().get()).unwrap();
    assert_eq!(result["content"][0]["text"], "1 roots, \"Ada\"");
    assert_eq!(call.rounds(), 2, "one round per ask");
    assert_eq!(runs.load(Ordering::Relaxed), 3, "the job runs once per round");

    // A client without elicitation gets -32021 naming it (spec 2026-07-28, basic/index), not an
    // input request it cannot answer, whatever the tool made of the failed ask.
    let mut bare = Handlers::default();
    bare.add_root(Root::new("file:///work"));
    let router = Router::<u32>::builder()
        .blocking_tool(Tool::new("ask", schema(json!({}))), |job, _: Value| {
            let question: ElicitRequestParams = serde_json::from_value(
                json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
            )
            .unwrap();
            job.ask::<Elicit>(&question).map_err(|e| ToolError::execution(e.to_string()))?;
            Ok(CallToolResult::text("unreachable"))
        })
        .build();
    let mut w = World::with_client(ProtocolVersion::V2026_07_28, router, bare.capabilities());
    let refused = w.call("tools/call", &json!({"name": "ask"}), RequestOptions::default()).unwrap_err();
    assert_eq!(refused["code"], -32021, "{refused}");
    assert_eq!(refused["data"], json!({"requiredCapabilities": {"elicitation": {}}}), "{refused}");
}

#[test]
fn the_validation_table() {
    let tool_error = |args: Value| (json!({"name": "forecast", "arguments": args}), true);
    let table: Vec<(&str, &str, (Value, bool), &str)> = vec![
        ("missing required", "tools/call", tool_error(json!({})), "missing required property \"city\""),
        ("wrong type", "tools/call", tool_error(json!({"city": 7})), "\"city\": expected a string, got a number"),
        ("too short", "tools/call", tool_error(json!({"city": "X"})), "\"city\": must be at least 2 characters long"),
        ("out of range", "tools/call", tool_error(json!({"city": "Oslo", "days": 30})), "\"days\": must be at most 14"),
        (
            "not an integer",
            "tools/call",
            tool_error(json!({"city": "Oslo", "days": 1.5})),
            "\"days\": expected an integer",
        ),
        (
            "extra field",
            "tools/call",
            tool_error(json!({"city": "Oslo", "wind": true})),
            "unexpected property \"wind\"",
        ),
        (
            "wrong enum value",
            "tools/call",
            tool_error(json!({"city": "Oslo", "units": "kelvin"})),
            "\"units\": must be one of \"metric\", \"imperial\"",
        ),
        ("unknown tool", "tools/call", (json!({"name": "nope"}), false), "Unknown tool: nope"),
        ("unknown prompt", "prompts/get", (json!({"name": "nope"}), false), "Unknown prompt: nope"),
        (
            "missing prompt argument",
            "prompts/get",
            (json!({"name": "greet"}), false),
            "Missing required argument \"name\" for prompt greet",
        ),
        ("unknown resource", "resources/read", (json!({"uri": "file:///b"}), false), "Resource not found: file:///b"),
        ("bad cursor", "tools/list", (json!({"cursor": "tc1.0.bogus"}), false), "Invalid cursor"),
        ("params of the wrong shape", "tools/call", (json!({"name": 5}), false), "Invalid params for tools/call"),
    ];
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let mut w = World::with(version, forecast_router());
        for (name, method, (params, is_tool_error), expected) in &table {
            let outcome = w.call(method, params, RequestOptions::default());
            let message = match (outcome, is_tool_error) {
                (Ok(r), true) => {
                    assert_eq!(r["isError"], true, "{name}: {r}");
                    r["content"][0]["text"].as_str().unwrap().to_owned()
                }
                (Err(e), false) => {
                    let code = e["code"].as_i64().unwrap();
                    let not_found = if version == ProtocolVersion::V2026_07_28 { -32602 } else { -32002 };
                    let expected_code = if *name == "unknown resource" { not_found } else { -32602 };
                    assert_eq!(code, expected_code, "{name} ({version})");
                    e["message"].as_str().unwrap().to_owned()
                }
                (other, _) => panic!("{name}: unexpected {other:?}"),
            };
            assert!(message.contains(expected), "{name} ({version}): {message:?} lacks {expected:?}");
        }
    }
}

/// A strict tool, a prompt and a resource: the validation table's server.
fn forecast_router() -> Router<u32> {
    let strict = schema(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 2},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "units": {"enum": ["metric", "imperial"]}
        },
        "required": ["city"],
        "additionalProperties": false
    }));
    Router::<u32>::builder()
        .tool(Tool::new("forecast", strict), |_ctx, _: Value| Ok(CallToolResult::text("sunny")))
        .prompt(greet_prompt(), |_ctx, _| Ok(GetPromptResult::new(vec![])))
        .resource(Resource::new("file:///a", "a"), |_ctx, uri, _| Ok(vec![TextResourceContents::new(uri, "").into()]))
        .build()
}

#[test]
fn content_a_revision_lacks_reaches_its_clients_as_text() {
    use crate::schema::{AudioContent, ContentBlock, ResourceLink};
    let blocks = || {
        vec![
            ContentBlock::Audio(AudioContent::new("UklGRg==", "audio/wav")),
            ContentBlock::ResourceLink(Box::new(ResourceLink::new("file:///notes.md", "notes"))),
            ContentBlock::text("plain"),
        ]
    };
    let router = || {
        Router::<u32>::builder()
            .tool(Tool::new("media", schema(json!({}))), move |_ctx, _: Value| {
                let mut result = CallToolResult::text("");
                result.content = blocks();
                Ok(result)
            })
            .build()
    };
    let kinds = |version: ProtocolVersion| -> Vec<String> {
        let mut w = World::with(version, router());
        let result = w.call("tools/call", &json!({"name": "media"}), RequestOptions::default()).unwrap();
        result["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(kinds(ProtocolVersion::V2024_11_05), ["text", "text", "text"], "no audio, no links in 2024-11-05");
    assert_eq!(kinds(ProtocolVersion::V2025_03_26), ["audio", "text", "text"], "audio from 2025-03-26");
    assert_eq!(kinds(ProtocolVersion::V2025_06_18), ["audio", "resource_link", "text"], "links from 2025-06-18");
    let mut old = World::with(ProtocolVersion::V2024_11_05, router());
    let result = old.call("tools/call", &json!({"name": "media"}), RequestOptions::default()).unwrap();
    assert_eq!(result["content"][1]["text"], "notes: file:///notes.md", "{result}");
}

/// Async tools, prompts and resources, run inline (no adapter spawns them).
#[path = "tests_async.rs"]
mod async_handlers;
