//! What the server does with a session once one POST exchange is over: a stateless exchange's
//! session ends with it; a legacy session lives on, forgets the request's headers and is saved
//! for other processes; a request whose stream was dropped unlogged is cancelled.

use super::streams::Release;
use crate::alloc_prelude::*;

/// How a POST exchange ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostEnd {
    /// Every reply due on its stream was sent.
    Answered,
    /// Its response's writer left first (the client went away, or the handler ended the
    /// stream for SSE polling), and [`StreamRoutes::release_post`] said what became of the
    /// stream.
    ///
    /// [`StreamRoutes::release_post`]: super::streams::StreamRoutes::release_post
    Left(Release),
    /// The writer of a GET that had resumed the POST's stream left, the stream released so.
    /// The exchange that carried the request ended long ago: only the stream's fate follows.
    ResumedLeft(Release),
}

/// One thing to do after a POST exchange, in the order [`after_post`] gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AfterPost {
    /// Tell the session the POST's stream closed (`Session::handle_stream_closed`): the
    /// request it carried is cancelled. In the stateless era closing the stream is the only
    /// cancellation there is.
    CloseStream,
    /// End the session: a stateless exchange's session lives for its one request.
    EndSession,
    /// Forget the request's HTTP headers: the legacy session outlives the request.
    ForgetHeaders,
    /// Save the session to the session store (if the server has one), so that another
    /// process can serve its next request.
    Save,
}

/// What to do after a POST exchange that ended as `end`, on a `legacy` session (one with an
/// `Mcp-Session-Id`) or a stateless one.
///
/// # Examples
///
/// ```
/// use talaria_core::http::outcome::{after_post, AfterPost, PostEnd};
/// use talaria_core::http::streams::Release;
///
/// assert_eq!(after_post(false, PostEnd::Answered), [AfterPost::EndSession]);
/// assert_eq!(after_post(true, PostEnd::Answered), [AfterPost::ForgetHeaders, AfterPost::Save]);
/// assert_eq!(
///     after_post(false, PostEnd::Left(Release::Forgotten)),
///     [AfterPost::CloseStream, AfterPost::EndSession],
///     "the client closed a stateless request's stream: it is cancelled",
/// );
/// assert_eq!(after_post(true, PostEnd::Left(Release::Detached(3))), [AfterPost::ForgetHeaders, AfterPost::Save]);
/// ```
#[must_use]
pub fn after_post(legacy: bool, end: PostEnd) -> Vec<AfterPost> {
    let mut steps = Vec::with_capacity(3);
    if matches!(end, PostEnd::Left(Release::Forgotten) | PostEnd::ResumedLeft(Release::Forgotten)) {
        steps.push(AfterPost::CloseStream);
    }
    if matches!(end, PostEnd::ResumedLeft(_)) {
        return steps;
    }
    if legacy {
        steps.extend([AfterPost::ForgetHeaders, AfterPost::Save]);
    } else {
        steps.push(AfterPost::EndSession);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detached_stream_keeps_its_request_running() {
        assert_eq!(after_post(false, PostEnd::Left(Release::Detached(1))), [AfterPost::EndSession]);
        assert!(!after_post(true, PostEnd::Left(Release::Detached(1))).contains(&AfterPost::CloseStream));
    }

    #[test]
    fn a_resumed_stream_left_by_its_reader_touches_only_the_stream() {
        assert_eq!(after_post(true, PostEnd::ResumedLeft(Release::Detached(2))), []);
        assert_eq!(after_post(true, PostEnd::ResumedLeft(Release::Forgotten)), [AfterPost::CloseStream]);
    }

    #[test]
    fn the_stream_closes_before_the_session_ends_or_is_saved() {
        for legacy in [false, true] {
            let steps = after_post(legacy, PostEnd::Left(Release::Forgotten));
            assert_eq!(steps.first(), Some(&AfterPost::CloseStream), "{steps:?}");
            assert_eq!(steps.contains(&AfterPost::Save), legacy);
            assert_eq!(steps.contains(&AfterPost::EndSession), !legacy);
        }
    }
}
