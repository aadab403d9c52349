//! Answers that reach the wrong process: behind a load balancer, a client's response to a
//! server-to-client request (sampling, elicitation, roots) may be posted to a process other
//! than the one whose session asked. That process hands the frames to a [`Relay`], which
//! carries them to every process sharing the sessions; the one whose session waits for them
//! takes them in.
//!
//! It also carries [`Notice`]s, news every process acts on: a resource changed, so each
//! process tells the sessions subscribed to it whose GET stream it holds (one process holds a
//! client's stream, so each session hears once). A notice travels under the session key
//! [`NOTICES`]: session ids are never empty.
//!
//! The core decides what is relayed ([`answers_only`], [`Notice`]); the relay (Redis pub/sub,
//! say) only carries bytes.

use crate::jsonrpc::RequestId;

/// Carries frames between the server processes that share sessions.
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use talaria_core::http::relay::{Deliver, Relay};
///
/// /// Every process in one address space (tests): delivered at once.
/// #[derive(Default)]
/// struct Local(Mutex<Vec<Deliver>>);
///
/// impl Relay for Local {
///     fn publish(&self, session: &str, frames: &[u8]) {
///         for deliver in self.0.lock().unwrap().iter() {
///             deliver(session, frames);
///         }
///     }
///     fn subscribe(&self, deliver: Deliver) {
///         self.0.lock().unwrap().push(deliver);
///     }
/// }
/// ```
pub trait Relay: Send + Sync {
    /// Sends `frames` (one POST body) meant for `session` to every process, this one
    /// included. Best effort: frames that cannot be sent are lost, as a dropped connection
    /// would lose them.
    fn publish(&self, session: &str, frames: &[u8]);

    /// Delivers every process's published frames to `deliver` (session, frames), from a
    /// thread of the relay's own.
    fn subscribe(&self, deliver: Deliver);
}

/// Takes in frames published for a session (see [`Relay::subscribe`]).
pub type Deliver = std::sync::Arc<dyn Fn(&str, &[u8]) + Send + Sync>;

/// The session key under which a [`Notice`] is published: no session has it.
pub const NOTICES: &str = "";

/// News for every process sharing sessions, published under [`NOTICES`].
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::Notice;
///
/// let notice = Notice::ResourceUpdated { uri: "file:///a.txt".into() };
/// assert_eq!(Notice::decode(&notice.encode()), Some(notice));
/// assert_eq!(Notice::decode(b"{\"somethingNew\":1}"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Notice {
    /// The resource at `uri` changed: sessions subscribed to it are told
    /// (`notifications/resources/updated`).
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
}

impl Notice {
    /// The notice as published.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A published notice; `None` for bytes that are none (or a kind this version does not
    /// know, from a newer process: ignored).
    #[must_use]
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }
}

/// The ids answered by `body` if it holds only responses (a JSON-RPC response, or a batch of
/// them); `None` for anything else, which is not relayed.
///
/// # Examples
///
/// ```
/// use talaria_core::http::relay::answers_only;
/// use talaria_core::jsonrpc::RequestId;
///
/// let ids = answers_only(br#"{"jsonrpc":"2.0","id":"p1-4","result":{}}"#).unwrap();
/// assert_eq!(ids, [RequestId::String("p1-4".into())]);
/// assert!(answers_only(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
/// assert!(answers_only(b"not json").is_none());
/// ```
#[must_use]
pub fn answers_only(body: &[u8]) -> Option<Vec<RequestId>> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let items = match value {
        serde_json::Value::Array(items) if !items.is_empty() => items,
        serde_json::Value::Object(_) => vec![value],
        _ => return None,
    };
    items
        .into_iter()
        .map(|item| {
            let answer = item.get("method").is_none() && (item.get("result").is_some() || item.get("error").is_some());
            answer.then(|| serde_json::from_value::<RequestId>(item.get("id")?.clone()).ok()).flatten()
        })
        .collect()
}
