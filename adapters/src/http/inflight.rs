//! The client's HTTP requests in flight, each on a `ureq` agent of its own, so that closing
//! that agent ends its connection and no other. That is how a request's POST is cut short:
//! - in the stateless era (2026-07-28), closing the stream is the request's cancellation,
//!   the only one that revision has over HTTP;
//! - in any era, when the call ended otherwise (a timeout, a cancellation, the client closed),
//!   so that the thread reading the reply, often the caller's own (see `caller_runs`), is
//!   free at once.
//!
//! An agent whose request finished keeps its idle connection and serves the next request.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use talaria_core::jsonrpc::RequestId;

/// How many finished agents (each with at most one idle connection) are kept for reuse: as
/// many as the shared agent keeps idle connections.
const SPARE_AGENTS: usize = 64;

/// A request in flight: the agent carrying it, and whether closing its stream cancels it.
struct Carried {
    agent: ureq::Agent,
    stateless: bool,
}

/// The requests in flight, by id, each with the agent carrying it.
pub(super) struct Inflight {
    config: ureq::config::Config,
    running: Mutex<HashMap<RequestId, Carried>>,
    spare: Mutex<Vec<ureq::Agent>>,
}

/// What closing a request's connection was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Closed {
    /// The request's cancellation (stateless era): nothing else is sent.
    Cancelled,
    /// Its reader's release only: the cancellation notification still goes to the server.
    Released,
}

impl Inflight {
    /// No request running yet; each agent is configured by `config` (give it at most one idle
    /// connection).
    pub(super) fn new(config: ureq::config::Config) -> Self {
        Self { config, running: Mutex::new(HashMap::new()), spare: Mutex::new(Vec::new()) }
    }

    /// An agent for request `id` (of the stateless era, or not), registered as running until
    /// the returned guard drops.
    pub(super) fn start(&self, id: RequestId, stateless: bool) -> Running<'_> {
        let agent = lock(&self.spare).pop().unwrap_or_else(|| super::one_write::agent(self.config.clone()));
        lock(&self.running).insert(id.clone(), Carried { agent: agent.clone(), stateless });
        Running { inflight: self, id, agent }
    }

    /// Closes request `id`'s connection, if it is running; what that was.
    pub(super) fn cancel(&self, id: &RequestId) -> Option<Closed> {
        let carried = lock(&self.running).remove(id)?;
        carried.agent.shutdown();
        Some(if carried.stateless { Closed::Cancelled } else { Closed::Released })
    }

    /// Closes every running request's connection (the client is closing).
    pub(super) fn cancel_all(&self) {
        let running = std::mem::take(&mut *lock(&self.running));
        for carried in running.into_values() {
            carried.agent.shutdown();
        }
    }
}

/// A request in flight; hands its agent back for reuse when it ends uncancelled.
pub(super) struct Running<'a> {
    inflight: &'a Inflight,
    id: RequestId,
    agent: ureq::Agent,
}

impl Running<'_> {
    /// The agent to send the request with.
    pub(super) const fn agent(&self) -> &ureq::Agent {
        &self.agent
    }

    /// Whether the request was cancelled: its connection is closed, and nothing it read
    /// since means anything.
    pub(super) fn cancelled(&self) -> bool {
        !lock(&self.inflight.running).contains_key(&self.id)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if lock(&self.inflight.running).remove(&self.id).is_some() {
            let mut spare = lock(&self.inflight.spare);
            if spare.len() < SPARE_AGENTS {
                spare.push(self.agent.clone());
            }
        }
    }
}

/// How long connecting to the server may take.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How the client's agents are configured: HTTP error statuses are answers to read, not
/// errors; at most `idle` idle connections are kept; connecting takes at most 30 s; TLS
/// trusts `options`' roots.
pub(super) fn agent_config(idle: usize, options: &crate::client::ClientOptions) -> ureq::config::Config {
    let builder = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_idle_connections(idle)
        .max_idle_connections_per_host(idle)
        // A host that drops SYNs fails the exchange, rather than the kernel's minutes of retries.
        .timeout_connect(Some(CONNECT_TIMEOUT));
    #[cfg(feature = "tls")]
    let builder = builder.tls_config(options.tls.ureq_config());
    #[cfg(not(feature = "tls"))]
    let _ = options;
    builder.build()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    #[test]
    fn cancelling_closes_only_that_request_and_finished_agents_are_reused() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        // A server that sends the head of an SSE reply and then nothing: the read blocks.
        let (head_sent, sent) = std::sync::mpsc::channel();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut head = [0u8; 1024];
            let _ = socket.read(&mut head).unwrap();
            socket.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n").unwrap();
            head_sent.send(()).unwrap();
            // EOF on our side means the client closed its stream.
            let mut rest = Vec::new();
            let _ = socket.read_to_end(&mut rest);
        });
        let inflight = Inflight::new(agent_config(1, &crate::client::ClientOptions::new("test", "1")));
        let id = RequestId::Number(7);
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let running = inflight.start(RequestId::Number(7), true);
                // Cancelled before or after the head arrived, the request ends with nothing read.
                let ended = running.agent().post(&url).send("{}").map_or(true, |response| {
                    let mut body = Vec::new();
                    let read = response.into_body().into_reader().read_to_end(&mut body);
                    read.is_err() || body.is_empty()
                });
                (ended, running.cancelled())
            });
            sent.recv().unwrap();
            assert_eq!(inflight.cancel(&id), Some(Closed::Cancelled), "closing was the cancellation");
            let (ended, cancelled) = reader.join().unwrap();
            assert!(ended && cancelled);
        });
        server.join().unwrap();
        assert_eq!(inflight.cancel(&id), None, "a request is cancelled once");
        assert!(lock(&inflight.spare).is_empty(), "a cancelled agent is not reused");

        drop(inflight.start(RequestId::Number(8), true));
        assert_eq!(lock(&inflight.spare).len(), 1, "a finished agent is kept");
        let _again = inflight.start(RequestId::Number(9), true);
        assert!(lock(&inflight.spare).is_empty(), "and reused");
    }

    #[test]
    fn closing_a_legacy_request_only_releases_its_reader_and_closing_the_client_closes_all() {
        let inflight = Inflight::new(agent_config(1, &crate::client::ClientOptions::new("test", "1")));
        let legacy = inflight.start(RequestId::Number(1), false);
        assert_eq!(inflight.cancel(&RequestId::Number(1)), Some(Closed::Released), "the notification still goes");
        assert!(legacy.cancelled());
        let (a, b) = (inflight.start(RequestId::Number(2), false), inflight.start(RequestId::Number(3), true));
        assert!(!a.cancelled() && !b.cancelled());
        inflight.cancel_all();
        assert!(a.cancelled() && b.cancelled(), "the client closed: every reader goes");
        drop((a, b, legacy));
        assert!(lock(&inflight.spare).is_empty(), "closed agents are not reused");
    }
}
