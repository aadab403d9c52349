//! A deterministic two-peer simulator for the sans-IO session.
//!
//! A [`Pair`] wires a [`Session<Client>`] to a [`Session<Server>`] through two seeded pipes, one
//! per direction, on a virtual clock: nothing sleeps, and the only clock read is the one that
//! picks the base [`Instant`]. Each pipe carries stream-framed bytes (every
//! [`Output::Transmit`] payload plus `\n`, fed with `handle_bytes`) and can, with the
//! probabilities of a [`SimConfig`], split what it delivers into random chunks, delay frames,
//! reorder and duplicate whole frames, and kill the connection. The pair records every event
//! each side reports, keeps the peer requests waiting for an answer, and checks the session's
//! invariants as it goes (valid JSON-RPC on the wire, no output after `Event::Closed`, at most
//! one `Event::Response` per id, no id sent twice, no busy loop after `handle_timeout`).
//!
//! Randomness comes from [`SimConfig::seed`]; the constructors read `TALARIA_SIM_SEED` when it is
//! set, and a failing test prints its seed, so `TALARIA_SIM_SEED=<n> cargo test ...` replays it.
//!
//! [`Session<Client>`]: talaria_core::session::Session
//! [`Session<Server>`]: talaria_core::session::Session
//! [`Instant`]: std::time::Instant
//! [`Output::Transmit`]: talaria_core::session::Output::Transmit
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use talaria_core::session::RequestOptions;
//! use talaria_tests::sim::{Pair, Setup, SimConfig};
//!
//! let mut pair = Setup::Stateless.pair(SimConfig::chaos(7));
//! pair.run_until_quiet();
//! assert!(pair.client.ready().is_some());
//! let id = pair.client_request("test/echo", Some(json!({"n": 1})), RequestOptions::default()).unwrap();
//! pair.run_until_quiet();
//! pair.server.answer_all(|req| Ok(json!({"method": req.method})));
//! pair.run_until_quiet();
//! assert!(pair.client.outcome(&id).unwrap().is_ok());
//! ```
#![allow(clippy::panic, reason = "the simulator is test support: a broken invariant fails the test")]

mod pair;
mod peer;
mod pipe;
mod rng;
mod setup;

use serde_json::value::RawValue;
use serde_json::Value;
use talaria_core::jsonrpc::Message;
use talaria_core::session::IncomingRequest;

pub use pair::Pair;
pub use peer::{Logged, Peer, Seen, Sent};
pub use pipe::{Dir, Fate, SimConfig, Tap};
pub use rng::{seed_or, Rng, DEFAULT_SEED, SEED_ENV};
pub use setup::Setup;

/// The method of a JSON-RPC request or notification payload, if it is one.
///
/// # Examples
///
/// ```
/// assert_eq!(talaria_tests::sim::method_of(br#"{"jsonrpc":"2.0","method":"ping","id":1}"#).as_deref(), Some("ping"));
/// assert_eq!(talaria_tests::sim::method_of(b"nonsense"), None);
/// ```
#[must_use]
pub fn method_of(payload: &[u8]) -> Option<String> {
    Message::from_slice(payload).ok()?.method().map(str::to_owned)
}

/// A request frame: `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
///
/// let f = talaria_tests::sim::request_frame(json!(1), "ping", None);
/// assert_eq!(talaria_tests::sim::method_of(&f).as_deref(), Some("ping"));
/// ```
#[must_use]
pub fn request_frame(id: Value, method: &str, params: Option<Value>) -> Vec<u8> {
    let mut obj = serde_json::Map::new();
    obj.insert("jsonrpc".into(), "2.0".into());
    obj.insert("id".into(), id);
    obj.insert("method".into(), method.into());
    if let Some(params) = params {
        obj.insert("params".into(), params);
    }
    Value::Object(obj).to_string().into_bytes()
}

/// The `_meta` a stateless (2026-07-28) client puts on its requests, for `version`, with
/// empty client capabilities and the simulator client's info.
#[must_use]
pub fn stateless_meta(version: &str) -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "sim-client", "version": "1.0"},
    })
}

/// The params of a peer request as JSON (`null` when absent).
#[must_use]
pub fn params_of(request: &IncomingRequest) -> Value {
    request.params.as_ref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null)
}

/// Encodes a JSON value as raw params or a raw result.
///
/// # Panics
///
/// Never: a `serde_json::Value` always serializes.
#[must_use]
pub fn raw(value: &Value) -> Box<RawValue> {
    #[allow(clippy::expect_used, reason = "a serde_json::Value always serializes")]
    serde_json::value::to_raw_value(value).expect("a Value serializes")
}
