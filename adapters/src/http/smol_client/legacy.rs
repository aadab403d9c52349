//! The smol legacy HTTP+SSE client (2024-11-05): a GET stream whose first `endpoint` event
//! names where to POST; every reply arrives on the stream. And the spec's
//! backwards-compatibility probe, which falls back to it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use smol::channel::Receiver;
use talaria_core::client::Endpoint;
use talaria_core::codec::{SseDecoder, SseEvent};
use talaria_core::http::client::{falls_back_to_legacy, AUTH_RETRIES};
use talaria_core::http::legacy::resolve_endpoint;
use talaria_core::session::{ClientMode, Route};

use super::wire::{split_url, Agent, Body};
use super::{lock, ChannelSink, Frame, MAX_DRAIN};
use crate::client::{
    start_connecting, AsyncClient, Authenticator, ClientError, ClientOptions, Teardown, TraceEvent, TraceFn,
};
use crate::conn::Conn;
use crate::http::traced::sse_fields;

/// What the stream and the POSTs share.
struct Link {
    /// The stream's URL: the resource credentials are for.
    url: String,
    post_agent: Arc<Agent>,
    post_url: String,
    post_target: String,
    headers: Vec<(String, String)>,
    /// Supplies the `Authorization` header, sent with POSTs only to the stream's origin.
    authenticator: Option<Arc<dyn Authenticator>>,
    conn: OnceLock<Weak<Conn<Endpoint>>>,
    closed: AtomicBool,
    trace: Option<TraceFn>,
    /// The task reading the stream; dropping it closes the stream (and the server's session).
    reader: Mutex<Option<smol::Task<()>>>,
}

impl Link {
    fn with_conn(&self, f: impl FnOnce(&Conn<Endpoint>)) {
        if let Some(conn) = self.conn.get().and_then(Weak::upgrade) {
            f(&conn);
        }
    }
}

/// Sends one request on `agent` with `headers` and `authorization`, tracing both heads.
async fn request(
    agent: &Arc<Agent>,
    (url, target): (&str, &str),
    method: &str,
    headers: Vec<(String, String)>,
    body: &[u8],
    trace: Option<&TraceFn>,
) -> std::io::Result<super::wire::Response> {
    if let Some(trace) = trace {
        trace(&TraceEvent::HttpRequest { method, url, headers: &headers });
    }
    let response = agent.send(method, target, &headers, body).await?;
    if let Some(trace) = trace {
        trace(&TraceEvent::HttpResponse { status: response.status, headers: &response.headers });
    }
    Ok(response)
}

/// POSTs each message in order (the server answers 202; replies come on the stream). A POST
/// that fails ends the connection, as a broken pipe would.
async fn post_all(link: Arc<Link>, outgoing: Receiver<Frame>) {
    let same_origin =
        split_url(&link.url).ok().map(|(origin, _)| origin) == split_url(&link.post_url).ok().map(|(o, _)| o);
    while let Ok((payload, _)) = outgoing.recv().await {
        let mut headers = link.headers.clone();
        headers.push(("Content-Type".into(), "application/json".into()));
        if same_origin {
            if let Some(authenticator) = link.authenticator.clone() {
                let url = link.url.clone();
                if let Some(authorization) = smol::unblock(move || authenticator.authorization(&url)).await {
                    headers.push(("Authorization".into(), authorization));
                }
            }
        }
        let sent = request(
            &link.post_agent,
            (&link.post_url, &link.post_target),
            "POST",
            headers,
            &payload,
            link.trace.as_ref(),
        )
        .await;
        match sent {
            Ok(mut response) if (200..300).contains(&response.status) => response.body.drain(MAX_DRAIN).await,
            _ => {
                link.with_conn(|conn| conn.with(|endpoint, now| endpoint.handle_closed(now)));
                return;
            }
        }
    }
}

/// Reads the stream's `message` events into the connection until it ends.
async fn read_messages(link: Arc<Link>, mut body: Body, mut decoder: SseDecoder) {
    let mut buf = Vec::new();
    while !link.closed.load(Ordering::Acquire) {
        buf.clear();
        if !matches!(body.read(&mut buf).await, Ok(true)) {
            break;
        }
        let mut frames = Vec::new();
        decoder.decode(&buf, |event| {
            if let Ok(event) = event {
                sse_fields(link.trace.as_ref(), &event);
                if is_message(&event) {
                    frames.push(event.data);
                }
            }
        });
        link.with_conn(|conn| {
            for frame in frames {
                conn.with(|endpoint, now| endpoint.handle_frame(now, Route::Connection, frame.as_bytes()));
            }
        });
    }
    link.with_conn(|conn| conn.with(|endpoint, now| endpoint.handle_closed(now)));
}

fn is_message(event: &SseEvent) -> bool {
    event.event.as_deref().is_none_or(|kind| kind == "message") && !event.data.is_empty()
}

/// Closes the stream: the server ends the session when its stream ends.
struct StreamTeardown(Arc<Link>);

impl Teardown for StreamTeardown {
    fn session_id(&self) -> Option<String> {
        talaria_core::http::legacy::session_in_query(&self.0.post_url).map(str::to_owned)
    }

    fn shutdown(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        drop(lock(&self.0.reader).take());
    }
}

/// Connects to a legacy HTTP+SSE server (2024-11-05): opens the event stream at `url`, POSTs
/// messages where its `endpoint` event says. The async counterpart of
/// [`Client::sse`](crate::client::Client::sse).
///
/// # Errors
///
/// [`ClientError::HttpStatus`] if the server refused the stream; [`ClientError::Connect`] if
/// it cannot be opened, names no endpoint, or the handshake fails.
///
/// # Examples
///
/// ```no_run
/// use talaria::client::ClientOptions;
///
/// smol::block_on(async {
///     let client = talaria::smol::sse("http://127.0.0.1:8080/sse", &[], ClientOptions::new("me", "1")).await?;
///     client.ping().await?;
///     Ok::<(), talaria::client::ClientError>(())
/// })?;
/// # Ok::<(), talaria::client::ClientError>(())
/// ```
pub async fn sse(url: &str, headers: &[(&str, &str)], options: ClientOptions) -> Result<AsyncClient, ClientError> {
    let mut options = options;
    if options.config.mode == ClientMode::Auto {
        // 2026-07-28 is not spoken over this transport: no probe, straight to `initialize`.
        options.config.mode = ClientMode::Legacy;
    }
    let bad = |why: String| ClientError::Connect(format!("{url}: {why}"));
    let (origin, target) = split_url(url).map_err(bad)?;
    let agent = Arc::new(Agent::new(&origin, 1, &options).map_err(bad)?);
    let headers: Vec<(String, String)> = headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let trace = options.trace.clone();
    let authenticator = options.authenticator.clone();
    let mut attempts = 0;
    let mut response = loop {
        let authorization = match authenticator.clone() {
            Some(a) => {
                let url = url.to_owned();
                smol::unblock(move || a.authorization(&url)).await
            }
            None => None,
        };
        let mut sent = headers.clone();
        sent.push(("Accept".into(), "text/event-stream".into()));
        if let Some(authorization) = &authorization {
            sent.push(("Authorization".into(), authorization.clone()));
        }
        let mut response =
            request(&agent, (url, &target), "GET", sent, b"", trace.as_ref()).await.map_err(|e| bad(e.to_string()))?;
        if (200..300).contains(&response.status) {
            break response;
        }
        let status = response.status;
        let www_authenticate = response.header("WWW-Authenticate").map(str::to_owned);
        let refused = |detail| ClientError::HttpStatus {
            url: url.to_owned(),
            status,
            www_authenticate: www_authenticate.clone(),
            detail,
        };
        let Some(authenticator) =
            authenticator.clone().filter(|_| matches!(status, 401 | 403) && attempts < AUTH_RETRIES)
        else {
            return Err(refused(None));
        };
        attempts += 1;
        response.body.drain(MAX_DRAIN).await;
        let (url, header) = (url.to_owned(), www_authenticate.clone());
        let renewed =
            smol::unblock(move || authenticator.challenged(&url, authorization.as_deref(), status, header.as_deref()))
                .await;
        match renewed {
            Ok(true) => {}
            Ok(false) => return Err(refused(None)),
            Err(e) => return Err(refused(Some(e.to_string()))),
        }
    };
    // The first event names the POST URL.
    let mut decoder = SseDecoder::new();
    let mut endpoint = None;
    let mut pending = Vec::new();
    let mut buf = Vec::new();
    while endpoint.is_none() {
        buf.clear();
        if !response.body.read(&mut buf).await.map_err(|e| bad(e.to_string()))? {
            return Err(bad("the stream ended before its endpoint event".into()));
        }
        decoder.decode(&buf, |event| match event {
            Ok(event) if event.event.as_deref() == Some("endpoint") && endpoint.is_none() => {
                sse_fields(trace.as_ref(), &event);
                endpoint = Some(event.data);
            }
            Ok(event) if is_message(&event) => pending.push(event.data),
            _ => {}
        });
    }
    let data = endpoint.unwrap_or_default();
    let post_url = resolve_endpoint(url, &data).ok_or_else(|| bad(format!("bad endpoint {data:?}")))?;
    let (post_origin, post_target) = split_url(&post_url).map_err(bad)?;
    let post_agent =
        if post_origin == origin { agent } else { Arc::new(Agent::new(&post_origin, 1, &options).map_err(bad)?) };
    let link = Arc::new(Link {
        url: url.to_owned(),
        post_agent,
        post_url,
        post_target,
        headers,
        authenticator,
        conn: OnceLock::new(),
        closed: AtomicBool::new(false),
        trace,
        reader: Mutex::new(None),
    });
    let (tx, rx) = smol::channel::unbounded();
    let reading = Arc::clone(&link);
    let body = response.body;
    let (connecting, ready) = start_connecting(
        options,
        Box::new(ChannelSink(tx)),
        Box::new(StreamTeardown(Arc::clone(&link))),
        move |conn| {
            let _ = reading.conn.set(Arc::downgrade(&conn));
            for frame in pending {
                conn.with(|endpoint, now| endpoint.handle_frame(now, Route::Connection, frame.as_bytes()));
            }
            smol::spawn(post_all(Arc::clone(&reading), rx)).detach();
            *lock(&reading.reader) = Some(smol::spawn(read_messages(Arc::clone(&reading), body, decoder)));
            Ok(())
        },
    )?;
    crate::smol::handshake(connecting, ready).await
}

/// Connects to `url` the way the spec's backwards-compatibility probe says: Streamable HTTP
/// first; if the server refuses that with a 4xx that is not a modern MCP error, the legacy
/// HTTP+SSE transport at the same URL. The async counterpart of
/// [`Client::http_or_sse`](crate::client::Client::http_or_sse).
///
/// # Errors
///
/// The legacy attempt's error when both fail.
pub async fn http_or_sse(
    url: &str,
    headers: &[(&str, &str)],
    options: ClientOptions,
) -> Result<AsyncClient, ClientError> {
    probe_http(url, headers, options).await.map(|(client, _)| client)
}

/// [`http_or_sse`], saying which transport the probe settled on.
///
/// # Errors
///
/// As [`http_or_sse`].
pub async fn probe_http(
    url: &str,
    headers: &[(&str, &str)],
    options: ClientOptions,
) -> Result<(AsyncClient, crate::http::HttpTransport), ClientError> {
    use crate::http::HttpTransport;
    let fallback = options.clone();
    let pinned_modern = options.config.mode == ClientMode::Stateless;
    match super::connect_http(url, headers, options).await {
        Ok(client) => Ok((client, HttpTransport::Streamable)),
        Err((first, Some((status, modern)))) if !pinned_modern && falls_back_to_legacy(status, modern) => {
            match sse(url, headers, fallback).await {
                Ok(client) => Ok((client, HttpTransport::LegacySse)),
                Err(legacy) => Err(crate::http::worse_refusal(first, legacy)),
            }
        }
        Err((e, _)) => Err(e),
    }
}
