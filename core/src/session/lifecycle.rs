//! The lifecycle of a session, as one transition table that knows nothing of roles.
//!
//! ```text
//!                 start (client, legacy)        start (client, auto)
//!                        │                             │
//!   ┌────────────────────┼─────────────────────────────┼──────────────┐
//!   │                    ▼                             ▼              │
//!   │   AwaitingPeer ─► Initializing ◄─ fallback ─ Discovering        │
//!   │   (server)          │    │                       │              │
//!   │     initialize ─────┘    │ initialize result /   │ discover ok  │
//!   │     received             │ initialized received  │              │
//!   │                          ▼                       ▼              │
//!   │                         Ready ◄──────────────────┘              │
//!   │                          │ session lost (HTTP 404): back to     │
//!   │                          │ AwaitingPeer, initialize again       │
//!   │   close / transport gone │  (from any state)                    │
//!   │                          ▼                                      │
//!   └────────────────────────►Closed                                  │
//!                                                                     │
//!   A stateless server starts Ready: every request carries its own    │
//!   version and capabilities.                                         │
//! ```

/// Where a session is in its life.
///
/// # Examples
///
/// ```
/// use talaria_core::session::{Phase, Transition};
///
/// assert_eq!(Phase::Initializing.next(Transition::HandshakeDone), Some(Phase::Ready));
/// assert_eq!(Phase::Closed.next(Transition::HandshakeDone), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Server: waiting for `initialize` (legacy) or for any request (serving both eras).
    AwaitingPeer,
    /// Client: probing with `server/discover` (Auto or stateless mode).
    Discovering,
    /// The handshake is under way (`initialize` sent or answered, `initialized` pending).
    Initializing,
    /// Normal operation.
    Ready,
    /// Closed; nothing more happens.
    Closed,
}

/// What moves a session from one phase to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// Client: the `server/discover` probe was sent (Auto and Stateless modes).
    DiscoveryStarted,
    /// Client: the discover probe failed or timed out; fall back to `initialize`.
    FallBackToInitialize,
    /// Client: `initialize` was sent. Server: `initialize` was received and answered.
    HandshakeStarted,
    /// Client: the `initialize` result was accepted (and `initialized` sent).
    /// Server: `notifications/initialized` (or a first normal request) arrived.
    /// Either: a stateless `server/discover` exchange succeeded.
    HandshakeDone,
    /// Client: the server forgot an established legacy session (HTTP 404); start over.
    SessionLost,
    /// `close`, transport gone, or a fatal protocol error.
    Close,
}

impl Phase {
    /// The phase after `t`, or `None` if `t` is not allowed now.
    #[must_use]
    pub const fn next(self, t: Transition) -> Option<Self> {
        use Transition as T;
        match (self, t) {
            (Self::Closed, _) => None,
            (_, T::Close) => Some(Self::Closed),
            (Self::AwaitingPeer, T::DiscoveryStarted) | (Self::Discovering, T::FallBackToInitialize) => {
                Some(Self::Discovering)
            }
            (Self::AwaitingPeer | Self::Discovering, T::HandshakeStarted) => Some(Self::Initializing),
            (Self::AwaitingPeer | Self::Discovering | Self::Initializing, T::HandshakeDone) => Some(Self::Ready),
            (Self::Initializing | Self::Ready, T::SessionLost) => Some(Self::AwaitingPeer),
            _ => None,
        }
    }

    /// Whether normal requests may flow.
    #[must_use]
    pub const fn is_ready(self) -> bool {
        matches!(self, Self::Ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_is_terminal_and_close_always_works() {
        for p in [Phase::AwaitingPeer, Phase::Discovering, Phase::Initializing, Phase::Ready] {
            assert_eq!(p.next(Transition::Close), Some(Phase::Closed));
        }
        for t in [
            Transition::FallBackToInitialize,
            Transition::HandshakeStarted,
            Transition::HandshakeDone,
            Transition::Close,
        ] {
            assert_eq!(Phase::Closed.next(t), None);
        }
    }

    #[test]
    fn discovery_starts_only_from_the_beginning() {
        assert_eq!(Phase::AwaitingPeer.next(Transition::DiscoveryStarted), Some(Phase::Discovering));
        for p in [Phase::Discovering, Phase::Initializing, Phase::Ready, Phase::Closed] {
            assert_eq!(p.next(Transition::DiscoveryStarted), None, "{p:?}");
        }
    }

    #[test]
    fn ready_cannot_restart_the_handshake() {
        assert_eq!(Phase::Ready.next(Transition::HandshakeStarted), None);
        assert_eq!(Phase::Ready.next(Transition::HandshakeDone), None);
        assert_eq!(Phase::Initializing.next(Transition::HandshakeStarted), None);
    }
}
