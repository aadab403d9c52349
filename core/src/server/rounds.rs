//! How a long-running tool asks the client in 2026-07-28, where servers send no requests:
//! multi round-trip requests replayed over [`Job::ask`](super::Job::ask).
//!
//! A job's asks are numbered in the order it makes them. When the job asks for something the
//! client has not answered yet, the ask fails with [`LocalError::InputRequired`], the job
//! returns, and the call is answered with `input_required`: the missing asks as input requests
//! keyed `ask-N`, and every answer so far in `requestState`. The client fulfils the requests
//! and calls again; the job runs again from the start, and this time its first asks find their
//! answers. So the work a job does before its last ask runs once per round.
//!
//! `requestState` is readable by the client. It only holds the client's own answers, so a
//! client that rewrites it changes nothing it could not have answered differently anyway.
//!
//! ```text
//! round 1: ask#0 missing            -> input_required {ask-0}, requestState []
//! round 2: ask#0 = A0, ask#1 missing -> input_required {ask-1}, requestState [A0]
//! round 3: ask#0 = A0, ask#1 = A1    -> the tool's result
//! ```

use crate::alloc_prelude::*;
use crate::sync::Mutex;
use core::sync::atomic::{AtomicUsize, Ordering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::jsonrpc::ErrorObject;
use crate::schema::lifecycle::ClientCapabilities;
use crate::schema::mrtr::{InputRequests, InputRequiredResult, InputResponses};
use crate::schema::{method_info, params_capability, Capability};
use crate::session::{required_capabilities, CallError, LocalError, NotSentReason};

/// What `requestState` carries between a job's rounds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Carried {
    /// The client's answers to the job's asks, in the order asked.
    #[serde(rename = "talariaJobAnswers")]
    answers: Vec<serde_json::Value>,
}

/// One round of a long-running tool call in the stateless era: the answers known so far and
/// the asks still missing one.
#[derive(Debug)]
pub(super) struct Rounds {
    answers: Vec<serde_json::Value>,
    capabilities: Option<ClientCapabilities>,
    asked: AtomicUsize,
    missing: Mutex<InputRequests>,
    /// The first client capability an ask needed and the client had not declared.
    undeclared: Mutex<Option<Capability>>,
}

impl Rounds {
    /// The round a call starts: the answers carried in its `requestState` (if the client
    /// echoed one) followed by its `inputResponses` to the asks that were missing.
    ///
    /// # Errors
    ///
    /// An invalid-params error when `requestState` is not one this server handed out.
    pub(super) fn start(
        state: Option<&str>,
        responses: Option<InputResponses>,
        capabilities: Option<ClientCapabilities>,
    ) -> Result<Self, ErrorObject> {
        let carried = match state {
            Some(text) => serde_json::from_str::<Carried>(text)
                .map_err(|_| ErrorObject::invalid_params("requestState was not issued by this server"))?,
            None => Carried::default(),
        };
        let mut answers = carried.answers;
        if let Some(mut responses) = responses {
            while let Some(answer) = responses.remove(&ask_key(answers.len())) {
                answers.push(serde_json::to_value(answer).unwrap_or_default());
            }
        }
        Ok(Self {
            answers,
            capabilities,
            asked: AtomicUsize::new(0),
            missing: Mutex::new(InputRequests::new()),
            undeclared: Mutex::new(None),
        })
    }

    /// The answer to the job's next ask, or [`LocalError::InputRequired`] after noting the ask
    /// as missing.
    pub(super) fn ask<R: DeserializeOwned>(&self, method: &str, params: &serde_json::Value) -> Result<R, CallError> {
        let index = self.asked.fetch_add(1, Ordering::Relaxed);
        if let Some(answer) = self.answers.get(index) {
            return R::deserialize(answer)
                .map_err(|e| CallError::Local(LocalError::MalformedResponse(format!("{method} result: {e}"))));
        }
        let needed = method_info(method).and_then(|info| info.capability).into_iter();
        for capability in needed.chain(params_capability(method, params)) {
            if !self.capabilities.as_ref().is_some_and(|c| c.has(capability)) {
                self.undeclared.lock().get_or_insert(capability);
                let why = NotSentReason::CapabilityUndeclared { method: method.to_owned(), capability };
                return Err(CallError::Local(LocalError::NotSent(why)));
            }
        }
        let mut params = params.clone();
        if let Some(page) = params.as_object_mut().filter(|_| method == "elicitation/create") {
            // 2026-07-28 has no elicitationId: a server correlates through requestState.
            page.remove("elicitationId");
        }
        let request = super::link::input_request(method, params)?;
        self.missing.lock().insert(ask_key(index), request);
        Err(CallError::Local(LocalError::InputRequired(method.to_owned())))
    }

    /// The error the call ends with if the job asked for something the client did not
    /// declare the capability for: -32021 with `requiredCapabilities` naming it, whatever the
    /// job made of the failed ask.
    pub(super) fn undeclared_capability(&self) -> Option<ErrorObject> {
        let capability = (*self.undeclared.lock())?;
        let required = required_capabilities(capability);
        let message = format!("This request requires the client capability {required}");
        Some(ErrorObject::missing_required_client_capability(message, required))
    }

    /// The `input_required` answer the call ends with, if the job asked for anything the
    /// client has not answered.
    pub(super) fn input_required(&self) -> Option<InputRequiredResult> {
        let missing = core::mem::take(&mut *self.missing.lock());
        if missing.is_empty() {
            return None;
        }
        let carried = Carried { answers: self.answers.clone() };
        Some(InputRequiredResult {
            input_requests: Some(missing),
            request_state: serde_json::to_string(&carried).ok(),
            ..InputRequiredResult::default()
        })
    }
}

/// The key of the job's `index`th ask among the input requests.
fn ask_key(index: usize) -> String {
    format!("ask-{index}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::roots::ListRootsResult;

    fn responses(pairs: Vec<(&str, serde_json::Value)>) -> InputResponses {
        pairs.into_iter().map(|(k, v)| (k.to_owned(), serde_json::from_value(v).unwrap())).collect()
    }

    fn with_roots() -> Option<ClientCapabilities> {
        serde_json::from_value(json!({"roots": {}})).ok()
    }

    #[test]
    fn first_round_asks_and_carries_nothing() {
        let rounds = Rounds::start(None, None, with_roots()).unwrap();
        let e = rounds.ask::<ListRootsResult>("roots/list", &json!({})).unwrap_err();
        assert!(matches!(e, CallError::Local(LocalError::InputRequired(ref m)) if m == "roots/list"));
        let needed = rounds.input_required().expect("an input request");
        let requests = needed.input_requests.unwrap();
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["ask-0"]);
        assert_eq!(requests["ask-0"].method(), Some("roots/list"));
        assert_eq!(needed.request_state.as_deref(), Some(r#"{"talariaJobAnswers":[]}"#));
    }

    #[test]
    fn later_rounds_replay_answers_in_order() {
        let state = r#"{"talariaJobAnswers":[{"roots":[{"uri":"file:///a"}]}]}"#;
        let answers = responses(vec![("ask-1", json!({"roots": [{"uri": "file:///b"}]}))]);
        let rounds = Rounds::start(Some(state), Some(answers), with_roots()).unwrap();
        let first: ListRootsResult = rounds.ask("roots/list", &json!({})).unwrap();
        let second: ListRootsResult = rounds.ask("roots/list", &json!({})).unwrap();
        assert_eq!(first.roots[0].uri, "file:///a");
        assert_eq!(second.roots[0].uri, "file:///b");
        assert!(rounds.input_required().is_none(), "every ask answered");
        // A third ask is missing: the state carries both answers.
        assert!(rounds.ask::<ListRootsResult>("roots/list", &json!({})).is_err());
        let needed = rounds.input_required().unwrap();
        assert!(needed.input_requests.unwrap().contains_key("ask-2"));
        let carried: serde_json::Value = serde_json::from_str(needed.request_state.as_deref().unwrap()).unwrap();
        assert_eq!(carried["talariaJobAnswers"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn responses_to_keys_not_asked_are_ignored() {
        let answers = responses(vec![("ask-5", json!({"roots": []})), ("other", json!({"roots": []}))]);
        let rounds = Rounds::start(None, Some(answers), with_roots()).unwrap();
        assert!(rounds.ask::<ListRootsResult>("roots/list", &json!({})).is_err(), "ask-0 still missing");
    }

    #[test]
    fn foreign_request_state_is_refused() {
        let e = Rounds::start(Some("opaque-from-elsewhere"), None, with_roots()).unwrap_err();
        assert_eq!(e.code, crate::jsonrpc::ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn undeclared_capability_is_not_asked() {
        let rounds = Rounds::start(None, None, None).unwrap();
        let e = rounds.ask::<ListRootsResult>("roots/list", &json!({})).unwrap_err();
        assert!(
            matches!(
                &e,
                CallError::Local(LocalError::NotSent(NotSentReason::CapabilityUndeclared { method, capability: Capability::Roots }))
                    if method == "roots/list"
            ),
            "{e:?}"
        );
        assert!(rounds.input_required().is_none());
    }
}
