//! The typed layers end to end (see [`talaria_tests::typed`]): what the server asks of the
//! client: roots and sampling requests, and multi round-trip (input required) results.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::json;
use talaria_core::client::CallOptions;
use talaria_core::jsonrpc::ErrorCode;
use talaria_core::schema::lifecycle::SamplingCapability;
use talaria_core::schema::roots::{ListRoots, Root};
use talaria_core::schema::sampling::{CreateMessage, CreateMessageRequestParams};
use talaria_core::schema::tools::{CallTool, CallToolRequestParams, ListTools};
use talaria_core::schema::{meta_keys, Capability, PaginatedRequestParams, RequestParams};
use talaria_core::session::{CallError, LocalError, RequestOptions, SendError};
use talaria_core::version::Feature;
use talaria_tests::typed::{
    client_config, default_handlers, legacy_rows, remote, rows_with, sample_router, stateless_rows, text_of, Link,
    Outcomes, ROWS,
};

// ---------------------------------------------------------------------------------------------
// Server-to-client requests
// ---------------------------------------------------------------------------------------------

fn sampling_params() -> CreateMessageRequestParams {
    serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
        "maxTokens": 20
    }))
    .unwrap()
}

#[test]
fn the_server_asks_the_client_for_roots_and_sampling() {
    for row in legacy_rows() {
        let mut link = Link::new(row);
        let roots = Outcomes::new();
        link.server
            .ask::<ListRoots>(link.now, &RequestParams::default(), RequestOptions::default(), roots.sink())
            .unwrap();
        link.settle();
        let got = roots.one().unwrap();
        assert_eq!(got.roots, [Root::new("file:///work").with_name("work")], "{row:?}");

        // Changing the roots tells the server, which then sees the new list.
        let added = link.client.update_roots(|h| h.add_root(Root::new("file:///other"))).unwrap();
        assert!(added);
        link.settle();
        assert_eq!(link.server_notifications("notifications/roots/list_changed").len(), 1, "{row:?}");
        let roots = Outcomes::new();
        link.server
            .ask::<ListRoots>(link.now, &RequestParams::default(), RequestOptions::default(), roots.sink())
            .unwrap();
        link.settle();
        assert_eq!(roots.one().unwrap().roots.len(), 2, "{row:?}");
        // No change, no notification.
        link.client.update_roots(|h| h.add_root(Root::new("file:///other"))).unwrap();
        link.settle();
        assert_eq!(link.server_notifications("notifications/roots/list_changed").len(), 1, "{row:?}");

        // No sampling handler: the client does not declare sampling, so the server may not ask.
        let refused = link.server.ask::<CreateMessage>(link.now, &sampling_params(), RequestOptions::default(), |_| {});
        assert!(
            matches!(refused, Err(SendError::MissingCapability { capability: Capability::Sampling, .. })),
            "{row:?}: {refused:?}"
        );

        // A client that declares sampling without a handler answers -32601.
        let mut config = client_config(row);
        config.capabilities.sampling = Some(SamplingCapability::default());
        let mut liar = Link::with(row, Rc::new(RefCell::new(sample_router(0))), config, default_handlers());
        let answer = Outcomes::new();
        liar.server
            .ask::<CreateMessage>(liar.now, &sampling_params(), RequestOptions::default(), answer.sink())
            .unwrap();
        liar.settle();
        let error = remote(answer.one(), row);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND, "{row:?}");

        // A client with a handler answers.
        let handlers = default_handlers().with_sampling(|params| {
            assert_eq!(params.max_tokens, 20);
            Ok(serde_json::from_value(
                json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}),
            )
            .unwrap())
        });
        let mut sampler = Link::with(row, Rc::new(RefCell::new(sample_router(0))), client_config(row), handlers);
        let answer = Outcomes::new();
        sampler
            .server
            .ask::<CreateMessage>(sampler.now, &sampling_params(), RequestOptions::default(), answer.sink())
            .unwrap();
        sampler.settle();
        let sampled = serde_json::to_value(answer.one().unwrap()).unwrap();
        assert_eq!(sampled["content"]["text"], "Paris", "{row:?}");
    }
    for row in stateless_rows() {
        let mut link = Link::new(row);
        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let refused =
            link.server.ask::<ListRoots>(link.now, &RequestParams::default(), RequestOptions::default(), |_| {});
        assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");
        // Roots changes have no notification in this era: nothing is sent.
        let frames = link.to_server.len();
        assert!(link.client.update_roots(|h| h.add_root(Root::new("file:///other"))).unwrap());
        link.settle();
        assert_eq!(link.to_server.len(), frames, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Multi round-trip requests
// ---------------------------------------------------------------------------------------------

#[test]
fn input_required_results_are_answered_and_retried_transparently() {
    for row in rows_with(Feature::Mrtr) {
        let mut link = Link::new(row);
        let (first_id, outcomes) =
            link.start::<CallTool>(&CallToolRequestParams::new("whereami"), CallOptions::default());
        link.settle();
        let result = outcomes.one().unwrap();
        assert_eq!(text_of(&result), "roots: file:///work", "{row:?}");
        let calls = link.sent_requests("tools/call");
        assert_eq!(calls.len(), 2, "{row:?}: one retry");
        assert_eq!(calls[0]["id"], serde_json::to_value(&first_id).unwrap(), "{row:?}");
        assert_ne!(calls[1]["id"], calls[0]["id"], "{row:?}: the retry has a new id");
        assert_eq!(calls[1]["params"]["requestState"], "round-1", "{row:?}");
        assert_eq!(calls[1]["params"]["inputResponses"]["roots"]["roots"][0]["uri"], "file:///work", "{row:?}");
        assert!(
            calls[1]["params"]["_meta"].get(meta_keys::PROTOCOL_VERSION).is_some(),
            "{row:?}: the retry is stamped"
        );
        assert_eq!(link.client.pending(), 0, "{row:?}");

        // What the client cannot answer fails the call instead of looping.
        match link.call_tool("confirm", json!({})) {
            Err(CallError::Local(LocalError::InputRefused { key, error })) => {
                assert_eq!((key.as_str(), error.code.0), ("ok", -32601), "{row:?}: {error:?}");
            }
            other => panic!("{row:?}: {other:?}"),
        }
        // A server that never stops asking runs into the round limit.
        link.client.set_max_input_rounds(2);
        let before = link.sent_requests("tools/call").len();
        match link.call_tool("needy", json!({})) {
            Err(CallError::Local(LocalError::MalformedResponse(why))) => {
                assert!(why.contains("2 rounds"), "{row:?}: {why}");
            }
            other => panic!("{row:?}: {other:?}"),
        }
        assert_eq!(link.sent_requests("tools/call").len() - before, 3, "{row:?}: the first attempt and two retries");
        assert_eq!(link.client.pending(), 0, "{row:?}");

        // Cancelling by the first attempt's id cancels the retry in flight.
        let args = json!({"defer_after_input": true}).as_object().cloned().unwrap();
        let (origin, outcomes) = link
            .start::<CallTool>(&CallToolRequestParams::new("whereami").with_arguments(args), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().expect("deferred on the retry");
        assert_ne!(serde_json::to_value(deferred.reply().id()).unwrap(), serde_json::to_value(&origin).unwrap());
        link.client.cancel(&origin, Some("stop")).unwrap();
        link.settle();
        assert!(matches!(outcomes.one(), Err(CallError::Local(LocalError::Cancelled { .. }))), "{row:?}");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: the retry was cancelled on the server");
    }
    for row in ROWS.into_iter().filter(|r| !r.has(Feature::Mrtr)) {
        let mut link = Link::new(row);
        let result = link.call_tool("whereami", json!({})).unwrap();
        assert_eq!(text_of(&result), "no input requests in this revision", "{row:?}");
        assert_eq!(link.sent_requests("tools/call").len(), 1, "{row:?}");
    }
}
