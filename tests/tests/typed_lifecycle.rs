//! The typed layers end to end (see [`talaria_tests::typed`]): the life of a call: deferred
//! answers, cancellation, calls made before the handshake, timeouts, and closing the transport.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use serde_json::json;
use talaria_core::client::{self, CallOptions};
use talaria_core::jsonrpc::RequestId;
use talaria_core::schema::tools::{CallTool, CallToolRequestParams, CallToolResult};
use talaria_core::schema::Implementation;
use talaria_core::server::{self, ToolError};
use talaria_core::session::{CallError, Event, LocalError, ServerConfig};
use talaria_tests::typed::{client_config, default_handlers, sample_router, text_of, Link, State, ROWS};

// ---------------------------------------------------------------------------------------------
// Deferred calls and cancellation
// ---------------------------------------------------------------------------------------------

#[test]
fn a_deferred_call_completes_exactly_once_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}: not answered yet");
        assert_eq!((link.client.pending(), link.server.running()), (1, 1), "{row:?}");
        let deferred = link.server.state().deferred.pop().expect("the handler deferred");
        assert_eq!(deferred.tool(), "later", "{row:?}");
        assert!(!deferred.cancel_flag().is_cancelled(), "{row:?}");

        let router = Rc::clone(&link.router);
        link.server.complete_tool(&router.borrow(), deferred, Ok(CallToolResult::text("done late"))).unwrap();
        link.settle();
        let result = outcomes.one().unwrap();
        assert_eq!(text_of(&result), "done late", "{row:?}");
        assert_eq!((link.client.pending(), link.server.running()), (0, 0), "{row:?}");
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}: no second completion");

        // A deferred call can fail as a tool error too.
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();
        link.server.complete_tool(&router.borrow(), deferred, Err(ToolError::execution("gave up"))).unwrap();
        link.settle();
        let failed = outcomes.one().unwrap();
        assert!(failed.is_error() && text_of(&failed) == "gave up", "{row:?}: {failed:?}");
    }
}

#[test]
fn cancelling_a_deferred_call_reaches_its_handler() {
    for row in ROWS {
        let mut link = Link::new(row);
        let (id, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();

        link.client.cancel(&id, Some("no longer needed")).unwrap();
        link.settle();
        match outcomes.one() {
            Err(CallError::Local(LocalError::Cancelled { reason })) => {
                assert_eq!(reason.as_deref(), Some("no longer needed"), "{row:?}");
            }
            other => panic!("{row:?}: {other:?}"),
        }
        let told = link.to_server.iter().filter(|m| m["method"] == "notifications/cancelled").count();
        assert_eq!(told, 1, "{row:?}: the server is told once");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: the handler sees the cancellation");
        assert_eq!((link.client.pending(), link.server.running()), (0, 0), "{row:?}");

        // The late answer goes nowhere.
        let frames = link.to_client.len();
        let router = Rc::clone(&link.router);
        link.server.complete_tool(&router.borrow(), deferred, Ok(CallToolResult::text("too late"))).unwrap();
        link.settle();
        assert_eq!(link.to_client.len(), frames, "{row:?}: nothing is sent for a cancelled request");
        assert_eq!(outcomes.count(), 0, "{row:?}");
        assert_eq!(link.client.session().late_responses(), 0, "{row:?}");

        // Cancelling again, or an id never issued, is a no-op.
        link.client.cancel(&id, None).unwrap();
        link.client.cancel(&RequestId::from(9999), None).unwrap();
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Before the handshake, timeouts, closing
// ---------------------------------------------------------------------------------------------

#[test]
fn calls_made_before_the_handshake_wait_for_it() {
    for row in ROWS {
        let now = Instant::now();
        let router = sample_router(0);
        let server_config =
            ServerConfig::new(Implementation::new("typed-server", "2.0")).with_capabilities(router.capabilities());
        let mut link = Link {
            row,
            router: Rc::new(RefCell::new(router)),
            client: client::Endpoint::new(client_config(row), default_handlers(), now),
            server: server::Endpoint::new(server_config, State::default()),
            now,
            client_events: Vec::new(),
            server_events: Vec::new(),
            to_server: Vec::new(),
            to_client: Vec::new(),
        };
        let (_, outcomes) = link.start::<CallTool>(
            &CallToolRequestParams::new("echo").with_arguments(json!({"text": "early"}).as_object().cloned().unwrap()),
            CallOptions::default(),
        );
        assert_eq!(link.client.pending(), 1, "{:?}", link.row);
        link.settle();
        assert_eq!(text_of(&outcomes.one().unwrap()), "early", "{row:?}");
        assert_eq!(link.client.session().version(), Some(row.version), "{row:?}");
    }
}

#[test]
fn closing_the_transport_fails_every_call_in_flight() {
    for row in ROWS {
        let mut link = Link::new(row);
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), CallOptions::default());
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();
        link.client.handle_closed(link.now);
        link.server.handle_closed(link.now);
        link.settle();
        assert!(matches!(outcomes.one(), Err(CallError::Local(LocalError::Closed { .. }))), "{row:?}");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: a closed server cancels what its handlers hold");
        assert_eq!(link.server.running(), 0, "{row:?}");
        assert!(matches!(link.client_events.last(), Some(Event::Closed { .. })), "{row:?}");
        assert!(matches!(link.server_events.last(), Some(Event::Closed { .. })), "{row:?}");
    }
}

#[test]
fn a_call_that_times_out_completes_once() {
    for row in ROWS {
        let mut link = Link::new(row);
        let options = CallOptions::default().with_timeout(std::time::Duration::from_secs(2));
        let (_, outcomes) = link.start::<CallTool>(&CallToolRequestParams::new("later"), options);
        link.settle();
        let deferred = link.server.state().deferred.pop().unwrap();
        let deadline = link.client.poll_timeout().expect("a deadline");
        assert_eq!(deadline, link.now + std::time::Duration::from_secs(2), "{row:?}");
        link.now = deadline;
        link.client.handle_timeout(link.now);
        link.settle();
        assert!(matches!(outcomes.one(), Err(CallError::Local(LocalError::TimedOut))), "{row:?}");
        assert!(deferred.cancel_flag().is_cancelled(), "{row:?}: the server is told");
        let router = Rc::clone(&link.router);
        link.server.complete_tool(&router.borrow(), deferred, Ok(CallToolResult::text("late"))).unwrap();
        link.settle();
        assert_eq!(outcomes.count(), 0, "{row:?}");
    }
}
