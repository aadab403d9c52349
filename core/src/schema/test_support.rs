//! Shared helpers for the schema modules' tests: the official examples and round trips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::jsonrpc::Message;
use crate::schema::{NotificationMethod, RequestMethod};

/// Where the official 2026-07-28 examples are checked in.
pub(crate) const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/spec/2026-07-28/examples/");

/// Every example of one folder (a schema type name), as `(path, JSON)`, sorted by path.
pub(crate) fn examples(folder: &str) -> Vec<(String, Value)> {
    let dir = std::path::Path::new(EXAMPLES).join(folder);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            (path.display().to_string(), serde_json::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no examples in {folder}");
    out
}

/// Decodes `json` as `T` (from text, as a peer's bytes would arrive) and checks that it encodes
/// back to equal JSON.
pub(crate) fn round_trip<T: Serialize + DeserializeOwned>(name: &str, json: &Value) -> T {
    let decoded: T = serde_json::from_str(&json.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(&serde_json::to_value(&decoded).unwrap(), json, "{name}");
    decoded
}

/// [`round_trip`] over every example of `folder`.
pub(crate) fn round_trips<T: Serialize + DeserializeOwned>(folder: &str) -> Vec<T> {
    examples(folder).iter().map(|(name, json)| round_trip(name, json)).collect()
}

/// Decodes `text` as `T` and checks that it encodes back to equal JSON. Unlike [`round_trip`],
/// the members are read in the order they are written (a [`Value`] sorts them), so a tagged
/// union whose tag comes first, as in the official examples, takes its fast path.
pub(crate) fn round_trip_as_written<T: Serialize + DeserializeOwned>(name: &str, text: &str) -> T {
    let decoded: T = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(serde_json::to_value(&decoded).unwrap(), expected, "{name}");
    decoded
}

/// The text of every example of `folder`, as `(path, text)`, sorted by path.
fn example_texts(folder: &str) -> Vec<(String, String)> {
    let read = |(path, _): (String, Value)| {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        (path, text)
    };
    examples(folder).into_iter().map(read).collect()
}

/// [`round_trip_as_written`] over every example of `folder`.
pub(crate) fn round_trips_as_written<T: Serialize + DeserializeOwned>(folder: &str) -> Vec<T> {
    example_texts(folder).iter().map(|(name, text)| round_trip_as_written(name, text)).collect()
}

/// Decodes `text` as a JSON-RPC message.
fn message(name: &str, text: &str) -> Message {
    Message::from_slice(text.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every example of `folder` is an `M` request whose params (absent: `{}`) [`round_trip_as_written`].
pub(crate) fn request_round_trips<M: RequestMethod>(folder: &str) -> Vec<M::Params> {
    let check = |(name, text): &(String, String)| {
        let Message::Request(req) = message(name, text) else { panic!("{name}: not a request") };
        assert_eq!(req.method, M::INFO.name, "{name}");
        round_trip_as_written(name, req.params.as_deref().map_or("{}", RawValue::get))
    };
    example_texts(folder).iter().map(check).collect()
}

/// Every example of `folder` is a response whose result [`round_trip_as_written`]s as `M`'s result.
pub(crate) fn response_round_trips<M: RequestMethod>(folder: &str) -> Vec<M::Result> {
    let check = |(name, text): &(String, String)| {
        let Message::Response(resp) = message(name, text) else { panic!("{name}: not a response") };
        round_trip_as_written(name, resp.result.get())
    };
    example_texts(folder).iter().map(check).collect()
}

/// Every example of `folder` is an `M` notification whose params (absent: `{}`)
/// [`round_trip_as_written`].
pub(crate) fn notification_round_trips<M: NotificationMethod>(folder: &str) -> Vec<M::Params> {
    let check = |(name, text): &(String, String)| {
        let Message::Notification(n) = message(name, text) else { panic!("{name}: not a notification") };
        assert_eq!(n.method, M::INFO.name, "{name}");
        round_trip_as_written(name, n.params.as_deref().map_or("{}", RawValue::get))
    };
    example_texts(folder).iter().map(check).collect()
}
