//! The typed layers end to end (see [`talaria_tests::typed`]): the handshake, ping, and tools:
//! listing, calling, bad arguments, pagination, and structured output checked against the
//! declared schema.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{json, Value};
use talaria_core::client::CallOptions;
use talaria_core::jsonrpc::ErrorCode;
use talaria_core::schema::tools::ListTools;
use talaria_core::schema::utilities::Ping;
use talaria_core::schema::{PaginatedRequestParams, RequestParams};
use talaria_core::session::{CallError, Event, LocalError, SendError};
use talaria_core::version::Feature;
use talaria_tests::typed::{
    client_config, default_handlers, remote, rows_with, sample_router, text_of, Link, ROWS, TOOLS,
};

// ---------------------------------------------------------------------------------------------
// Handshake, ping, tools
// ---------------------------------------------------------------------------------------------

#[test]
fn handshake_ping_and_tools_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let ready: Vec<_> = link
            .client_events
            .iter()
            .filter_map(|e| match e {
                Event::Ready(info) => Some(info.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(ready.len(), 1, "{row:?}: one Ready event");
        assert_eq!(ready[0].version, row.version, "{row:?}");
        assert_eq!(link.client.session().peer_info().unwrap().name, "typed-server", "{row:?}");
        let handshake = if row.stateless() { "server/discover" } else { "initialize" };
        assert_eq!(link.to_server[0]["method"], handshake, "{row:?}");

        // Ping exists only in the legacy era.
        if row.has(Feature::Ping) {
            link.call::<Ping>(&RequestParams::default()).expect("pong");
        } else {
            let refused = link.client.call::<Ping>(link.now, &RequestParams::default(), CallOptions::default(), |_| {});
            assert!(matches!(refused, Err(SendError::NotInRevision { .. })), "{row:?}: {refused:?}");
            assert_eq!(link.client.pending(), 0, "{row:?}: nothing waits for a refused call");
        }

        let list = link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let names: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, TOOLS, "{row:?}");
        assert_eq!(list.next_cursor, None, "{row:?}: one page");
        assert_eq!(list.tools[0].input_schema["required"], json!(["text"]), "{row:?}");
        assert_eq!(link.server.session().version(), Some(row.version), "{row:?}: the server agrees");

        let echo = link.call_tool("echo", json!({"text": "hi", "times": 3})).unwrap();
        assert_eq!(text_of(&echo), "hihihi", "{row:?}");
        assert!(!echo.is_error(), "{row:?}");

        let weather = link.call_tool("weather", json!({"city": "Oslo"})).unwrap_or_else(|e| panic!("{row:?}: {e}"));
        let structured = json!({"city": "Oslo", "celsius": 21.5});
        let expected = row.has(Feature::StructuredOutput).then(|| structured.clone());
        assert_eq!(weather.structured_content, expected, "{row:?}");
        let text: Value = serde_json::from_str(text_of(&weather)).unwrap();
        assert_eq!(text, structured, "{row:?}: the text block carries the same JSON");

        let exploded = link.call_tool("explode", json!({})).unwrap();
        assert!(exploded.is_error(), "{row:?}");
        assert_eq!(text_of(&exploded), "the tool exploded", "{row:?}");

        let unknown = remote(link.call_tool("nope", json!({})), row);
        assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(unknown.message.contains("nope"), "{row:?}: {unknown:?}");

        let bad = link.call_tool("echo", json!({"text": 5})).unwrap();
        assert!(bad.is_error(), "{row:?}");
        let why = text_of(&bad);
        assert!(why.contains("\"text\"") && why.contains("expected a string"), "{row:?}: {why}");
        let missing = link.call_tool("echo", json!({})).unwrap();
        assert!(missing.is_error() && text_of(&missing).contains("\"text\""), "{row:?}: {missing:?}");

        assert_eq!(link.client.pending(), 0, "{row:?}");
        assert!(
            !link.client_events.iter().any(|e| matches!(e, Event::PeerMisbehaved(_) | Event::Closed { .. })),
            "{row:?}: {:?}",
            link.client_events
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Pagination
// ---------------------------------------------------------------------------------------------

#[test]
fn pagination_walks_every_cursor_in_every_revision() {
    for row in ROWS {
        let router = Rc::new(RefCell::new(sample_router(1)));
        let mut link = Link::with(row, router, client_config(row), default_handlers());
        let mut names = Vec::new();
        let mut pages = 0;
        let mut params = PaginatedRequestParams::default();
        loop {
            let page = link.call::<ListTools>(&params).unwrap();
            pages += 1;
            assert_eq!(page.tools.len(), 1, "{row:?}: page {pages}");
            names.extend(page.tools.into_iter().map(|t| t.name));
            match page.next_cursor {
                Some(cursor) => params = PaginatedRequestParams::after(cursor),
                None => break,
            }
            assert!(pages <= TOOLS.len(), "{row:?}: the cursors never end");
        }
        assert_eq!(names, TOOLS, "{row:?}");
        assert_eq!(pages, TOOLS.len(), "{row:?}");

        let bad = remote(link.call::<ListTools>(&PaginatedRequestParams::after("not-a-cursor")), row);
        assert_eq!(bad.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(bad.message.contains("cursor"), "{row:?}: {bad:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Structured output validation on the client
// ---------------------------------------------------------------------------------------------

#[test]
fn structured_output_is_checked_against_the_declared_schema() {
    for row in rows_with(Feature::StructuredOutput) {
        // Before tools/list the client knows no schema, and takes the result as it is.
        let mut link = Link::new(row);
        let unchecked = link.call_tool("liar", json!({})).unwrap();
        assert_eq!(unchecked.structured_content, Some(json!({"count": "many"})), "{row:?}");

        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        match link.call_tool("liar", json!({})) {
            Err(CallError::Local(LocalError::OutputMismatch { why, result })) => {
                assert!(why.contains("liar") && why.contains("\"count\""), "{row:?}: {why}");
                assert!(why.contains("expected an integer"), "{row:?}: {why}");
                assert!(
                    result.contains(r#""structuredContent":{"count":"many"}"#),
                    "{row:?}: the result is kept: {result}"
                );
            }
            other => panic!("{row:?}: {other:?}"),
        }
        // A result that fits passes; so does a tool error.
        let fits = link.call_tool("weather", json!({"city": "Rome"})).unwrap();
        assert_eq!(fits.structured_content, Some(json!({"city": "Rome", "celsius": 21.5})), "{row:?}");
        let error = link.call_tool("weather", json!({})).unwrap();
        assert!(error.is_error(), "{row:?}: bad arguments are a tool error, not a schema violation");
    }
    for row in ROWS.into_iter().filter(|r| !r.has(Feature::StructuredOutput)) {
        // No structured output in this revision: nothing to check, nothing to demand.
        let mut link = Link::new(row);
        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let liar = link.call_tool("liar", json!({})).unwrap_or_else(|e| panic!("{row:?}: {e}"));
        assert_eq!(liar.structured_content, None, "{row:?}");
        let weather = link.call_tool("weather", json!({"city": "Rome"})).unwrap_or_else(|e| panic!("{row:?}: {e}"));
        assert_eq!(weather.structured_content, None, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Known bugs outside the endpoints
// ---------------------------------------------------------------------------------------------

#[test]
fn tools_list_carries_only_what_the_revision_has() {
    for row in ROWS.into_iter().filter(|r| !r.has(Feature::StructuredOutput)) {
        let mut link = Link::new(row);
        link.call::<ListTools>(&PaginatedRequestParams::default()).unwrap();
        let list = link.to_client.iter().rev().find(|m| m["result"].get("tools").is_some()).unwrap();
        for tool in list["result"]["tools"].as_array().unwrap() {
            assert!(tool.get("outputSchema").is_none(), "{row:?}: {tool}");
        }
    }
}
