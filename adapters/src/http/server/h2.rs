//! HTTP/2, for the server's TLS connections whose ALPN negotiated `h2` (there is no `h2c`:
//! plain connections speak HTTP/1.1). Each request is the same exchange as over HTTP/1.1
//! ([`handle`], which reads the body within `max_body` and `read_timeout` whatever carries it,
//! and streams SSE replies as a [`Body`]), on hyper's HTTP/2 connection under the same limits:
//!
//! - the request head: `SETTINGS_MAX_HEADER_LIST_SIZE` is `max_head`, so a larger header block
//!   is answered `431` and its stream reset by the `h2` crate, the connection serving on (one
//!   field whose encoding runs on far past the limit closes it: `GOAWAY`,
//!   `COMPRESSION_ERROR`); a request with more than `max_headers` fields is answered `431`
//!   here;
//! - streams: at most [`MAX_STREAMS`] at once on one connection;
//! - idleness: a connection with no request under way for `read_timeout` is shut down
//!   (`GOAWAY`), as an idle HTTP/1.1 keep-alive connection is closed, and a peer that leaves a
//!   `PING` unanswered for `read_timeout` is taken for gone;
//! - floods of resets: hyper's defaults (`max_pending_accept_reset_streams`,
//!   `max_local_error_reset_streams`).
//!
//! `:authority` is given to the exchange as `Host` (RFC 9113 §8.3.1), so the DNS-rebinding
//! check of [`EndpointConfig::allowed_hosts`](talaria_core::http::exchange::EndpointConfig)
//! applies to HTTP/2 requests too.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::header::{HeaderValue, HOST};
use hyper::server::conn::http2;
use hyper::{Request, Response, StatusCode};
use smol::Timer;
use smol_hyper::rt::{FuturesIo, SmolTimer};

use super::super::body::Body;
use super::super::exchange::{handle, Context, Spawner};
use super::super::options::HttpServerOptions;

/// The most streams (requests under way) one connection may have open at once. RFC 9113
/// (§6.5.2) advises no fewer than 100, so as not to limit parallelism needlessly; no more,
/// because every stream is an exchange the server runs (a task, often a session's streamed
/// reply held open) and connections are what the server counts and caps per peer, so this is
/// how much more one connection may ask for than an HTTP/1.1 one. (hyper's default is 200.)
pub(super) const MAX_STREAMS: u32 = 100;

/// How the server serves connections that negotiated `h2`.
pub(super) struct Http2 {
    builder: http2::Builder<Exec>,
    max_headers: usize,
    idle: Duration,
}

impl Http2 {
    /// HTTP/2 under `options`' limits, its streams' tasks spawned by `spawner` (where the
    /// connections' own tasks run).
    pub(super) fn new(spawner: Spawner, options: &HttpServerOptions) -> Self {
        let mut builder = http2::Builder::new(Exec(spawner));
        builder
            .timer(SmolTimer::new())
            .max_header_list_size(u32::try_from(options.max_head).unwrap_or(u32::MAX))
            .max_concurrent_streams(MAX_STREAMS)
            .keep_alive_interval(options.read_timeout)
            .keep_alive_timeout(options.read_timeout);
        Self { builder, max_headers: options.max_headers, idle: options.read_timeout }
    }

    /// Serves one connection's streams until it closes, or has been idle for `read_timeout`.
    pub(super) async fn serve<S, T>(&self, stream: T, context: Arc<Context<S>>, peer: SocketAddr)
    where
        S: Send + 'static,
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin + Send + 'static,
    {
        let activity = Arc::new(Activity::new());
        let tracking = Arc::clone(&activity);
        let max_headers = self.max_headers;
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let busy = Busy::start(&tracking);
            let context = Arc::clone(&context);
            async move {
                let response = match as_exchange(request, max_headers) {
                    Ok(request) => handle(context, request, Some(peer)).await?,
                    Err(refused) => status(refused),
                };
                Ok::<_, Infallible>(response.map(|body| Tracked { body, _busy: busy }))
            }
        });
        let mut connection = pin!(self.builder.serve_connection(FuturesIo::new(stream), service));
        while let Some(wait) = activity.until_idle(self.idle) {
            let ended = smol::future::or(
                async {
                    let _ = connection.as_mut().await;
                    true
                },
                async {
                    Timer::after(wait).await;
                    false
                },
            )
            .await;
            if ended {
                return;
            }
        }
        // Idle: GOAWAY, and the connection ends once the peer has read it (or a while after).
        connection.as_mut().graceful_shutdown();
        let _ = smol::future::or(connection, async {
            Timer::after(self.idle).await;
            Ok(())
        })
        .await;
    }
}

/// The request as the exchange reads it: `:authority` as `Host` (a request whose `Host`
/// names another is malformed, RFC 9113 §8.3.1: `400`), and no more than `max_headers`
/// fields (`431`, as hyper answers over HTTP/1.1); or the status it is refused with.
fn as_exchange(request: Request<Incoming>, max_headers: usize) -> Result<Request<Incoming>, StatusCode> {
    if request.headers().len() > max_headers {
        return Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    }
    let (mut parts, body) = request.into_parts();
    if let Some(authority) = parts.uri.authority() {
        match parts.headers.get(HOST) {
            Some(host) if host.as_bytes() != authority.as_str().as_bytes() => return Err(StatusCode::BAD_REQUEST),
            Some(_) => {}
            None => {
                let Ok(host) = HeaderValue::from_str(authority.as_str()) else {
                    return Err(StatusCode::BAD_REQUEST);
                };
                parts.headers.insert(HOST, host);
            }
        }
    }
    Ok(Request::from_parts(parts, body))
}

/// An empty response with `code`.
fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

/// Runs hyper's per-stream tasks where the server runs its connections.
#[derive(Clone)]
struct Exec(Spawner);

impl<F> hyper::rt::Executor<F> for Exec
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        self.0.detach(async move {
            let _ = future.await;
        });
    }
}

/// The requests under way on one connection, and since when none has been.
struct Activity(Mutex<Load>);

struct Load {
    open: usize,
    since: Instant,
}

impl Activity {
    fn new() -> Self {
        Self(Mutex::new(Load { open: 0, since: Instant::now() }))
    }

    fn load(&self) -> std::sync::MutexGuard<'_, Load> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long to wait before looking again; `None` once nothing has been under way for
    /// `idle`.
    fn until_idle(&self, idle: Duration) -> Option<Duration> {
        let load = self.load();
        if load.open > 0 {
            return Some(idle);
        }
        idle.checked_sub(load.since.elapsed()).filter(|left| !left.is_zero())
    }
}

/// One request under way, from when its stream is accepted until its response's last byte
/// is sent (or the stream is reset): the guard is in the exchange's future, then in the
/// response body.
struct Busy(Arc<Activity>);

impl Busy {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.load().open += 1;
        Self(Arc::clone(activity))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut load = self.0.load();
        load.open = load.open.saturating_sub(1);
        load.since = Instant::now();
    }
}

/// A response body that keeps its request counted as under way.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
