//! One multiplexed connection to Redis shared by every call in flight, opened again by a later
//! call after it was lost, every round trip bounded by the options' timeouts: the async
//! counterpart of [`Link`](crate::link::Link).
//!
//! redis' [`MultiplexedConnection`] does not reconnect by itself (0.32: once its socket fails,
//! every request on it, and on each of its clones, fails with a broken pipe), so the link keeps
//! it in a slot: each call clones it out (cheap: a channel sender), and a call that finds it
//! lost empties the slot, unless another call already put a newer one there.

use std::future::Future;
#[cfg(feature = "smol")]
use std::sync::Arc;
use std::sync::{Mutex, MutexGuard, PoisonError};
#[cfg(feature = "smol")]
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client};

use crate::link::{is_lost, RedisError, RedisOptions};

/// A shared connection, or the means to open one.
pub(crate) struct AsyncLink {
    client: Client,
    config: AsyncConnectionConfig,
    slot: Mutex<Slot>,
    /// Where the connection's task runs, if not where redis would spawn it (see
    /// [`open_on`](Self::open_on)).
    #[cfg(feature = "smol")]
    driver_on: Option<DriverOn>,
}

/// An executor of the caller's for the connection's task, and how long opening a connection
/// may take.
#[cfg(feature = "smol")]
struct DriverOn {
    executor: Arc<smol::Executor<'static>>,
    connect_timeout: Duration,
}

/// The connection, and how many were put in the slot so far (which one a failed call used).
#[derive(Default)]
struct Slot {
    connection: Option<MultiplexedConnection>,
    generation: u64,
}

impl std::fmt::Debug for AsyncLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let slot = self.slot();
        f.debug_struct("AsyncLink")
            .field("connected", &slot.connection.is_some())
            .field("generation", &slot.generation)
            .finish_non_exhaustive()
    }
}

impl AsyncLink {
    /// A link to the Redis at `url`, connected now (so that a wrong URL fails here).
    pub(crate) async fn open(url: &str, options: &RedisOptions) -> Result<Self, RedisError> {
        let link = Self::new(url, options)?;
        link.connection().await?;
        Ok(link)
    }

    /// [`open`](Self::open), with the connection's task (which writes the calls' commands and
    /// reads their replies) run on `executor` rather than on smol's global executor: on the
    /// executor that runs the server's requests, a round trip needs no hand-off to another
    /// thread on its way out and back. Only for a TCP address (`redis://`); any other is
    /// opened as [`open`](Self::open) does.
    #[cfg(feature = "smol")]
    pub(crate) async fn open_on(
        executor: Arc<smol::Executor<'static>>,
        url: &str,
        options: &RedisOptions,
    ) -> Result<Self, RedisError> {
        let mut link = Self::new(url, options)?;
        link.driver_on = Some(DriverOn { executor, connect_timeout: options.connect_timeout });
        link.connection().await?;
        Ok(link)
    }

    fn new(url: &str, options: &RedisOptions) -> Result<Self, RedisError> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(options.connect_timeout)
            .set_response_timeout(options.io_timeout);
        Ok(Self {
            client: Client::open(url)?,
            config,
            slot: Mutex::new(Slot::default()),
            #[cfg(feature = "smol")]
            driver_on: None,
        })
    }

    /// Runs `commands` on the connection (a clone of it, which they may keep until their
    /// future ends), opening it first if needed; a connection that failed is dropped, to be
    /// opened again by a later call.
    pub(crate) async fn run<T, F, Fut>(&self, commands: F) -> Result<T, RedisError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        let (connection, generation) = self.connection().await?;
        commands(connection).await.map_err(|e| {
            if is_lost(&e) {
                let mut slot = self.slot();
                // A call that failed later than another reconnected must not drop the new one.
                if slot.generation == generation {
                    slot.connection = None;
                }
            }
            RedisError::from(e)
        })
    }

    /// The connection and its generation, opened if the slot is empty. Calls that find it
    /// empty together each open one (within the connect timeout); the first to finish is
    /// kept, and the others use it.
    async fn connection(&self) -> Result<(MultiplexedConnection, u64), RedisError> {
        // Every call, not only a connect: with tokio alone, a round trip's timeout needs the
        // runtime too.
        runtime_present()?;
        if let Some(connected) = self.connected() {
            return Ok(connected);
        }
        let fresh = self.open_connection().await?;
        let mut slot = self.slot();
        if let Some(connection) = &slot.connection {
            return Ok((connection.clone(), slot.generation));
        }
        slot.generation += 1;
        slot.connection = Some(fresh.clone());
        Ok((fresh, slot.generation))
    }

    /// A new connection: redis' own, or with its task on the executor of
    /// [`open_on`](Self::open_on).
    async fn open_connection(&self) -> redis::RedisResult<MultiplexedConnection> {
        #[cfg(feature = "smol")]
        if let (Some(driver_on), redis::ConnectionAddr::Tcp(host, port)) =
            (&self.driver_on, &self.client.get_connection_info().addr)
        {
            let opening = async {
                let stream = smol::net::TcpStream::connect((host.as_str(), *port)).await?;
                stream.set_nodelay(true)?;
                let redis = &self.client.get_connection_info().redis;
                let stream = crate::smol_io::SmolTcp(stream);
                MultiplexedConnection::new_with_config(redis, stream, self.config.clone()).await
            };
            let timed_out = async {
                smol::Timer::after(driver_on.connect_timeout).await;
                Err(redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut)))
            };
            let (connection, driver) = smol::future::or(opening, timed_out).await?;
            driver_on.executor.spawn(driver).detach();
            return Ok(connection);
        }
        self.client.get_multiplexed_async_connection_with_config(&self.config).await
    }

    fn connected(&self) -> Option<(MultiplexedConnection, u64)> {
        let slot = self.slot();
        slot.connection.clone().map(|connection| (connection, slot.generation))
    }

    /// The slot, locked only between awaits (never across one). No code panics while holding
    /// it, and it is whole at every step anyway, so poisoning is ignored.
    fn slot(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// With tokio as the only runtime, redis spawns a connection's task with `tokio::spawn` and
/// times round trips with tokio's timer, which panic outside a tokio runtime: refuse to connect
/// or call there instead.
#[cfg(all(feature = "tokio", not(feature = "smol")))]
fn runtime_present() -> Result<(), RedisError> {
    tokio::runtime::Handle::try_current().map(|_| ()).map_err(|_| RedisError::NoRuntime)
}

/// smol's executor is global: a connection can be opened from any thread.
#[cfg(feature = "smol")]
#[allow(clippy::unnecessary_wraps)] // the tokio-only twin can fail
const fn runtime_present() -> Result<(), RedisError> {
    Ok(())
}
