//! The typed client layer: calls that know their result type, following list cursors, and
//! answering what a server asks of the client (roots, sampling, elicitation).
//!
//! Still sans-IO: [`Session::call`] sends a typed request and returns a [`Call`] that decodes the
//! [`Event::Response`](crate::session::Event::Response) the session later emits for it;
//! [`ListAll`] walks a paginated list page by page. Blocking and async handles over these
//! belong to the adapters.
//!
//! # Examples
//!
//! ```
//! use std::time::Instant;
//! use talaria_core::client::Call;
//! use talaria_core::schema::{tools::ListTools, Implementation, PaginatedRequestParams};
//! use talaria_core::session::{Client, ClientConfig, ClientMode, RequestOptions, Session};
//!
//! let now = Instant::now();
//! let config = ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy);
//! let mut client = Session::<Client>::new(config, now);
//! let call: Call<ListTools> = client.call(now, &PaginatedRequestParams::default(), RequestOptions::default()).unwrap();
//! // ... later, when `Event::Response { id, outcome }` with `id == *call.id()` arrives:
//! let raw = serde_json::value::to_raw_value(&serde_json::json!({"tools": []})).unwrap();
//! let tools = call.outcome(Ok(raw)).unwrap();
//! assert!(tools.tools.is_empty());
//! ```

use crate::alloc_prelude::*;
mod endpoint;
mod ext_tasks;
mod handlers;
mod list_all;
mod mrtr;
mod structured;

use crate::time::Instant;
use core::marker::PhantomData;

use serde_json::value::RawValue;

pub use crate::session::{FrameDirection, FrameObserver};
pub use endpoint::{CallOptions, Completion, Endpoint, Progress, ProgressFn, DEFAULT_MAX_INPUT_ROUNDS};
pub use handlers::{ElicitationCompleteFn, ElicitationFn, Handlers, SamplingFn};
pub use list_all::{ListAll, ListStep};
pub use mrtr::{MrtrCall, MrtrStep};
pub use structured::check_structured_output;

use crate::jsonrpc::RequestId;
use crate::schema::RequestMethod;
use crate::session::{CallError, Client, LocalError, RequestOptions, SendError, Session};

/// A typed request in flight: its id, and the type its result decodes into.
#[must_use = "the call's response must be matched by its id"]
pub struct Call<M> {
    id: RequestId,
    method: PhantomData<fn() -> M>,
}

impl<M> core::fmt::Debug for Call<M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Call").field("id", &self.id).finish()
    }
}

impl<M: RequestMethod> Call<M> {
    /// The id the response will carry.
    #[must_use]
    pub const fn id(&self) -> &RequestId {
        &self.id
    }

    /// Decodes the outcome of this call's `Event::Response`: the typed result, the peer's
    /// error, or a local failure; a result that does not fit is
    /// [`LocalError::MalformedResponse`].
    ///
    /// # Errors
    ///
    /// The call's failure, as described.
    pub fn outcome(&self, outcome: Result<Box<RawValue>, CallError>) -> Result<M::Result, CallError> {
        let raw = outcome?;
        serde_json::from_str(raw.get())
            .map_err(|e| CallError::Local(LocalError::MalformedResponse(format!("{} result: {e}", M::INFO.name))))
    }
}

impl Session<Client> {
    /// Sends request `M` with typed params; match the returned [`Call`] against the
    /// `Event::Response` with its id.
    ///
    /// # Errors
    ///
    /// As [`Session::send_request`], and [`SendError::Encode`] if the params cannot be encoded.
    pub fn call<M: RequestMethod>(
        &mut self,
        now: Instant,
        params: &M::Params,
        options: RequestOptions,
    ) -> Result<Call<M>, SendError> {
        let id = self.send(now, M::INFO.name, params, options)?;
        Ok(Call { id, method: PhantomData })
    }
}

#[cfg(test)]
mod tests;
