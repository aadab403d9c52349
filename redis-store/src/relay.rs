//! [`RedisRelay`]: a client's answer to a server-to-client request, posted to another process
//! than the one that asked, carried there through Redis pub/sub.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use talaria_core::http::relay::{Deliver, Relay, RelayError};

use crate::link::{Link, RedisError, RedisOptions};

/// How long the subscriber waits before connecting again after losing Redis.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// Relays answers between the server processes sharing sessions through the Redis at one
/// URL: published on the channel `{prefix}relay`, each process subscribed (one connection and
/// one thread of its own, reconnecting after an outage; what is published meanwhile is lost,
/// as a dropped connection would lose it).
///
/// It also keeps the leases by which a process resuming another's stream knows whether that
/// process still answers: `{prefix}alive:{process}`, expiring with the lease (whose stream
/// it is, the event log notes: see [`RedisEventStore`](crate::RedisEventStore)).
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use talaria::http::HttpServerOptions;
/// use talaria_redis::{RedisOptions, RedisRelay};
///
/// let relay = RedisRelay::connect("redis://127.0.0.1:6379", RedisOptions::default())?;
/// let options = HttpServerOptions::default().relay(Arc::new(relay));
/// # let _ = options;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RedisRelay {
    url: String,
    publisher: Mutex<Link>,
    channel: String,
}

impl RedisRelay {
    /// A relay through the Redis at `url`.
    ///
    /// # Errors
    ///
    /// [`RedisError`] if the URL is wrong or Redis cannot be reached.
    pub fn connect(url: &str, options: RedisOptions) -> Result<Self, RedisError> {
        let channel = format!("{}relay", options.prefix);
        Ok(Self { url: url.to_owned(), publisher: Mutex::new(Link::open(url, options)?), channel })
    }
}

impl RedisRelay {
    /// Runs `commands` on the publishing connection.
    fn run<T>(
        &self,
        commands: impl FnOnce(&mut redis::Connection, &str) -> redis::RedisResult<T>,
    ) -> Result<T, RedisError> {
        let mut publisher = self.publisher.lock().unwrap_or_else(PoisonError::into_inner);
        let prefix = publisher.options().prefix.clone();
        publisher.run(|c| commands(c, &prefix))
    }
}

fn unreachable(error: &RedisError) -> RelayError {
    RelayError::Unreachable(error.to_string())
}

impl Relay for RedisRelay {
    fn publish(&self, session: &str, frames: &[u8]) {
        let mut message = Vec::with_capacity(session.len() + 1 + frames.len());
        message.extend_from_slice(session.as_bytes());
        message.push(b'\n');
        message.extend_from_slice(frames);
        let channel = &self.channel;
        let _ = self.run(|c, _| redis::cmd("PUBLISH").arg(channel).arg(&message).query::<i64>(c));
    }

    fn renew(&self, process: &str, ttl: Duration) {
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let _ = self.run(|c, prefix| {
            redis::cmd("SET").arg(format!("{prefix}alive:{process}")).arg(1).arg("PX").arg(ms).query::<()>(c)
        });
    }

    fn alive(&self, process: &str) -> Result<bool, RelayError> {
        self.run(|c, prefix| redis::cmd("EXISTS").arg(format!("{prefix}alive:{process}")).query::<i64>(c))
            .map(|n| n == 1)
            .map_err(|e| unreachable(&e))
    }

    fn subscribe(&self, deliver: Deliver) {
        let (url, channel) = (self.url.clone(), self.channel.clone());
        let spawned = std::thread::Builder::new().name("talaria-redis-relay".into()).spawn(move || {
            let Ok(client) = redis::Client::open(url) else { return };
            loop {
                let Ok(mut connection) = client.get_connection() else {
                    std::thread::sleep(RECONNECT_PAUSE);
                    continue;
                };
                let mut pubsub = connection.as_pubsub();
                if pubsub.subscribe(&channel).is_err() {
                    std::thread::sleep(RECONNECT_PAUSE);
                    continue;
                }
                while let Ok(message) = pubsub.get_message() {
                    let Ok(payload) = message.get_payload::<Vec<u8>>() else { continue };
                    let Some(split) = payload.iter().position(|b| *b == b'\n') else { continue };
                    let Ok(session) = std::str::from_utf8(&payload[..split]) else { continue };
                    deliver(session, &payload[split + 1..]);
                }
            }
        });
        drop(spawned);
    }
}
