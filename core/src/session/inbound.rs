//! Requests from the peer that have not been answered yet.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use super::event::{Route, StreamId};
use crate::jsonrpc::RequestId;
use crate::schema::{LoggingLevel, ProgressToken};

/// One peer request in flight.
#[derive(Debug, Clone)]
pub(super) struct Inflight {
    pub(super) route: Route,
    pub(super) progress_token: Option<ProgressToken>,
    pub(super) last_progress: Option<f64>,
    /// Stateless era: the log level the request asked for.
    pub(super) log_level: Option<LoggingLevel>,
    /// The peer batch this request came in, whose answer waits for it.
    pub(super) batch: Option<u64>,
    /// A `subscriptions/listen` request: notifications sent about it carry its id as the
    /// subscription id.
    pub(super) listen: bool,
}

/// The table of peer requests in flight, with a count per HTTP stream.
#[derive(Debug, Default)]
pub(super) struct Inbound {
    map: BTreeMap<RequestId, Inflight>,
    per_stream: BTreeMap<StreamId, usize>,
}

impl Inbound {
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    pub(super) fn contains(&self, id: &RequestId) -> bool {
        self.map.contains_key(id)
    }

    pub(super) fn get_mut(&mut self, id: &RequestId) -> Option<&mut Inflight> {
        self.map.get_mut(id)
    }

    pub(super) fn insert(&mut self, id: RequestId, inflight: Inflight) {
        if let Route::Stream(s) = inflight.route {
            *self.per_stream.entry(s).or_default() += 1;
        }
        self.map.insert(id, inflight);
    }

    /// Removes a request; the stream is returned when this was its last open request.
    pub(super) fn remove(&mut self, id: &RequestId) -> Option<(Inflight, Option<StreamId>)> {
        let inflight = self.map.remove(id)?;
        let mut done = None;
        if let Route::Stream(s) = inflight.route {
            if let Some(n) = self.per_stream.get_mut(&s) {
                *n -= 1;
                if *n == 0 {
                    self.per_stream.remove(&s);
                    done = Some(s);
                }
            }
        }
        Some((inflight, done))
    }

    /// Whether requests from `stream` are still open.
    pub(super) fn stream_open(&self, stream: StreamId) -> bool {
        self.per_stream.contains_key(&stream)
    }

    /// The ids of the requests that arrived on `stream`.
    pub(super) fn on_stream(&self, stream: StreamId) -> Vec<RequestId> {
        self.map.iter().filter(|(_, f)| f.route == Route::Stream(stream)).map(|(id, _)| id.clone()).collect()
    }

    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.per_stream.clear();
    }
}
