//! What a running task reaches its connection through ([`Link`], implemented by each
//! adapter), and what async work answers with.

use crate::alloc_prelude::*;
use core::future::Future;
use core::pin::Pin;

use serde_json::value::RawValue;

use super::deferred::Deferred;
use super::error::{PromptError, ResourceError, ToolError};
use crate::schema::mrtr::InputRequest;
use crate::schema::prompts::GetPromptResult;
use crate::schema::tools::CallToolResult;
use crate::schema::{LoggingLevel, ResourceContents};
use crate::session::{CallError, LocalError, NotSentReason};

/// What a running task reaches its connection through. Implemented by each adapter.
pub trait Link: Send + Sync {
    /// Reports progress on the deferred request (dropped if the client did not ask).
    fn progress(&self, deferred: &Deferred, progress: f64, total: Option<f64>, message: Option<String>);
    /// Logs about the deferred request, if the client's level lets it through.
    fn log(&self, deferred: &Deferred, level: LoggingLevel, data: serde_json::Value);
    /// Sends a request about the deferred request to the client (on the deferred request's
    /// route: its HTTP response stream, if it has one) and waits for the answer.
    ///
    /// # Errors
    ///
    /// How the request failed: refused, timed out, cancelled, connection closed.
    fn ask(&self, deferred: &Deferred, method: &str, params: Box<RawValue>) -> Result<Box<RawValue>, CallError>;
    /// [`Link::ask`] for async work: sends the request now and returns the wait for its
    /// answer. The default waits in [`Link::ask`] before returning (it blocks whoever polls):
    /// adapters that run async work on an executor give a real wait.
    fn ask_async(&self, deferred: &Deferred, method: &str, params: Box<RawValue>) -> Answer {
        let answer = self.ask(deferred, method, params);
        Box::pin(core::future::ready(answer))
    }
    /// Ends the deferred request's SSE response stream early so the client reconnects for the
    /// rest (see `Session::close_sse_stream`); returns whether it was ended. The default does
    /// nothing: transports without response streams have nothing to end.
    fn close_sse_stream(&self, _deferred: &Deferred) -> bool {
        false
    }
    /// Sends a notification about the deferred request (on its route while it is in flight,
    /// else on the connection); returns whether it went. The default sends nothing.
    fn notify(&self, _deferred: &Deferred, _method: &str, _params: Option<Box<RawValue>>) -> bool {
        false
    }
    /// Answers the deferred request.
    fn complete(&self, deferred: Deferred, outcome: Result<CallToolResult, ToolError>);
    /// Answers a deferred request that is not a tool call (an async prompt or resource
    /// read). The default drops the answer: only links that run such work need it.
    fn complete_answer(&self, deferred: Deferred, answer: LaterAnswer) {
        let _ = (deferred, answer);
    }
}

/// The answer to a request a running task sent the client ([`Link::ask_async`]).
pub type Answer = Pin<Box<dyn Future<Output = Result<Box<RawValue>, CallError>> + Send>>;

/// The answer to an async prompt or resource read, when it comes.
#[derive(Debug)]
#[non_exhaustive]
pub enum LaterAnswer {
    /// A `prompts/get` answer.
    Prompt(Result<GetPromptResult, PromptError>),
    /// A `resources/read` answer.
    Resource(Result<Vec<ResourceContents>, ResourceError>),
}

/// The error of an ask that is not an input request a server may send (`method` with its
/// params did not read as one).
pub(super) fn not_askable(method: &str, e: &serde_json::Error) -> CallError {
    CallError::Local(LocalError::NotSent(NotSentReason::NotAskable {
        method: method.to_owned(),
        detail: e.to_string(),
    }))
}

/// `method` with `params` as the input request a server posts (a stateless job's round, or a
/// task's `input_required` status); [`not_askable`] if they do not read as one. Every path
/// decodes it from a `Value` here, so a server binary carries one copy of the input requests'
/// decoder.
pub(super) fn input_request(method: &str, params: serde_json::Value) -> Result<InputRequest, CallError> {
    let mut request = serde_json::Map::new();
    request.insert("method".into(), serde_json::Value::String(method.into()));
    request.insert("params".into(), params);
    serde_json::from_value(serde_json::Value::Object(request)).map_err(|e| not_askable(method, &e))
}

/// The error of an ask whose params do not encode.
pub(super) fn unencodable(method: &str, e: &serde_json::Error) -> CallError {
    CallError::Local(LocalError::NotSent(NotSentReason::Unencodable {
        method: method.to_owned(),
        detail: e.to_string(),
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_ask_reads_as_its_input_request_or_is_not_askable() {
        let asked = input_request("sampling/createMessage", json!({"messages": [], "maxTokens": 5})).unwrap();
        let InputRequest::CreateMessage(request) = asked else { panic!("{asked:?}") };
        assert_eq!(request.params.max_tokens, 5);
        let url = json!({"mode": "url", "message": "m", "url": "https://example.com"});
        assert_eq!(input_request("elicitation/create", url).unwrap().method(), Some("elicitation/create"));
        let refused = input_request("sampling/createMessage", json!({"messages": "none"})).unwrap_err();
        let CallError::Local(LocalError::NotSent(NotSentReason::NotAskable { method, detail })) = refused else {
            panic!("{refused:?}")
        };
        assert_eq!(method, "sampling/createMessage");
        assert!(!detail.is_empty());
    }
}
