//! What a running tool reports about its deferred request (progress, logs, notifications,
//! the end of its SSE stream), taken in by the endpoint: the inputs a [`Link`](super::Link)
//! carries, so that no adapter reaches into the session for them.

use crate::alloc_prelude::*;
use serde_json::value::RawValue;

use super::deferred::Deferred;
use super::endpoint::Endpoint;
use crate::schema::LoggingLevel;
use crate::session::SendError;

impl<S> Endpoint<S> {
    /// Reports progress on the deferred request (dropped if the client did not ask): what a
    /// long-running tool's [`Link`](super::Link) carries.
    ///
    /// # Errors
    ///
    /// As [`Session::progress`](crate::session::Session::progress).
    pub fn deferred_progress(
        &mut self,
        deferred: &Deferred,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), SendError> {
        self.session.progress(deferred.reply(), progress, total, message)
    }

    /// Logs about the deferred request, named after its tool, if the client's level lets it
    /// through; whether it was sent.
    ///
    /// # Errors
    ///
    /// As [`Session::log_for`](crate::session::Session::log_for).
    pub fn deferred_log(
        &mut self,
        deferred: &Deferred,
        level: LoggingLevel,
        data: serde_json::Value,
    ) -> Result<bool, SendError> {
        self.session.log_for(deferred.reply(), level, Some(deferred.tool()), data)
    }

    /// Sends a notification about the deferred request: on its route while it is in flight,
    /// else on the connection. Whether it went.
    pub fn deferred_notify(&mut self, deferred: &Deferred, method: &str, params: Option<Box<RawValue>>) -> bool {
        if self.session.is_in_flight(deferred.reply()) {
            self.session.notify_related(deferred.reply(), method, params).is_ok()
        } else {
            self.session.notify(method, params).is_ok()
        }
    }

    /// Ends the deferred request's SSE response stream early (see
    /// [`Session::close_sse_stream`](crate::session::Session::close_sse_stream)); whether it was ended.
    pub fn deferred_close_sse_stream(&mut self, deferred: &Deferred) -> bool {
        self.session.close_sse_stream(deferred.reply())
    }
}
