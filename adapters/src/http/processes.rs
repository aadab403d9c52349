//! What passes between the server processes that share sessions (with a relay): answers
//! relayed to the process that waits for them, resource updates fanned out to the process
//! holding each subscriber's stream, this process's lease and the claims on its streams, and
//! following a stream another process writes.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;

use talaria_core::http::event_log::{EventId, StoredEvent};
use talaria_core::http::relay::{follow, Claim, Follow, GetStreamOrder, Notice, Relay, NOTICES};
use talaria_core::jsonrpc::{Message, RequestId};
use talaria_core::session::{Carries, Route, StreamId};

use super::chan::channel;
use super::exchange::Spawner;
use super::options::HttpServerOptions;
use super::shared::{lookup, refresh, Session, Shared};
use super::streams::Log;
use crate::server::{Server, UpdateHook};

/// Starts taking in the answers and notices other processes relay here, and renewing this
/// process's lease (with a relay).
pub(super) fn listen_to_relay<S: Send + 'static>(shared: &Arc<Shared<S>>, spawner: &Spawner) {
    let Some(relay) = &shared.options.relay else { return };
    keep_lease(shared);
    take_updates(shared, spawner);
    let weak = Arc::downgrade(shared);
    relay.subscribe(Arc::new(move |id: &str, frames: &[u8]| {
        let Some(shared) = weak.upgrade() else { return };
        if id == NOTICES {
            take_notice(&shared, frames);
        } else {
            take_relayed(&shared, id, frames);
        }
    }));
}

/// The most bytes of resource updates heard from other processes and not yet taken in; past
/// it, an update is dropped (a peer flooding the relay cannot grow this process's memory).
const MAX_QUEUED_UPDATES: usize = 1024 * 1024;

/// Takes in the resource updates the relay hears, in order, as one task of `spawner` started
/// now (where the server starts: an application's runtime may spawn only from its own
/// threads, not the relay's); it ends with the server.
fn take_updates<S: Send + 'static>(shared: &Arc<Shared<S>>, spawner: &Spawner) {
    let (sender, updates) = channel::<String>();
    if shared.updates.set(sender).is_err() {
        return;
    }
    let weak = Arc::downgrade(shared);
    spawner.detach(async move {
        // The sender is the server's: once the server is gone, so is this task.
        while let Ok(uri) = updates.recv_async().await {
            let Some(shared) = weak.upgrade() else { break };
            take_update(&shared, &uri).await;
        }
    });
}

/// Renews this process's lease from a thread of its own, three times per lease, for as
/// long as the server runs.
fn keep_lease<S: Send + 'static>(shared: &Arc<Shared<S>>) {
    let (Some(relay), Some(process)) = (shared.options.relay.clone(), shared.request_prefix.clone()) else { return };
    let (weak, lease) = (Arc::downgrade(shared), shared.options.lease);
    let renewing = std::thread::Builder::new().name("talaria-lease".into()).spawn(move || {
        while weak.strong_count() > 0 {
            relay.renew(&process, lease);
            std::thread::sleep(lease / 3);
        }
    });
    drop(renewing);
}

/// Whether this server's legacy sessions hear resource updates through the relay: they
/// are shared between processes (a relay and a session store).
fn fans_out<S>(shared: &Shared<S>) -> bool {
    shared.update_hook.is_some() && shared.options.session_store.is_some()
}

/// Gives the session's server-to-client requests this process's ids (with a relay).
pub(super) fn number_requests<S: Send + 'static>(shared: &Shared<S>, session: &Session<S>) {
    if let Some(prefix) = &shared.request_prefix {
        session.conn.with(|served, _| served.endpoint.number_requests_with(prefix));
    }
}

/// A prefix no other process is likely to pick: 48 random bits (`None` without randomness).
pub(super) fn process_prefix() -> Option<String> {
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).ok()?;
    Some(format!("{}-", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

/// Whether the session held here waits for an answer to any of `ids`.
fn awaits_any<S: Send + 'static>(session: &Session<S>, ids: &[RequestId]) -> bool {
    session.conn.with(|served, _| ids.iter().any(|id| served.endpoint.session().pending_method(id).is_some()))
}

/// With a relay, the hook that publishes each of `server`'s resource updates to every process
/// (this one included: see [`take_notice`]).
pub(super) fn fan_out_hook<S: Send + 'static>(
    server: &Server<S>,
    options: &HttpServerOptions,
) -> Option<Arc<UpdateHook>> {
    let relay = options.relay.clone()?;
    let hook: Arc<UpdateHook> = Arc::new(move |uri: &str| {
        relay.publish(NOTICES, &Notice::ResourceUpdated { uri: uri.to_owned() }.encode());
    });
    server.on_resource_update(&hook);
    Some(hook)
}

/// A notice relayed from any process.
fn take_notice<S: Send + 'static>(shared: &Shared<S>, notice: &[u8]) {
    let held = |id: &str| shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned();
    match Notice::decode(notice) {
        // Taken in on the server's executor, where the store's checks are awaited.
        Some(Notice::ResourceUpdated { uri }) => {
            if let Some(updates) = shared.updates.get().filter(|u| u.queued_bytes() < MAX_QUEUED_UPDATES) {
                let size = uri.len();
                let _ = updates.send_sized(uri, size);
            }
        }
        // The newest GET stream of a session is the one that hears it.
        Some(Notice::GetStreamOpened { session, process }) => {
            if let Some(session) = held(&session) {
                if session.streams.peers().is_some_and(|peers| peers.heard_opened(&process)) {
                    session.streams.end_get();
                }
            }
        }
        Some(Notice::ForGetStream { session, frame }) => {
            let carries = Message::from_slice(frame.as_bytes()).ok().map(Carries::from);
            if let (Some(session), Some(carries)) = (held(&session), carries) {
                session.streams.deliver_to_get(frame.into_bytes(), carries);
            }
        }
        _ => {}
    }
}

/// How many sessions one resource update checks against the store side by side.
const UPDATE_CHECKS_AT_ONCE: usize = 32;

/// A resource update reaches the sessions whose GET stream this process holds, each checked
/// against the store first (a subscription may have been made on another process since),
/// and told if subscribed. The checks run [`UPDATE_CHECKS_AT_ONCE`] at a time, so an update
/// costs a process holding many streams a few round trips' time, not one per session; each
/// update is taken in whole before the next, so a session hears them in order.
async fn take_update<S: Send + 'static>(shared: &Shared<S>, uri: &str) {
    let listening: Vec<(String, Session<S>)> = {
        let table = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        table
            .ids()
            .filter_map(|id| Some((id.to_owned(), table.get(id)?.clone())))
            .filter(|(_, session)| session.streams.listening())
            .collect()
    };
    for some in listening.chunks(UPDATE_CHECKS_AT_ONCE) {
        side_by_side(some.iter().map(|(id, session)| async move {
            if refresh(shared, id, session).await.is_ok() {
                let _ = session.conn.with(|served, _| served.endpoint.resource_updated(uri));
            }
        }))
        .await;
    }
    // The stateless era's `subscriptions/listen` streams held here (no record to check).
    shared.server.resource_updated_where(uri, |served| served.fanned_out && served.is_stateless());
}

/// Runs `futures` side by side in the task that awaits this, until the last one ends.
async fn side_by_side<F: Future<Output = ()>>(futures: impl IntoIterator<Item = F>) {
    let mut running: Vec<Option<Pin<Box<F>>>> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for slot in &mut running {
            if let Some(future) = slot {
                if future.as_mut().poll(cx).is_ready() {
                    *slot = None;
                } else {
                    pending = true;
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
}

/// One shared session's GET stream among the processes: which process holds it, and how a
/// message for it reaches that process. The client opens it on one process, which tells the
/// others ([`Notice::GetStreamOpened`]); they end the ones they held, as the older of two GET
/// streams ends within one process. A server-to-client request this process makes for the GET
/// stream, not held here, goes to the one that holds it ([`Notice::ForGetStream`]).
pub(crate) struct GetStreamPeers {
    relay: Arc<dyn Relay>,
    session: String,
    process: String,
    /// Whether another process's announcement is newer than the stream here (the rule is the
    /// core's).
    order: Mutex<GetStreamOrder>,
}

impl GetStreamPeers {
    /// The peers of session `id`, for a server whose sessions are shared between processes
    /// (a relay and a session store).
    pub(super) fn of<S>(shared: &Shared<S>, id: &str) -> Option<Arc<Self>> {
        let (relay, process) = (shared.options.relay.clone()?, shared.request_prefix.clone()?);
        fans_out(shared).then(|| Self::new(relay, id, &process))
    }

    /// The peers of session `session` on `relay`, seen from `process`.
    pub(super) fn new(relay: Arc<dyn Relay>, session: &str, process: &str) -> Arc<Self> {
        let (session, process) = (session.to_owned(), process.to_owned());
        Arc::new(Self { relay, session, process, order: Mutex::default() })
    }

    /// A GET stream is about to open here: from now on, announcements heard from other
    /// processes are older than it until this process's own comes back. Followed by
    /// [`GetStreamPeers::announce`], or by [`GetStreamPeers::withdraw`] if no stream opened.
    pub(super) fn expect_announcement(&self) {
        self.order().expect_announcement();
    }

    /// No GET stream opened after all ([`GetStreamPeers::expect_announcement`]).
    pub(super) fn withdraw(&self) {
        self.order().withdraw();
    }

    fn order(&self) -> MutexGuard<'_, GetStreamOrder> {
        self.order.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells every process that this one holds the session's GET stream now (blocking: the
    /// relay's round trip), after [`GetStreamPeers::expect_announcement`]. Called before the
    /// stream's response starts, so that the client cannot open a newer one elsewhere before
    /// the others hear of this one.
    pub(super) fn announce(&self) {
        let notice = Notice::GetStreamOpened { session: self.session.clone(), process: self.process.clone() };
        self.relay.publish(NOTICES, &notice.encode());
    }

    /// The claim to note on the log of the session's GET stream held here.
    pub(crate) fn get_claim(&self) -> Vec<u8> {
        Claim::get_stream(self.process.clone()).encode()
    }

    /// `process` announced the session's GET stream: whether the one held here (if any) ends.
    pub(super) fn heard_opened(&self, process: &str) -> bool {
        let mut order = self.order();
        if process == self.process {
            order.heard_own_announcement();
            return false;
        }
        order.ends_on_opened_elsewhere()
    }

    /// Sends `frames`, meant for the session's GET stream that is not held here, to the
    /// process that holds it, if they are ones that travel ([`Notice::for_get_stream`]); off
    /// the caller's thread, in order.
    pub(crate) fn forward(&self, frames: &[(Vec<u8>, Carries)]) {
        let notices: Vec<Vec<u8>> = frames
            .iter()
            .filter_map(|(frame, carries)| Notice::for_get_stream(&self.session, frame, carries))
            .map(|notice| notice.encode())
            .collect();
        if notices.is_empty() {
            return;
        }
        let relay = Arc::clone(&self.relay);
        smol::unblock(move || notices.iter().for_each(|notice| relay.publish(NOTICES, notice))).detach();
    }
}

/// With a relay, the claim to note on the log of `stream` (a POST stream of a legacy
/// session): this process answers its requests, for a process the client resumes it on.
pub(super) fn claim_of_stream<S: Send + 'static>(
    shared: &Shared<S>,
    session: &Session<S>,
    stream: StreamId,
) -> Option<Vec<u8>> {
    let process = shared.request_prefix.as_ref().filter(|_| shared.options.relay.is_some())?;
    let requests = session.conn.with(|served, _| served.endpoint.session().requests_on(stream));
    (!requests.is_empty()).then(|| Claim::answering(process.clone(), requests).encode())
}

/// One look at a stream another process writes, resumed here by its client after `after`
/// (blocking: store and relay round trips): the events logged since, and what to do
/// next. With `lease` the writer's lease is checked too (not at every look: it costs two
/// round trips); without, the stream is waited on while it has not ended.
pub(super) fn look_at_followed<S: Send + 'static>(
    shared: &Shared<S>,
    log: &Log,
    after: EventId,
    lease: bool,
) -> (Vec<StoredEvent>, Follow) {
    let Some(replay) = log.replay_after(after) else { return (Vec::new(), Follow::End) };
    let step = match (&shared.options.relay, replay.closed, lease) {
        (None, _, _) | (Some(_), true, _) => Follow::End,
        (Some(_), false, false) => Follow::Wait,
        (Some(relay), false, true) => match log.claim_of(after.stream) {
            Ok(claim) => {
                let claim = claim.as_deref().and_then(Claim::decode);
                let alive = claim.as_ref().map_or(Ok(true), |claim| relay.alive(&claim.process));
                follow(false, claim.as_ref(), alive)
            }
            Err(()) => Follow::Wait,
        },
    };
    (replay.events, step)
}

/// Whether this server follows streams of other processes (it has a relay).
pub(super) fn follows_others<S: Send + 'static>(shared: &Shared<S>) -> bool {
    shared.options.relay.is_some()
}

/// Marks a legacy Streamable HTTP session shared between processes as one that hears resource
/// updates through the relay.
pub(super) fn fan_out<S: Send + 'static>(shared: &Shared<S>, session: &Session<S>) {
    if fans_out(shared) {
        session.conn.with(|served, _| served.fanned_out = true);
    }
}

/// Answers relayed from another process: taken in if a session held here waits for them.
fn take_relayed<S: Send + 'static>(shared: &Shared<S>, id: &str, frames: &[u8]) {
    let Some(ids) = talaria_core::http::relay::answers_only(frames) else { return };
    let Some(session) = lookup(shared, id) else { return };
    if awaits_any(&session, &ids) {
        session.conn.with(|served, now| served.endpoint.handle_frame(now, Route::Connection, frames));
    }
}

/// The relay to publish a POST's body to, if the body carries only answers and this process
/// awaits none of them: the process that waits for them takes them (answer 202).
pub(super) fn for_another_process<S: Send + 'static>(
    shared: &Shared<S>,
    session: &Session<S>,
    body: &[u8],
) -> Option<Arc<dyn Relay>> {
    let relay = shared.options.relay.as_ref()?;
    let ids = talaria_core::http::relay::answers_only(body)?;
    if awaits_any(session, &ids) {
        return None;
    }
    Some(Arc::clone(relay))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    #[test]
    fn futures_run_side_by_side_not_one_after_another() {
        let (tx, rx) = smol::channel::bounded::<()>(1);
        let order = Mutex::new(Vec::new());
        type Step<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;
        let waits: Step<'_> = Box::pin(async {
            rx.recv().await.unwrap();
            order.lock().unwrap().push("first");
        });
        let sends: Step<'_> = Box::pin(async {
            order.lock().unwrap().push("second");
            tx.send(()).await.unwrap();
        });
        let finished = smol::block_on(smol::future::or(
            async {
                side_by_side([waits, sends]).await;
                true
            },
            async {
                smol::Timer::after(Duration::from_secs(5)).await;
                false
            },
        ));
        assert!(finished, "the first waited for the second, which never ran");
        assert_eq!(*order.lock().unwrap(), ["second", "first"]);
    }
}
