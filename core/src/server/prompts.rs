//! Prompt registrations.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use super::context::Context;
use super::error::ToolError;
use crate::jsonrpc::ErrorObject;
use crate::schema::prompts::{GetPromptResult, Prompt};

/// A prompt handler: the arguments (checked against the declared required ones) in, the
/// messages out.
pub(super) type PromptFn<S> =
    Box<dyn Fn(&mut Context<'_, S>, BTreeMap<String, String>) -> Result<GetPromptResult, ToolError> + Send + Sync>;

/// One registered prompt.
pub(super) struct PromptEntry<S> {
    pub(super) prompt: Prompt,
    pub(super) get: PromptFn<S>,
}

impl<S> PromptEntry<S> {
    /// The -32602 answer for the first required argument missing from `arguments`.
    pub(super) fn missing_argument(&self, arguments: &BTreeMap<String, String>) -> Option<ErrorObject> {
        let declared = self.prompt.arguments.as_deref().unwrap_or_default();
        declared.iter().find(|a| a.required == Some(true) && !arguments.contains_key(&a.name)).map(|a| {
            ErrorObject::invalid_params(format!(
                "Missing required argument {:?} for prompt {}",
                a.name, self.prompt.name
            ))
        })
    }
}

/// How a handler's failure is answered for methods without an `isError` result: an execution
/// failure is the server's (-32603), a protocol failure is sent as given.
pub(super) fn error_of(e: ToolError) -> ErrorObject {
    match e {
        ToolError::Execution(message) => ErrorObject::internal(message),
        ToolError::Protocol(error) => error,
        ToolError::InputRequired(_) => ErrorObject::internal("input_required is answered to tools/call only"),
    }
}
