//! The core as a host without `std` runs it: `talaria_core::time::Instant` is a
//! `Timestamp` the host builds from its own counter, and a client session and a server
//! endpoint talk over a hand-carried byte pipe. Runs only with the `std` feature off:
//!
//! ```text
//! cargo test -p talaria-core --no-default-features --test no_std_host
//! ```
#![cfg(not(feature = "std"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use talaria_core::jsonrpc::RequestId;
use talaria_core::schema::tools::{CallToolResult, Tool};
use talaria_core::schema::Implementation;
use talaria_core::server::{Endpoint, Router};
use talaria_core::session::{
    CallError, Client, ClientConfig, ClientMode, Event, LocalError, Output, RequestOptions, ServerConfig, Session,
};
use talaria_core::time::{Duration, Instant, Timestamp};

/// The host's clock: milliseconds since "boot", as a board's timer would count them.
fn at(ms: u64) -> Instant {
    Timestamp::from_origin(Duration::from_millis(ms))
}

struct Pair {
    client: Session<Client>,
    server: Endpoint<()>,
    router: Router<()>,
    events: Vec<Event>,
}

impl Pair {
    fn new(now: Instant) -> Self {
        let router = Router::<()>::builder()
            .tool(Tool::new("hi", Default::default()), |_ctx, _: serde_json::Value| Ok(CallToolResult::text("hello")))
            .build();
        let config = ServerConfig::new(Implementation::new("server", "1")).with_capabilities(router.capabilities());
        let server = Endpoint::new(config, ());
        let config = ClientConfig::new(Implementation::new("client", "1")).with_mode(ClientMode::Legacy);
        Self { client: Session::<Client>::new(config, now), server, router, events: Vec::new() }
    }

    /// Carries frames both ways until neither side has anything to say.
    fn pump(&mut self, now: Instant) {
        loop {
            let mut moved = false;
            while let Some(out) = self.client.poll_output() {
                match out {
                    Output::Transmit { payload, .. } => {
                        moved = true;
                        self.server.handle_bytes(now, &[payload.as_slice(), b"\n"].concat());
                    }
                    Output::Event(event) => self.events.push(event),
                    _ => {}
                }
            }
            while let Some(out) = self.server.poll_output(&self.router) {
                if let Output::Transmit { payload, .. } = out {
                    moved = true;
                    self.client.handle_bytes(now, &[payload.as_slice(), b"\n"].concat());
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn response(&mut self, wanted: &RequestId) -> Option<Result<String, CallError>> {
        let at = self.events.iter().position(|e| matches!(e, Event::Response { id, .. } if id == wanted))?;
        match self.events.remove(at) {
            Event::Response { outcome, .. } => Some(outcome.map(|raw| raw.get().to_owned())),
            _ => None,
        }
    }
}

#[test]
fn a_session_handshakes_and_calls_a_tool_on_host_timestamps() {
    let mut pair = Pair::new(at(1_000));
    pair.pump(at(1_001));
    assert!(pair.events.iter().any(|e| matches!(e, Event::Ready(_))), "{:?}", pair.events);

    let params = serde_json::value::to_raw_value(&serde_json::json!({"name": "hi"})).unwrap();
    let id = pair.client.send_request(at(1_002), "tools/call", Some(params), RequestOptions::default()).unwrap();
    pair.pump(at(1_003));
    let answer = pair.response(&id).expect("answered").unwrap();
    assert!(answer.contains("hello"), "{answer}");
}

#[test]
fn a_deadline_is_a_host_timestamp_and_fires_when_the_host_says_it_is_past() {
    let mut pair = Pair::new(at(0));
    pair.pump(at(1));
    let options = RequestOptions::default().with_timeout(Duration::from_millis(500));
    let id = pair.client.send_request(at(10), "tools/list", None, options).unwrap();
    // The request never reaches the server: the host's deadline is the only way out.
    while pair.client.poll_output().is_some() {}
    let deadline = pair.client.poll_timeout().expect("a deadline for the request");
    assert_eq!(deadline, at(510));
    pair.client.handle_timeout(at(509));
    assert!(pair.response(&id).is_none(), "not yet due");
    pair.client.handle_timeout(deadline);
    pair.pump(deadline);
    assert!(matches!(pair.response(&id), Some(Err(CallError::Local(LocalError::TimedOut)))));
}
