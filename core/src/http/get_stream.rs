//! A client's GET stream refused: retried, started afresh, or given up, by the status.

/// What a client does when the server refuses to open (or resume) its GET stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetRefused {
    /// Try again after the retry delay, from the same event: the server, or a proxy, could
    /// not serve it just then (a process behind a load balancer died, say).
    Retry,
    /// Try again after the retry delay, without `Last-Event-ID`: the server does not know the
    /// event resumed from (its log lost or dropped it), but the session goes on.
    Fresh,
    /// Give up the GET stream: the server offers none (`405`), the session is gone (`404`),
    /// or the request is refused for good.
    Stop,
}

/// What to do when a GET for the session's stream, `resuming` from an event or not, was
/// answered with `status` (not 200).
///
/// # Examples
///
/// ```
/// use talaria_core::http::get_stream::{get_refused, GetRefused};
///
/// assert_eq!(get_refused(502, true), GetRefused::Retry, "the proxy lost its upstream");
/// assert_eq!(get_refused(503, false), GetRefused::Retry);
/// assert_eq!(get_refused(400, true), GetRefused::Fresh, "an event the server does not know");
/// assert_eq!(get_refused(405, false), GetRefused::Stop, "no GET stream offered");
/// assert_eq!(get_refused(404, true), GetRefused::Stop, "the session is gone");
/// ```
#[must_use]
pub const fn get_refused(status: u16, resuming: bool) -> GetRefused {
    match status {
        408 | 429 | 500..=599 => GetRefused::Retry,
        400 if resuming => GetRefused::Fresh,
        _ => GetRefused::Stop,
    }
}
