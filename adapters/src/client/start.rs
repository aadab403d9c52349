//! Starting a call: the request sent through the connection, and where its outcome will
//! arrive; for a blocking call, the wait on the calling thread, which carries out the
//! request's own I/O meanwhile where the transport lets it (`caller_runs`).

use std::sync::{Arc, Mutex, PoisonError};

use talaria_core::client::{CallOptions, Endpoint};
use talaria_core::jsonrpc::RequestId;
use talaria_core::schema::RequestMethod;
use talaria_core::session::{CallError, LocalError};

use super::{ClientError, Inner};
use crate::caller_runs::Waiting;
use crate::conn::Conn;
use crate::oneshot;

/// A call sent and not finished yet.
pub(crate) struct Started<T> {
    pub(crate) id: RequestId,
    pub(crate) outcome: oneshot::Receiver<Result<T, CallError>>,
}

/// The outcome of a finished call, flattened.
pub(crate) fn flatten<T>(outcome: Option<Result<T, CallError>>) -> Result<T, ClientError> {
    match outcome {
        Some(result) => result.map_err(ClientError::from),
        None => Err(ClientError::Call(CallError::Local(LocalError::Closed { reason: None }))),
    }
}

/// Sends request `M`, returning its id and where its outcome will arrive.
pub(crate) fn start<M: RequestMethod>(
    inner: &Inner,
    params: &M::Params,
    options: CallOptions,
) -> Result<Started<M::Result>, ClientError>
where
    M::Result: Send + 'static,
{
    start_mapped::<M, _>(inner, params, options, |r| r)
}

/// [`start`], with the result mapped (on the way to the waiter) by `map`.
pub(crate) fn start_mapped<M: RequestMethod, T: Send + 'static>(
    inner: &Inner,
    params: &M::Params,
    options: CallOptions,
    map: impl FnOnce(M::Result) -> T + Send + 'static,
) -> Result<Started<T>, ClientError> {
    start_mapped_for::<M, T>(inner, params, options, map, None)
}

/// Which connection a request waited for is on (see [`Waiting::expect`]).
pub(super) fn conn_key(conn: &Arc<Conn<Endpoint>>) -> crate::caller_runs::ConnKey {
    Arc::as_ptr(conn).addr()
}

impl Waiting {
    /// A blocking call on `conn` that runs its request's job itself, if the transport sends
    /// requests apart (one HTTP POST each); `None` otherwise (a byte stream, whose writer
    /// sends them, or channels).
    pub(super) fn for_conn(conn: &Conn<Endpoint>) -> Option<Self> {
        conn.sends_apart().then(Self::begin)
    }
}

/// A blocking call: [`start_mapped`], and the wait for its outcome on this thread, which
/// runs the request's own I/O meanwhile where the transport lets it (see [`Waiting`]).
pub(super) fn call_here<M: RequestMethod, T: Send + 'static>(
    inner: &Inner,
    params: &M::Params,
    options: CallOptions,
    map: impl FnOnce(M::Result) -> T + Send + 'static,
) -> Result<T, ClientError> {
    let waiting = Waiting::for_conn(&inner.conn);
    let started = start_mapped_for::<M, T>(inner, params, options, map, waiting.as_ref())?;
    if let Some(waiting) = waiting {
        waiting.run();
    }
    flatten(started.outcome.wait())
}

/// [`start_mapped`], telling `waiting` (if the caller waits on this thread) the request's id.
fn start_mapped_for<M: RequestMethod, T: Send + 'static>(
    inner: &Inner,
    params: &M::Params,
    options: CallOptions,
    map: impl FnOnce(M::Result) -> T + Send + 'static,
    waiting: Option<&Waiting>,
) -> Result<Started<T>, ClientError> {
    let (tx, outcome) = oneshot::channel();
    let later = inner.conn.later();
    let progress_later = later.clone();
    // Progress callbacks run outside the connection's lock, in order with everything else.
    let options = options.map_progress(move |callback| {
        let callback = Arc::new(Mutex::new(callback));
        Box::new(move |progress| {
            let callback = Arc::clone(&callback);
            progress_later.run(move || (callback.lock().unwrap_or_else(PoisonError::into_inner))(progress));
        })
    });
    // A waiting thread hears that the call ended once its outcome is delivered (or never
    // will be), if it ends before the request's job reached it.
    let ended = waiting.map(Waiting::ended);
    let done = move |r: Result<M::Result, CallError>| {
        let r = r.map(map);
        later.run(move || {
            tx.send(r);
            drop(ended);
        });
    };
    let conn = conn_key(&inner.conn);
    let id = inner.conn.with_call(|endpoint, now| {
        endpoint.call::<M>(now, params, options, done).inspect(|id| {
            if let Some(waiting) = waiting {
                waiting.expect(conn, id);
            }
        })
    })??;
    Ok(Started { id, outcome })
}
