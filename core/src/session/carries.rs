//! What a transmitted frame carries, as the session built it, so that a transport never parses
//! its own outgoing bytes again to learn what they are.

use crate::alloc_prelude::*;
use crate::jsonrpc::{ErrorCode, Message, RequestId};

/// The `notifications/cancelled` method.
const CANCELLED: &str = "notifications/cancelled";

/// What one [`Output::Transmit`](super::Output::Transmit) frame carries: the kind of message,
/// its id and method. Transports decide from this (which HTTP stream ends, which request a
/// POST answers, which call a cancellation ends) instead of reading the payload back.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::{Message, Request, RequestId, Response};
/// use talaria_core::session::Carries;
///
/// let call: Message = Request::new(7, "tools/call", None::<()>).unwrap().into();
/// let carries = Carries::from(&call);
/// assert_eq!(carries.request_id(), Some(&RequestId::Number(7)));
/// assert_eq!(carries.method(), Some("tools/call"));
/// assert!(!carries.is_response());
///
/// let answer: Message = Response::new(7, &serde_json::json!({})).unwrap().into();
/// assert!(Carries::from(&answer).is_response());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Carries {
    /// A request; its answer is due with this id.
    Request {
        /// The request's id.
        id: RequestId,
        /// Its method.
        method: String,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// For `notifications/cancelled`, the request it cancels.
        cancels: Option<RequestId>,
    },
    /// A successful response.
    Result {
        /// The id of the request it answers.
        id: RequestId,
    },
    /// An error response.
    Error {
        /// The id of the request it answers; `None` for an error about a message that had no
        /// usable id (a parse error, an invalid request).
        id: Option<RequestId>,
        /// The error's code (an HTTP reply's status may follow from it).
        code: ErrorCode,
    },
    /// A batch (2025-03-26): what each of its messages carries, in order.
    Batch(Vec<Self>),
}

impl Carries {
    /// Whether this is a response, or a batch of responses: what a request's HTTP reply is
    /// made of, as opposed to the notifications and requests sent on the way.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::jsonrpc::ErrorCode;
    /// use talaria_core::session::Carries;
    ///
    /// assert!(Carries::Error { id: None, code: ErrorCode::PARSE_ERROR }.is_response());
    /// assert!(!Carries::Notification { method: "notifications/progress".into(), cancels: None }.is_response());
    /// ```
    #[must_use]
    pub fn is_response(&self) -> bool {
        match self {
            Self::Result { .. } | Self::Error { .. } => true,
            Self::Request { .. } | Self::Notification { .. } => false,
            Self::Batch(items) => items.iter().all(Self::is_response),
        }
    }

    /// Whether this is only an error about a message with no usable id (the HTTP request
    /// itself was bad, answered with status 400).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::jsonrpc::{ErrorCode, RequestId};
    /// use talaria_core::session::Carries;
    ///
    /// assert!(Carries::Error { id: None, code: ErrorCode::PARSE_ERROR }.is_undecodable_error());
    /// let answer = Carries::Error { id: Some(RequestId::Number(1)), code: ErrorCode::INTERNAL_ERROR };
    /// assert!(!answer.is_undecodable_error());
    /// ```
    #[must_use]
    pub const fn is_undecodable_error(&self) -> bool {
        matches!(self, Self::Error { id: None, .. })
    }

    /// The code of a lone error response.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::jsonrpc::{ErrorCode, RequestId};
    /// use talaria_core::session::Carries;
    ///
    /// let answer = Carries::Error { id: Some(RequestId::Number(1)), code: ErrorCode::METHOD_NOT_FOUND };
    /// assert_eq!(answer.error_code(), Some(ErrorCode::METHOD_NOT_FOUND));
    /// assert_eq!(Carries::Result { id: RequestId::Number(1) }.error_code(), None);
    /// ```
    #[must_use]
    pub const fn error_code(&self) -> Option<ErrorCode> {
        match self {
            Self::Error { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The id of a lone request.
    #[must_use]
    pub const fn request_id(&self) -> Option<&RequestId> {
        match self {
            Self::Request { id, .. } => Some(id),
            _ => None,
        }
    }

    /// The method of a lone request or notification.
    #[must_use]
    pub fn method(&self) -> Option<&str> {
        match self {
            Self::Request { method, .. } | Self::Notification { method, .. } => Some(method),
            _ => None,
        }
    }

    /// The ids of the requests whose answers are due: the lone request's, or those of the
    /// requests in a batch.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::jsonrpc::RequestId;
    /// use talaria_core::session::Carries;
    ///
    /// let batch = Carries::Batch(vec![
    ///     Carries::Request { id: RequestId::Number(1), method: "ping".into() },
    ///     Carries::Notification { method: "notifications/initialized".into(), cancels: None },
    /// ]);
    /// assert_eq!(batch.answers_due(), vec![RequestId::Number(1)]);
    /// ```
    #[must_use]
    pub fn answers_due(&self) -> Vec<RequestId> {
        match self {
            Self::Request { id, .. } => vec![id.clone()],
            Self::Batch(items) => items.iter().filter_map(Self::request_id).cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// The answers in this frame (a lone response, or the responses of a batch): each id with
    /// whether it is a result (`true`) or an error (`false`).
    pub fn answers(&self) -> impl Iterator<Item = (&RequestId, bool)> {
        let items = match self {
            Self::Batch(items) => items.as_slice(),
            one => core::slice::from_ref(one),
        };
        items.iter().filter_map(|item| match item {
            Self::Result { id } => Some((id, true)),
            Self::Error { id: Some(id), .. } => Some((id, false)),
            _ => None,
        })
    }

    /// The request a `notifications/cancelled` cancels.
    #[must_use]
    pub const fn cancels(&self) -> Option<&RequestId> {
        match self {
            Self::Notification { cancels, .. } => cancels.as_ref(),
            _ => None,
        }
    }
}

impl From<&Message> for Carries {
    fn from(message: &Message) -> Self {
        match message {
            Message::Request(r) => Self::Request { id: r.id.clone(), method: r.method.clone() },
            Message::Notification(n) => Self::Notification { method: n.method.clone(), cancels: cancelled(message) },
            Message::Response(r) => Self::Result { id: r.id.clone() },
            Message::Error(e) => Self::Error { id: e.id.clone(), code: e.error.code },
        }
    }
}

impl From<Message> for Carries {
    /// As `From<&Message>`, moving the id and method out instead of copying them.
    fn from(message: Message) -> Self {
        let cancels = cancelled(&message);
        match message {
            Message::Request(r) => Self::Request { id: r.id, method: r.method },
            Message::Notification(n) => Self::Notification { method: n.method, cancels },
            Message::Response(r) => Self::Result { id: r.id },
            Message::Error(e) => Self::Error { id: e.id, code: e.error.code },
        }
    }
}

impl From<&[Message]> for Carries {
    fn from(batch: &[Message]) -> Self {
        Self::Batch(batch.iter().map(Self::from).collect())
    }
}

/// The request a `notifications/cancelled` message cancels (read from its typed params).
fn cancelled(message: &Message) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    let Message::Notification(n) = message else { return None };
    if n.method != CANCELLED {
        return None;
    }
    serde_json::from_str::<Params>(n.params.as_deref()?.get()).ok().map(|p| p.request_id)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::jsonrpc::{ErrorObject, ErrorResponse, Notification, Request, Response};

    fn messages() -> Vec<Message> {
        vec![
            Request::new("a", "tools/call", Some(json!({"name": "echo"}))).unwrap().into(),
            Notification::new(CANCELLED, Some(json!({"requestId": "a", "reason": "x"}))).unwrap().into(),
            Notification::new("notifications/progress", Some(json!({"progressToken": 1, "progress": 1})))
                .unwrap()
                .into(),
            Response::new(4, &json!({})).unwrap().into(),
            ErrorResponse { id: Some(RequestId::Number(5)), error: ErrorObject::method_not_found("x") }.into(),
            ErrorResponse { id: None, error: ErrorObject::parse_error("bad") }.into(),
        ]
    }

    #[test]
    fn each_kind_is_told_with_its_id_and_method() {
        let carried: Vec<Carries> = messages().into_iter().map(Carries::from).collect();
        assert_eq!(carried[0].request_id(), Some(&RequestId::String("a".into())));
        assert_eq!(carried[0].method(), Some("tools/call"));
        assert_eq!(carried[1].cancels(), Some(&RequestId::String("a".into())));
        assert_eq!(carried[2].cancels(), None);
        assert_eq!(carried[2].method(), Some("notifications/progress"));
        assert_eq!(
            carried.iter().map(Carries::is_response).collect::<Vec<_>>(),
            [false, false, false, true, true, true]
        );
        assert_eq!(
            carried.iter().map(Carries::is_undecodable_error).collect::<Vec<_>>(),
            [false, false, false, false, false, true]
        );
        assert_eq!(carried[3].answers().collect::<Vec<_>>(), [(&RequestId::Number(4), true)]);
        assert_eq!(carried[4].answers().collect::<Vec<_>>(), [(&RequestId::Number(5), false)]);
        assert_eq!(carried[5].answers().count(), 0);
    }

    #[test]
    fn borrowed_and_moved_messages_carry_the_same() {
        for message in messages() {
            assert_eq!(Carries::from(&message), Carries::from(message));
        }
    }

    #[test]
    fn a_batch_lists_its_members() {
        let all = messages();
        let batch = Carries::from(all.as_slice());
        assert!(!batch.is_response(), "a request in it");
        assert_eq!(batch.answers_due(), vec![RequestId::String("a".into())]);
        assert_eq!(batch.answers().count(), 2);
        let replies = Carries::from(&all[3..]);
        assert!(replies.is_response());
        assert_eq!(replies.request_id(), None);
        assert!(!replies.is_undecodable_error(), "only a lone error stands for the whole POST");
    }
}
