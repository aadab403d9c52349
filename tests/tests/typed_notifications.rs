//! The typed layers end to end (see [`talaria_tests::typed`]): what the server tells the client
//! unasked: list changes, listen streams, resource subscriptions and updates, progress, and
//! logging.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};
use talaria_core::client::{CallOptions, Progress};
use talaria_core::jsonrpc::ErrorCode;
use talaria_core::schema::logging::{SetLevel, SetLevelRequestParams};
use talaria_core::schema::prompts::{GetPromptResult, Prompt};
use talaria_core::schema::resources::{
    Resource, Subscribe, SubscribeRequestParams, Unsubscribe, UnsubscribeRequestParams,
};
use talaria_core::schema::subscriptions::{SubscriptionFilter, SubscriptionsListen, SubscriptionsListenRequestParams};
use talaria_core::schema::tools::{CallTool, CallToolRequestParams, CallToolResult, ListTools, Tool};
use talaria_core::schema::{meta_keys, Implementation, LoggingLevel, PaginatedRequestParams, TextResourceContents};
use talaria_core::server::{self, Router, ToolError};
use talaria_core::session::{CallError, Event, LocalError, Output, SendError, ServerConfig};
use talaria_core::version::Feature;
use talaria_tests::typed::{
    client_config, default_handlers, empty_schema, legacy_rows, remote, rows_with, sample_router, stateless_rows,
    text_of, Link, State, ROWS,
};

// ---------------------------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------------------------

#[test]
fn progress_reaches_the_callback_of_its_call() {
    for row in ROWS {
        let mut link = Link::new(row);
        let reports = Arc::new(Mutex::new(Vec::<Progress>::new()));
        let sink = Arc::clone(&reports);
        let options = CallOptions::default().with_progress(move |p| sink.lock().unwrap().push(p));
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("slow"), options);
        link.settle();
        assert_eq!(text_of(&outcomes.one().unwrap()), "finished", "{row:?}");
        let seen = reports.lock().unwrap().clone();
        let steps: Vec<(f64, Option<f64>)> = seen.iter().map(|p| (p.progress, p.total)).collect();
        assert_eq!(steps, [(1.0, Some(3.0)), (2.0, Some(3.0))], "{row:?}");
        if row.has(Feature::ProgressMessage) {
            let messages: Vec<Option<&str>> = seen.iter().map(|p| p.message.as_deref()).collect();
            assert_eq!(messages, [Some("first"), Some("second")], "{row:?}");
        }
        assert!(!link.client_events.iter().any(|e| matches!(e, Event::Progress { .. })), "{row:?}: all handled");

        // Without the option the server is not asked, and nothing is reported.
        let quiet = link.call_tool("slow", json!({})).unwrap();
        assert_eq!(text_of(&quiet), "no progress asked", "{row:?}");
        assert_eq!(reports.lock().unwrap().len(), 2, "{row:?}");
        assert!(!link
            .to_client
            .iter()
            .any(|m| m["method"] == "notifications/progress" && m["params"]["progress"] == 3.0));
    }
}

#[test]
fn progress_messages_follow_the_revision() {
    // 2024-11-05 has no `message` on progress notifications (Feature::ProgressMessage).
    let row = ROWS[0];
    let mut link = Link::new(row);
    let options = CallOptions::default().with_progress(|_| {});
    let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("slow"), options);
    link.settle();
    outcomes.one().unwrap();
    let progress: Vec<&Value> = link.to_client.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 2);
    for p in progress {
        assert!(p["params"].get("message").is_none(), "2024-11-05 progress carries no message: {p}");
    }
}

// ---------------------------------------------------------------------------------------------
// List changes, listen streams, resource subscriptions and updates
// ---------------------------------------------------------------------------------------------

#[test]
fn list_changes_are_announced_on_the_connection_in_the_legacy_era() {
    for row in legacy_rows() {
        let mut link = Link::new(row);
        assert_eq!(
            link.client.session().server_capabilities().unwrap().tools.as_ref().unwrap().list_changed,
            Some(true)
        );
        let change = link
            .router
            .borrow_mut()
            .add_tool(Tool::new("late_arrival", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("here")));
        link.server.announce(change).unwrap();
        link.settle();
        assert_eq!(link.client_notifications("notifications/tools/list_changed").len(), 1, "{row:?}");
        let list = link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        assert_eq!(list.tools.last().unwrap().name, "late_arrival", "{row:?}");
        assert_eq!(text_of(&link.call_tool("late_arrival", json!({})).unwrap()), "here", "{row:?}");

        let change = link.router.borrow_mut().remove_tool("late_arrival").unwrap();
        link.server.announce(change).unwrap();
        link.settle();
        assert_eq!(link.client_notifications("notifications/tools/list_changed").len(), 2, "{row:?}");

        // A server that did not negotiate listChanged stays quiet.
        let quiet = Rc::new(RefCell::new(
            Router::<State>::builder()
                .tool(Tool::new("only", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")))
                .build(),
        ));
        let mut quiet_link = Link::with(row, Rc::clone(&quiet), client_config(row), default_handlers());
        let change =
            quiet.borrow_mut().add_tool(Tool::new("x", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")));
        let frames = quiet_link.to_client.len();
        quiet_link.server.announce(change).unwrap();
        quiet_link.settle();
        assert_eq!(quiet_link.to_client.len(), frames, "{row:?}: nothing sent without listChanged");
    }
}

#[test]
fn listen_streams_carry_what_they_asked_for_in_the_stateless_era() {
    for row in stateless_rows() {
        let mut link = Link::new(row);
        // Nothing is announced before anyone listens.
        let change = link
            .router
            .borrow_mut()
            .add_tool(Tool::new("early", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")));
        let frames = link.to_client.len();
        link.server.announce(change).unwrap();
        assert!(!link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        link.settle();
        assert_eq!(link.to_client.len(), frames, "{row:?}");

        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["file:///readme.md".into()]),
            ..SubscriptionFilter::default()
        };
        let (listen_id, listen) =
            link.start::<SubscriptionsListen>(&SubscriptionsListenRequestParams::new(filter), CallOptions::default());
        link.settle();
        assert_eq!(listen.count(), 0, "{row:?}: the listen request stays open");
        let acks = link.client_notifications("notifications/subscriptions/acknowledged");
        assert_eq!(acks.len(), 1, "{row:?}");
        assert_eq!(
            acks[0]["notifications"],
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///readme.md"]}),
            "{row:?}"
        );
        let subscription_id = serde_json::to_value(&listen_id).unwrap();
        assert_eq!(acks[0]["_meta"][meta_keys::SUBSCRIPTION_ID], subscription_id, "{row:?}");

        let change = link
            .router
            .borrow_mut()
            .add_tool(Tool::new("late_arrival", empty_schema()), |_ctx, _: Value| Ok(CallToolResult::text("")));
        link.server.announce(change).unwrap();
        let prompts =
            link.router.borrow_mut().add_prompt(Prompt::new("extra"), |_ctx, _| Ok(GetPromptResult::new(vec![])));
        link.server.announce(prompts).unwrap();
        assert!(link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        assert!(!link.server.resource_updated("notes://inbox/1").unwrap(), "{row:?}: not asked for");
        link.settle();
        let changed = link.client_notifications("notifications/tools/list_changed");
        assert_eq!(changed.len(), 1, "{row:?}");
        assert_eq!(changed[0]["_meta"][meta_keys::SUBSCRIPTION_ID], subscription_id, "{row:?}");
        assert!(link.client_notifications("notifications/prompts/list_changed").is_empty(), "{row:?}: not asked for");
        let updated = link.client_notifications("notifications/resources/updated");
        assert_eq!(updated.len(), 1, "{row:?}");
        assert_eq!(updated[0]["uri"], "file:///readme.md", "{row:?}");

        // A listen request lives until it is cancelled: the request timeouts (30 s, and 10 min
        // in all) do not end it.
        link.now += std::time::Duration::from_secs(3600);
        if let Some(deadline) = link.client.poll_timeout() {
            assert!(deadline > link.now, "{row:?}: no deadline within the hour");
        }
        link.client.handle_timeout(link.now);
        link.settle();
        assert_eq!(listen.count(), 0, "{row:?}: still listening");
        assert!(link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        link.settle();
        assert_eq!(link.client_notifications("notifications/resources/updated").len(), 2, "{row:?}");

        // Ending the listen request ends the stream.
        link.client.cancel(&listen_id, None).unwrap();
        link.settle();
        assert!(matches!(listen.one(), Err(CallError::Local(LocalError::Cancelled { .. }))), "{row:?}");
        let frames = link.to_client.len();
        let change = link.router.borrow_mut().remove_tool("late_arrival").unwrap();
        link.server.announce(change).unwrap();
        assert!(!link.server.resource_updated("file:///readme.md").unwrap(), "{row:?}");
        link.settle();
        assert_eq!(link.to_client.len(), frames, "{row:?}: the stream is gone");
    }
}

#[test]
fn resource_updates_reach_only_subscribed_clients() {
    for row in ROWS {
        let router = Rc::new(RefCell::new(sample_router(0)));
        let mut subscribed = Link::with(row, Rc::clone(&router), client_config(row), default_handlers());
        let mut other = Link::with(row, Rc::clone(&router), client_config(row), default_handlers());
        let uri = "file:///readme.md";
        if row.has(Feature::ResourceSubscribe) {
            subscribed.call::<Subscribe>(&SubscribeRequestParams::new(uri)).unwrap();
            assert_eq!(subscribed.server.state().subscribed, [uri], "{row:?}: the handler ran");
            assert_eq!(subscribed.server.subscriptions().collect::<Vec<_>>(), [uri], "{row:?}");
            let unknown = remote(subscribed.call::<Subscribe>(&SubscribeRequestParams::new("file:///nope")), row);
            assert_eq!(unknown.code, ErrorCode::RESOURCE_NOT_FOUND, "{row:?}");
            assert_eq!(subscribed.server.subscriptions().count(), 1, "{row:?}: not tracked");
        } else {
            let refused = subscribed.client.call::<Subscribe>(
                subscribed.now,
                &SubscribeRequestParams::new(uri),
                CallOptions::default(),
                |_| {},
            );
            assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");
            let filter =
                SubscriptionFilter { resource_subscriptions: Some(vec![uri.into()]), ..SubscriptionFilter::default() };
            let _listen = subscribed
                .start::<SubscriptionsListen>(&SubscriptionsListenRequestParams::new(filter), CallOptions::default());
            subscribed.settle();
        }
        assert!(subscribed.server.resource_updated(uri).unwrap(), "{row:?}");
        assert!(!other.server.resource_updated(uri).unwrap(), "{row:?}");
        assert!(!subscribed.server.resource_updated("notes://a/b").unwrap(), "{row:?}");
        subscribed.settle();
        other.settle();
        let got = subscribed.client_notifications("notifications/resources/updated");
        assert_eq!(got.len(), 1, "{row:?}");
        assert_eq!(got[0]["uri"], uri, "{row:?}");
        assert!(other.client_notifications("notifications/resources/updated").is_empty(), "{row:?}");

        if row.has(Feature::ResourceSubscribe) {
            subscribed.call::<Unsubscribe>(&UnsubscribeRequestParams::new(uri)).unwrap();
            assert!(subscribed.server.state().subscribed.is_empty(), "{row:?}");
            assert!(!subscribed.server.resource_updated(uri).unwrap(), "{row:?}: unsubscribed");
        }
    }
}

#[test]
fn a_refused_subscription_gets_no_updates() {
    for row in rows_with(Feature::ResourceSubscribe) {
        let router = Router::<State>::builder()
            .resource(Resource::new("file:///secret", "secret"), |_ctx, uri, _| {
                Ok(vec![TextResourceContents::new(uri, "").into()])
            })
            .subscriptions(|_ctx, _uri| Err(ToolError::execution("not for you")), |_ctx, _uri| Ok(()))
            .build();
        let mut link = Link::with(row, Rc::new(RefCell::new(router)), client_config(row), default_handlers());
        let refused = remote(link.call::<Subscribe>(&SubscribeRequestParams::new("file:///secret")), row);
        assert_eq!(refused.message, "not for you", "{row:?}");
        assert_eq!(link.server.subscriptions().count(), 0, "{row:?}: a refused subscription is not tracked");
        assert!(!link.server.resource_updated("file:///secret").unwrap(), "{row:?}");
    }
}

#[test]
fn a_subscription_inside_a_batch_is_tracked() {
    // 2025-03-26 is the one revision with batches: the answer goes out inside an array.
    let router = sample_router(0);
    let config = ServerConfig::new(Implementation::new("typed-server", "2.0")).with_capabilities(router.capabilities());
    let mut server = server::Endpoint::new(config, State::default());
    let now = Instant::now();
    server.handle_bytes(
        now,
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
[{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///readme.md"}},{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///nope"}}]
"#,
    );
    let mut frames = Vec::new();
    while let Some(out) = server.poll_output(&router) {
        if let Output::Transmit { payload, .. } = out {
            frames.push(serde_json::from_slice::<Value>(&payload).unwrap());
        }
    }
    let batch = frames.last().unwrap().as_array().expect("a batch reply");
    assert_eq!(batch.len(), 2);
    assert_eq!(server.subscriptions().collect::<Vec<_>>(), ["file:///readme.md"]);
    assert_eq!(server.state().subscribed, ["file:///readme.md"]);
    assert!(server.resource_updated("file:///readme.md").unwrap());
}

// ---------------------------------------------------------------------------------------------
// Logging
// ---------------------------------------------------------------------------------------------

fn logs(events: &[Event]) -> Vec<(LoggingLevel, Option<String>, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Log(log) => Some((log.level, log.logger.clone(), log.data.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn handler_logs_follow_the_level_the_client_chose() {
    for row in legacy_rows() {
        let mut link = Link::new(row);
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: true, error sent: true", "{row:?}");
        let seen = logs(&link.client_events);
        assert_eq!(seen.len(), 2, "{row:?}");
        assert_eq!(seen[0], (LoggingLevel::Info, Some("noisy".into()), json!("an info line")), "{row:?}");

        link.call::<SetLevel>(&SetLevelRequestParams::new(LoggingLevel::Warning)).unwrap();
        assert!(
            link.server_events.iter().any(|e| matches!(e, Event::LogLevelChanged(LoggingLevel::Warning))),
            "{row:?}"
        );
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: false, error sent: true", "{row:?}");
        assert_eq!(logs(&link.client_events).len(), 3, "{row:?}");
    }
    for row in stateless_rows() {
        // No level in the request's `_meta`: no logs.
        let mut link = Link::new(row);
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: false, error sent: false", "{row:?}");
        assert!(logs(&link.client_events).is_empty(), "{row:?}");
        let refused = link.client.call::<SetLevel>(
            link.now,
            &SetLevelRequestParams::new(LoggingLevel::Debug),
            CallOptions::default(),
            |_| {},
        );
        assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");

        // The level the client asks for on every request.
        let mut config = client_config(row);
        config.log_level = Some(LoggingLevel::Warning);
        let mut link = Link::with(row, Rc::new(RefCell::new(sample_router(0))), config, default_handlers());
        let said = link.call_tool("noisy", json!({})).unwrap();
        assert_eq!(text_of(&said), "info sent: false, error sent: true", "{row:?}");
        assert_eq!(logs(&link.client_events), [(LoggingLevel::Error, Some("noisy".into()), json!({"oops": 1}))]);
    }
}
