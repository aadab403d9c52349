//! How a POST's SSE response starts on a session that logs its streams: when the response's
//! event-log stream opens, and what the client is sent before the first new event.
//!
//! A client of 2025-11-25 (the last legacy revision) is sent a priming event first: an empty
//! event whose id lets it resume a stream the server ends early. Older clients know no priming
//! event, so their stream needs no event id until its first real event; its log then opens
//! with that event, one store call for both, or never if the stream carries none.

use crate::version::{Feature, ProtocolVersion};

/// Whether a session of `version` primes its SSE streams with an empty event and may end them
/// early for the client to resume (SSE polling, 2025-11-25 until the stateless era).
///
/// # Examples
///
/// ```
/// use talaria_core::http::stream_start::primes_streams;
/// use talaria_core::version::ProtocolVersion;
///
/// assert!(primes_streams(Some(ProtocolVersion::V2025_11_25)));
/// assert!(!primes_streams(Some(ProtocolVersion::V2025_06_18)));
/// assert!(!primes_streams(None), "no version negotiated yet");
/// ```
#[must_use]
pub fn primes_streams(version: Option<ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.supports(Feature::SsePolling) && !v.supports(Feature::Stateless))
}

/// Why a POST's response ends right after its first steps while its request goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EarlyEnd {
    /// The handler freed the connection (SSE polling); the client resumes the stream later.
    Disconnected,
    /// The response's writer was cut (it lagged past its limit) before its first frame; the
    /// stream goes on in the log stream the cut opened.
    Cut,
}

/// When the response's event-log stream opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogOpening {
    /// The cut already opened it: the response goes on in that one.
    Opened,
    /// Now, before anything is sent: the priming event, or a stream the client must resume,
    /// needs an event id first.
    Now,
    /// With the stream's first event, in the same store call; never if it carries none.
    WithFirstEvent,
}

/// What the response sends before its first new event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Opening {
    /// Nothing: the first event is the first thing sent.
    Nothing,
    /// The priming event: an empty event with the log's id, and the client's retry delay.
    Priming,
    /// The first event the cut logged, replayed, so that a client that knows no priming event
    /// has an id to resume from.
    FirstLogged,
}

/// How one POST's SSE response starts: when its log opens, and what it sends first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamStart {
    /// When the response's event-log stream opens.
    pub log: LogOpening,
    /// What the response sends before its first new event.
    pub opening: Opening,
}

impl StreamStart {
    /// How the SSE response of a POST starts on a session of `version` that logs its streams,
    /// ended early as `early` (or not).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::http::stream_start::{EarlyEnd, LogOpening, Opening, StreamStart};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let old = Some(ProtocolVersion::V2025_06_18);
    /// let start = StreamStart::for_post(old, None);
    /// assert_eq!(start.log, LogOpening::WithFirstEvent, "no id is needed before the first event");
    /// assert_eq!(start.opening, Opening::Nothing);
    ///
    /// let start = StreamStart::for_post(old, Some(EarlyEnd::Cut));
    /// assert_eq!((start.log, start.opening), (LogOpening::Opened, Opening::FirstLogged));
    ///
    /// let new = Some(ProtocolVersion::V2025_11_25);
    /// let start = StreamStart::for_post(new, None);
    /// assert_eq!((start.log, start.opening), (LogOpening::Now, Opening::Priming));
    /// ```
    #[must_use]
    pub fn for_post(version: Option<ProtocolVersion>, early: Option<EarlyEnd>) -> Self {
        let priming = primes_streams(version);
        let log = match early {
            Some(EarlyEnd::Cut) => LogOpening::Opened,
            Some(EarlyEnd::Disconnected) => LogOpening::Now,
            None if priming => LogOpening::Now,
            None => LogOpening::WithFirstEvent,
        };
        let opening = match early {
            _ if priming => Opening::Priming,
            Some(EarlyEnd::Cut) => Opening::FirstLogged,
            _ => Opening::Nothing,
        };
        Self { log, opening }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Option<ProtocolVersion>; 6] = [
        None,
        Some(ProtocolVersion::V2024_11_05),
        Some(ProtocolVersion::V2025_03_26),
        Some(ProtocolVersion::V2025_06_18),
        Some(ProtocolVersion::V2025_11_25),
        Some(ProtocolVersion::V2026_07_28),
    ];

    #[test]
    fn only_2025_11_25_primes_its_streams() {
        let priming: Vec<_> = ALL.into_iter().filter(|v| primes_streams(*v)).collect();
        assert_eq!(priming, [Some(ProtocolVersion::V2025_11_25)]);
    }

    #[test]
    fn a_priming_stream_always_sends_its_priming_event_and_opens_its_log_first() {
        let v = Some(ProtocolVersion::V2025_11_25);
        for early in [None, Some(EarlyEnd::Disconnected)] {
            assert_eq!(
                StreamStart::for_post(v, early),
                StreamStart { log: LogOpening::Now, opening: Opening::Priming }
            );
        }
        assert_eq!(
            StreamStart::for_post(v, Some(EarlyEnd::Cut)),
            StreamStart { log: LogOpening::Opened, opening: Opening::Priming }
        );
    }

    #[test]
    fn a_stream_without_priming_opens_its_log_lazily_unless_it_ended_early() {
        for v in ALL.into_iter().filter(|v| !primes_streams(*v)) {
            assert_eq!(StreamStart::for_post(v, None).log, LogOpening::WithFirstEvent, "{v:?}");
            assert_eq!(
                StreamStart::for_post(v, Some(EarlyEnd::Disconnected)),
                StreamStart { log: LogOpening::Now, opening: Opening::Nothing },
                "{v:?}"
            );
            assert_eq!(
                StreamStart::for_post(v, Some(EarlyEnd::Cut)),
                StreamStart { log: LogOpening::Opened, opening: Opening::FirstLogged },
                "{v:?}"
            );
        }
    }
}
