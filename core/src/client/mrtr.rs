//! Multi round-trip requests (2026-07-28), driven for the application.

use crate::alloc_prelude::*;
use crate::time::Instant;

use serde_json::value::RawValue;
use serde_json::Value;

use super::Handlers;
use crate::jsonrpc::RequestId;
use crate::schema::mrtr::{InputRequiredResult, InputResponses};
use crate::schema::{result_type_of, JsonObject, ResultType};
use crate::session::{CallError, Client, LocalError, RequestOptions, SendError, Session};

/// A request that may come back `input_required`: the driver answers the server's input
/// requests with the client's [`Handlers`] and retries the request under a new id with the
/// answers and the server's `requestState`, until a final result, up to a number of rounds.
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::client::{Handlers, MrtrCall, MrtrStep};
/// use talaria_core::schema::Implementation;
/// use talaria_core::session::{Client, ClientConfig, ClientMode, Session};
///
/// let now = Instant::now();
/// let mut client = Session::<Client>::new(ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy), now);
/// let params = serde_json::json!({"name": "deploy"}).as_object().unwrap().clone();
/// let mut call = MrtrCall::start(&mut client, now, "tools/call", params, 4).unwrap();
/// let id = call.pending().clone();
/// let done = serde_json::value::to_raw_value(&serde_json::json!({"content": []})).unwrap();
/// let step = call.on_response(&mut client, now, &Handlers::default(), &id, Ok(done));
/// assert!(matches!(step, MrtrStep::Done(Ok(_))));
/// ```
#[derive(Debug)]
pub struct MrtrCall {
    method: String,
    params: JsonObject,
    current: RequestId,
    rounds: usize,
    max_rounds: usize,
}

/// What a response did to an [`MrtrCall`].
#[derive(Debug)]
#[non_exhaustive]
pub enum MrtrStep {
    /// The response was for another request.
    NotMine,
    /// The server needed input; it was answered and the request sent again (see `pending`).
    Retrying,
    /// The final outcome.
    Done(Result<Box<RawValue>, CallError>),
}

impl MrtrCall {
    /// Sends the request.
    ///
    /// # Errors
    ///
    /// As `Session::send`.
    pub fn start(
        session: &mut Session<Client>,
        now: Instant,
        method: &str,
        params: JsonObject,
        max_rounds: usize,
    ) -> Result<Self, SendError> {
        let current = session.send(now, method, &params, RequestOptions::default())?;
        Ok(Self { method: method.to_owned(), params, current, rounds: 0, max_rounds })
    }

    /// The id of the attempt in flight.
    #[must_use]
    pub const fn pending(&self) -> &RequestId {
        &self.current
    }

    /// How many times the server asked for input so far.
    #[must_use]
    pub const fn rounds(&self) -> usize {
        self.rounds
    }

    /// Feeds an `Event::Response`.
    pub fn on_response(
        &mut self,
        session: &mut Session<Client>,
        now: Instant,
        handlers: &Handlers,
        id: &RequestId,
        outcome: Result<Box<RawValue>, CallError>,
    ) -> MrtrStep {
        if *id != self.current {
            return MrtrStep::NotMine;
        }
        let raw = match outcome {
            Ok(raw) if result_type_of(&raw) == Some(ResultType::InputRequired) => raw,
            other => return MrtrStep::Done(other),
        };
        self.rounds += 1;
        let params = match next_round(&self.method, &self.params, &raw, handlers, self.rounds, self.max_rounds) {
            Ok(params) => params,
            Err(e) => return MrtrStep::Done(Err(e)),
        };
        match session.send(now, &self.method, &params, RequestOptions::default()) {
            Ok(next) => {
                self.current = next;
                MrtrStep::Retrying
            }
            Err(e) => MrtrStep::Done(Err(CallError::Local(LocalError::from(e)))),
        }
    }
}

/// The params of the next attempt after an `input_required` result `raw`: the original
/// `params` with the handlers' answers as `inputResponses` and the server's `requestState`.
/// `round` counts the input rounds so far, including this one.
pub(super) fn next_round(
    method: &str,
    params: &JsonObject,
    raw: &RawValue,
    handlers: &Handlers,
    round: usize,
    max_rounds: usize,
) -> Result<JsonObject, CallError> {
    let fail = |why: String| CallError::Local(LocalError::MalformedResponse(why));
    let needed: InputRequiredResult =
        serde_json::from_str(raw.get()).map_err(|e| fail(format!("malformed input_required result: {e}")))?;
    if round > max_rounds {
        return Err(fail(format!("{method} still needed input after {max_rounds} rounds")));
    }
    let mut answers = InputResponses::new();
    for (key, request) in needed.input_requests.iter().flatten() {
        let answer = handlers
            .answer_input(request)
            .map_err(|error| CallError::Local(LocalError::InputRefused { key: key.clone(), error }))?;
        answers.insert(key.clone(), answer);
    }
    let mut params = params.clone();
    params.insert("inputResponses".into(), serde_json::to_value(&answers).unwrap_or(Value::Null));
    match needed.request_state {
        Some(state) => params.insert("requestState".into(), Value::String(state)),
        None => params.remove("requestState"),
    };
    Ok(params)
}
