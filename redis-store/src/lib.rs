//! Redis stores for Talaria MCP servers that run as several processes behind a load balancer:
//! the records that let any process serve any request, kept in one Redis.
//!
//! - [`RedisSessionStore`]: legacy-era sessions ([`SessionStore`]): each session's snapshot,
//!   and when it was last used in wall-clock time, so that every process agrees on idle
//!   expiry.
//! - `AsyncRedisSessionStore` (features `smol`, `tokio`): the same sessions, same records,
//!   with calls that are futures ([`AsyncSessionStore`]), on one multiplexed connection shared
//!   by every call in flight. A process may use either store, and processes may mix them.
//! - [`RedisEventStore`]: the SSE event logs behind resumable streams ([`EventStore`]), with
//!   the in-memory store's retention, so that `Last-Event-ID` resumes on any process.
//! - [`RedisRelay`]: a client's answer to a server-to-client request carried to the process
//!   that asked, whichever process it was posted to (pub/sub).
//! - [`RedisTaskStore`]: the tasks of the 2026-07-28 tasks extension ([`TaskStore`]), with
//!   their TTL as Redis key expiry.
//!
//! Each store holds one connection and reconnects on the next call after losing it; every
//! call is bounded by the timeouts of [`RedisOptions`], so a Redis outage turns into store
//! errors (the HTTP server answers 503) within them, and service resumes with Redis.
//!
//! # Features
//!
//! None is on by default: the sync stores need none.
//!
//! - `smol`: `AsyncRedisSessionStore`, its connection on smol (redis' `smol-comp`): its task
//!   on smol's global executor, or on the server's own (`AsyncRedisSessionStore::connect_on`).
//! - `tokio`: `AsyncRedisSessionStore`, its connection on tokio (redis' `tokio-comp`). With
//!   both on, redis picks tokio when a connection is opened inside a tokio runtime, and smol
//!   otherwise. Either pulls in tokio as a dependency of redis' async API.
//!
//! Start a Redis for development with `scripts/redis.sh` (it installs `redis-server` from the
//! system packages when missing, and prints the URL).
//!
//! # Examples
//!
//! ```no_run
//! use talaria_core::http::event_log::SessionStore;
//! use talaria_redis::{RedisOptions, RedisSessionStore};
//!
//! let mut sessions = RedisSessionStore::connect("redis://127.0.0.1:6379", RedisOptions::default())?;
//! sessions.store("a1b2", b"{\"version\":\"2025-11-25\"}".to_vec(), std::time::Instant::now())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`SessionStore`]: talaria_core::http::event_log::SessionStore
//! [`AsyncSessionStore`]: talaria_core::http::event_log::AsyncSessionStore
//! [`EventStore`]: talaria_core::http::event_log::EventStore
//! [`TaskStore`]: talaria_core::server::TaskStore

#![forbid(unsafe_code)]

#[cfg(any(feature = "smol", feature = "tokio"))]
mod async_link;
#[cfg(any(feature = "smol", feature = "tokio"))]
mod async_sessions;
mod clock;
mod events;
mod link;
mod relay;
mod session_commands;
mod sessions;
#[cfg(feature = "smol")]
mod smol_io;
mod tasks;

#[cfg(any(feature = "smol", feature = "tokio"))]
pub use async_sessions::AsyncRedisSessionStore;

pub use clock::WallClock;
pub use events::RedisEventStore;
pub use link::{RedisError, RedisOptions};
pub use relay::RedisRelay;
pub use sessions::RedisSessionStore;
pub use tasks::RedisTaskStore;
