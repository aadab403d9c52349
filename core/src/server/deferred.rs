//! A reply the handler chose to give later: what the work carries to answer its request.

use crate::alloc_prelude::*;

use super::cancel::CancelFlag;
use crate::session::ReplyToken;

/// An answer the handler chose to give later (see [`Context::defer`](super::Context::defer)).
#[derive(Debug)]
#[must_use = "a deferred request must be completed with `Router::complete_tool`"]
pub struct Deferred {
    pub(super) reply: ReplyToken,
    pub(super) tool: String,
    pub(super) cancel: CancelFlag,
}

impl Deferred {
    /// The reply token, for progress and logs through the session while the work goes on.
    pub const fn reply(&self) -> &ReplyToken {
        &self.reply
    }

    /// The name of the tool being run.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Set when the client cancels the request (through an
    /// [`Endpoint`](super::Endpoint), which watches for `notifications/cancelled`).
    #[must_use]
    pub const fn cancel_flag(&self) -> &CancelFlag {
        &self.cancel
    }
}
