//! How a handler can fail: [`ToolError`], named [`PromptError`] and [`ResourceError`] where
//! prompts and resources return it.

use crate::alloc_prelude::*;

use crate::jsonrpc::ErrorObject;
use crate::schema::mrtr::InputRequiredResult;

/// How a tool call can fail.
///
/// An [`ToolError::Execution`] failure is the tool's own (bad input, a failed API call): it is
/// reported to the model as a result with `isError: true`, so the model can correct itself. A
/// [`ToolError::Protocol`] failure is the request's: it is answered with a JSON-RPC error.
///
/// # Examples
///
/// ```
/// use talaria_core::server::ToolError;
///
/// let e = ToolError::execution("city not found");
/// assert_eq!(e.to_string(), "city not found");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool ran and failed; the model sees the message.
    #[error("{0}")]
    Execution(String),
    /// The request is wrong; the client gets this JSON-RPC error.
    #[error(transparent)]
    Protocol(ErrorObject),
    /// Not a failure: the tool needs the client's input first (2026-07-28), and the call is
    /// answered with this `input_required` result. `Job::ask` produces it for long-running
    /// tools; outside 2026-07-28 it is answered as an internal error.
    #[error("input required from the client")]
    InputRequired(Box<InputRequiredResult>),
}

/// How a prompt's handler can fail: the same type as [`ToolError`], named for prompts. Both
/// kinds of failure are answered with a JSON-RPC error (an [`ToolError::Execution`] message
/// as an internal error, `-32603`): a prompt has no `isError` result.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::ErrorObject;
/// use talaria_core::server::PromptError;
///
/// let e = PromptError::Protocol(ErrorObject::invalid_params("unknown language: klingon"));
/// assert_eq!(e.to_string(), "unknown language: klingon (code -32602)");
/// ```
pub type PromptError = ToolError;

/// How a resource read can fail: the same type as [`ToolError`], named for resources,
/// answered as a prompt's failure is (see [`PromptError`]).
///
/// # Examples
///
/// ```
/// use talaria_core::server::ResourceError;
///
/// let e = ResourceError::execution("the disk is gone");
/// assert_eq!(e.to_string(), "the disk is gone");
/// ```
pub type ResourceError = ToolError;

impl ToolError {
    /// An execution failure with `message`.
    #[must_use]
    pub fn execution(message: impl Into<String>) -> Self {
        Self::Execution(message.into())
    }
}

impl From<ErrorObject> for ToolError {
    fn from(e: ErrorObject) -> Self {
        Self::Protocol(e)
    }
}
