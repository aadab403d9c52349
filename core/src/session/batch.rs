//! JSON-RPC batches, which MCP allows only in 2025-03-26.
//!
//! A batch from the peer is answered with one array holding the responses to its requests
//! (notifications and responses inside it get none), even when the application answers some
//! of them later: replies are collected until the last one is in. A batch in any other
//! revision, or before the handshake, is refused with a single -32600.

use crate::alloc_prelude::*;
use crate::time::Instant;
use alloc::collections::BTreeMap;

use serde_json::value::RawValue;

use super::event::Route;
use super::{Phase, ProtocolError, RequestOptions, Role, SendError, Session};
use crate::jsonrpc::{encode_batch, ErrorObject, ErrorResponse, Message, Notification, Packet, Request, RequestId};
use crate::version::Feature;

/// One entry of an outgoing batch.
///
/// # Examples
///
/// ```
/// use talaria_core::session::{BatchItem, RequestOptions};
///
/// let items = vec![
///     BatchItem::Request { method: "tools/list".into(), params: None, options: RequestOptions::default() },
///     BatchItem::Notification { method: "notifications/roots/list_changed".into(), params: None },
/// ];
/// assert_eq!(items.len(), 2);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum BatchItem {
    /// A request, tracked on its own like any other.
    Request {
        /// The method.
        method: String,
        /// The raw params.
        params: Option<Box<RawValue>>,
        /// Per-request settings.
        options: RequestOptions,
    },
    /// A notification.
    Notification {
        /// The method.
        method: String,
        /// The raw params.
        params: Option<Box<RawValue>>,
    },
}

/// Batches from the peer whose answer is still being assembled.
#[derive(Debug, Default)]
pub(super) struct Batches {
    next: u64,
    open: BTreeMap<u64, OpenBatch>,
    /// The batch whose elements are being handled right now: immediate replies join it.
    pub(super) collecting: Option<u64>,
}

#[derive(Debug)]
struct OpenBatch {
    route: Route,
    /// Requests of the batch handed to the application and not answered yet.
    awaiting: usize,
    replies: Vec<Message>,
}

impl Batches {
    fn open(&mut self, route: Route) -> u64 {
        let id = self.next;
        self.next += 1;
        self.open.insert(id, OpenBatch { route, awaiting: 0, replies: Vec::new() });
        id
    }

    pub(super) fn expect_reply(&mut self, batch: u64) {
        if let Some(b) = self.open.get_mut(&batch) {
            b.awaiting += 1;
        }
    }

    pub(super) fn clear(&mut self) {
        self.open.clear();
        self.collecting = None;
    }
}

impl<R: Role> Session<R> {
    /// Sends a reply, into the batch it belongs to if any.
    pub(super) fn reply(&mut self, route: Route, batch: Option<u64>, msg: Message) {
        match batch.and_then(|b| self.batches.open.get_mut(&b)) {
            Some(open) => open.replies.push(msg),
            None => self.transmit(route, msg),
        }
    }

    /// One awaited reply of `batch` is in (or will never come); sends the array when complete.
    pub(super) fn batch_reply_done(&mut self, batch: u64) {
        if let Some(open) = self.batches.open.get_mut(&batch) {
            open.awaiting = open.awaiting.saturating_sub(1);
        }
        self.flush_batch(batch);
    }

    fn flush_batch(&mut self, batch: u64) {
        let complete =
            self.batches.collecting != Some(batch) && self.batches.open.get(&batch).is_some_and(|b| b.awaiting == 0);
        if !complete {
            return;
        }
        if let Some(open) = self.batches.open.remove(&batch) {
            if !open.replies.is_empty() {
                self.out.push_back(super::Output::Transmit {
                    route: open.route,
                    payload: encode_batch(&open.replies),
                    carries: open.replies.as_slice().into(),
                });
            }
        }
    }

    /// A frame holding a JSON array.
    pub(super) fn on_batch(&mut self, now: Instant, route: Route, bytes: &[u8]) {
        let refuse = |this: &mut Self, error: ErrorObject| {
            this.transmit(route, ErrorResponse { id: None, error }.into());
        };
        if !self.version.is_some_and(|v| v.supports(Feature::Batching)) {
            self.emit(super::Event::PeerMisbehaved(ProtocolError::BatchNotAllowed));
            return refuse(
                self,
                ErrorObject::invalid_request("batches are allowed only in protocol revision 2025-03-26"),
            );
        }
        let items = match Packet::from_slice(bytes) {
            Ok(Packet::Batch(items)) => items,
            Ok(Packet::Single(_)) => return,
            Err(e) => return refuse(self, e.to_error_object()),
        };
        let max = self.config().max_batch_len;
        if items.len() > max {
            return refuse(
                self,
                ErrorObject::invalid_request(&format!("batch of {} exceeds the limit of {max}", items.len())),
            );
        }
        let batch = self.batches.open(route);
        self.batches.collecting = Some(batch);
        for item in items {
            match item {
                Ok(Message::Request(req)) => self.on_request(now, route, req),
                Ok(Message::Notification(n)) => self.on_notification(now, n),
                Ok(Message::Response(resp)) => self.on_response(now, resp.id, Ok(resp.result)),
                Ok(Message::Error(e)) => match e.id {
                    Some(id) => self.on_response(now, id, Err(e.error)),
                    None => self.emit(super::Event::PeerMisbehaved(ProtocolError::PeerError(e.error))),
                },
                Err(e) => {
                    if let Some(reply) = e.to_response() {
                        self.reply(route, Some(batch), reply.into());
                    }
                }
            }
            if self.phase == Phase::Closed {
                return;
            }
        }
        self.batches.collecting = None;
        self.flush_batch(batch);
    }

    /// Sends several requests and notifications as one batch frame (2025-03-26 only). Each
    /// request is tracked and ends on its own; the ids come back in order (`None` for
    /// notifications).
    ///
    /// # Errors
    ///
    /// [`SendError::BatchNotSupported`] outside a ready 2025-03-26 session; otherwise the
    /// errors of `send_request` for any item, in which case nothing is sent.
    pub fn send_batch(&mut self, now: Instant, items: Vec<BatchItem>) -> Result<Vec<Option<RequestId>>, SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        if !self.phase.is_ready() || !self.version.is_some_and(|v| v.supports(Feature::Batching)) {
            return Err(SendError::BatchNotSupported);
        }
        if items.is_empty() {
            return Err(SendError::EmptyBatch);
        }
        let requests = items.iter().filter(|i| matches!(i, BatchItem::Request { .. })).count();
        let limit = self.config().max_pending;
        if self.outbound.len() + requests > limit {
            return Err(SendError::TooManyPending { limit });
        }
        for item in &items {
            let (BatchItem::Request { method, .. } | BatchItem::Notification { method, .. }) = item;
            self.check_outgoing(method)?;
        }
        let mut ids = Vec::with_capacity(items.len());
        let mut messages = Vec::with_capacity(items.len());
        for item in items {
            match item {
                BatchItem::Request { method, params, options } => {
                    let (id, params) = match self.register(now, &method, params, options) {
                        Ok(registered) => registered,
                        Err(e) => {
                            // Undo what this batch registered: nothing of it is sent.
                            for id in ids.into_iter().flatten() {
                                self.outbound.remove(&id);
                            }
                            return Err(e);
                        }
                    };
                    messages.push(Request { id: id.clone(), method, params }.into());
                    ids.push(Some(id));
                }
                BatchItem::Notification { method, params } => {
                    messages.push(Notification { method, params }.into());
                    ids.push(None);
                }
            }
        }
        self.out.push_back(super::Output::Transmit {
            route: Route::Connection,
            payload: encode_batch(&messages),
            carries: messages.as_slice().into(),
        });
        Ok(ids)
    }
}
