//! What the HTTP clients tell a wire trace (see `ClientOptions::trace`): request and response
//! heads, and the fields of SSE events.

use talaria_core::codec::SseEvent;

use crate::client::{header_pairs, TraceEvent, TraceFn};

/// A response as the clients get it from `ureq`.
pub(super) type Response = ureq::http::Response<ureq::Body>;

/// An `http` header map as name/value pairs.
fn pairs(headers: &ureq::http::HeaderMap) -> Vec<(String, String)> {
    header_pairs(headers.iter().map(|(name, value)| (name.as_str(), value.as_bytes())))
}

/// Traces a request's head, about to be sent.
pub(super) fn request<B>(trace: Option<&TraceFn>, builder: &ureq::RequestBuilder<B>) {
    let Some(trace) = trace else { return };
    let method = builder.method_ref().map_or("?", ureq::http::Method::as_str);
    let url = builder.uri_ref().map(ToString::to_string).unwrap_or_default();
    let headers = builder.headers_ref().map(pairs).unwrap_or_default();
    trace(&TraceEvent::HttpRequest { method, url: &url, headers: &headers });
}

/// Traces a response's head.
pub(super) fn response(trace: Option<&TraceFn>, response: &Response) {
    if let Some(trace) = trace {
        let headers = pairs(response.headers());
        trace(&TraceEvent::HttpResponse { status: response.status().as_u16(), headers: &headers });
    }
}

/// Traces an SSE event's `event:`, `id:` and `retry:`, if it has any of them.
pub(super) fn sse_fields(trace: Option<&TraceFn>, event: &SseEvent) {
    if let (Some(trace), true) = (trace, event.event.is_some() || event.id.is_some() || event.retry.is_some()) {
        trace(&TraceEvent::SseEvent { event: event.event.as_deref(), id: event.id.as_deref(), retry: event.retry });
    }
}

/// Sends a request without a body, tracing both heads.
pub(super) fn call(
    trace: Option<&TraceFn>,
    builder: ureq::RequestBuilder<ureq::typestate::WithoutBody>,
) -> Result<Response, ureq::Error> {
    request(trace, &builder);
    let called = builder.call()?;
    response(trace, &called);
    Ok(called)
}

/// Sends a request with `body`, tracing both heads.
pub(super) fn send(
    trace: Option<&TraceFn>,
    builder: ureq::RequestBuilder<ureq::typestate::WithBody>,
    body: &[u8],
) -> Result<Response, ureq::Error> {
    request(trace, &builder);
    let sent = builder.send(body)?;
    response(trace, &sent);
    Ok(sent)
}
