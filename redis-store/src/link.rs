//! One connection to Redis, opened again on the next call after it was lost, every call
//! bounded by the options' timeouts.

use std::time::Duration;

/// How a store reaches Redis.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use talaria_redis::RedisOptions;
///
/// let options = RedisOptions::default().io_timeout(Duration::from_millis(250)).prefix("myapp:");
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct RedisOptions {
    pub(crate) connect_timeout: Duration,
    pub(crate) io_timeout: Duration,
    pub(crate) prefix: String,
    pub(crate) session_ttl: Option<Duration>,
    pub(crate) max_tasks: usize,
}

impl Default for RedisOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_millis(500),
            io_timeout: Duration::from_millis(500),
            prefix: "talaria:".into(),
            session_ttl: None,
            max_tasks: 100_000,
        }
    }
}

impl RedisOptions {
    /// The longest a connection attempt takes (default 500 ms).
    pub const fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The longest a command waits for its answer (default 500 ms).
    pub const fn io_timeout(mut self, timeout: Duration) -> Self {
        self.io_timeout = timeout;
        self
    }

    /// What every key starts with (default `talaria:`), to share one Redis between
    /// deployments.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Sessions unused this long are dropped by Redis itself (key expiry), a backstop to the
    /// server's own idle sweep; none by default.
    pub const fn session_ttl(mut self, ttl: Duration) -> Self {
        self.session_ttl = Some(ttl);
        self
    }

    /// The most tasks kept at once (default 100,000): more are refused.
    pub const fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max;
        self
    }
}

/// Why a Redis store call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisError {
    /// Redis could not be reached, or refused the command.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// A record in Redis could not be read.
    #[error("malformed record in redis: {0}")]
    Malformed(String),
    /// An async store was called outside a tokio runtime with only the `tokio` feature on
    /// (redis would panic there): call it inside one, or turn on the `smol` feature too.
    #[cfg(feature = "tokio")]
    #[error("redis: no tokio runtime on this thread to open the connection on")]
    NoRuntime,
}

/// A connection, or the means to open one.
pub(crate) struct Link {
    client: redis::Client,
    connection: Option<redis::Connection>,
    options: RedisOptions,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("connected", &self.connection.is_some()).finish_non_exhaustive()
    }
}

impl Link {
    /// A link to the Redis at `url`, connected now (so that a wrong URL fails here).
    pub(crate) fn open(url: &str, options: RedisOptions) -> Result<Self, RedisError> {
        let client = redis::Client::open(url)?;
        let mut link = Self { client, connection: None, options };
        link.run(|_| Ok(()))?;
        Ok(link)
    }

    /// The options.
    pub(crate) const fn options(&self) -> &RedisOptions {
        &self.options
    }

    /// Runs `commands` on the connection, opening it first if needed; a connection that
    /// failed is dropped, to be opened again by the next call.
    pub(crate) fn run<T>(
        &mut self,
        commands: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, RedisError> {
        if self.connection.is_none() {
            let connection = self.client.get_connection_with_timeout(self.options.connect_timeout)?;
            connection.set_read_timeout(Some(self.options.io_timeout))?;
            connection.set_write_timeout(Some(self.options.io_timeout))?;
            self.connection = Some(connection);
        }
        let Some(connection) = self.connection.as_mut() else {
            return Err(RedisError::Malformed("no connection".into()));
        };
        commands(connection).map_err(|e| {
            if is_lost(&e) {
                self.connection = None;
            }
            RedisError::from(e)
        })
    }
}

/// Whether `error` leaves the connection unusable (or in doubt: an answer that did not come in
/// time), so that the next call opens another.
pub(crate) fn is_lost(error: &redis::RedisError) -> bool {
    error.is_io_error() || error.is_connection_dropped() || error.is_timeout() || error.is_connection_refusal()
}
