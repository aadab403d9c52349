//! [`Setup`]: the client mode and revisions of a scenario, and the pairs built from them.

use std::fmt;

use talaria_core::schema::Implementation;
use talaria_core::session::{ClientConfig, ClientMode, ServerConfig};
use talaria_core::version::ProtocolVersion;

use super::pair::Pair;
use super::pipe::SimConfig;

/// How a scenario sets the two sides up: which client mode, which revisions each side speaks.
///
/// Scenarios that apply to both eras loop over [`Setup::ALL`].
///
/// # Examples
///
/// ```
/// use talaria_core::version::ProtocolVersion;
/// use talaria_tests::sim::Setup;
///
/// assert_eq!(Setup::AutoLegacyServer.expected_version(), ProtocolVersion::V2025_11_25);
/// assert!(Setup::AutoBoth.is_stateless());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setup {
    /// `ClientMode::Legacy`, the client restricted to one legacy revision; the server speaks
    /// every revision.
    Legacy(ProtocolVersion),
    /// `ClientMode::Stateless` against a server that speaks every revision.
    Stateless,
    /// `ClientMode::Auto` against a server that speaks every revision (ends stateless).
    AutoBoth,
    /// `ClientMode::Auto` against a server restricted to the legacy revisions (falls back to
    /// `initialize`, ends at 2025-11-25).
    AutoLegacyServer,
}

impl Setup {
    /// Every setup: each legacy revision, stateless, and Auto against both kinds of server.
    pub const ALL: [Self; 7] = [
        Self::Legacy(ProtocolVersion::V2024_11_05),
        Self::Legacy(ProtocolVersion::V2025_03_26),
        Self::Legacy(ProtocolVersion::V2025_06_18),
        Self::Legacy(ProtocolVersion::V2025_11_25),
        Self::Stateless,
        Self::AutoBoth,
        Self::AutoLegacyServer,
    ];

    /// The revision the session should settle on.
    #[must_use]
    pub const fn expected_version(self) -> ProtocolVersion {
        match self {
            Self::Legacy(v) => v,
            Self::Stateless | Self::AutoBoth => ProtocolVersion::V2026_07_28,
            Self::AutoLegacyServer => ProtocolVersion::LATEST_LEGACY,
        }
    }

    /// Whether the session ends up in the stateless era.
    #[must_use]
    pub const fn is_stateless(self) -> bool {
        matches!(self, Self::Stateless | Self::AutoBoth)
    }

    /// The client's configuration (name `sim-client`, version `1.0`, no capabilities).
    #[must_use]
    pub fn client_config(self) -> ClientConfig {
        let info = Implementation::new("sim-client", "1.0");
        match self {
            Self::Legacy(v) => {
                let mut c = ClientConfig::new(info).with_mode(ClientMode::Legacy);
                c.session.versions = vec![v];
                c
            }
            Self::Stateless => ClientConfig::new(info).with_mode(ClientMode::Stateless),
            Self::AutoBoth | Self::AutoLegacyServer => ClientConfig::new(info).with_mode(ClientMode::Auto),
        }
    }

    /// The server's configuration (name `sim-server`, version `2.0`, no capabilities).
    #[must_use]
    pub fn server_config(self) -> ServerConfig {
        let mut s = ServerConfig::new(Implementation::new("sim-server", "2.0"));
        if self == Self::AutoLegacyServer {
            s.session.versions.retain(|v| v.era() == talaria_core::version::Era::Legacy);
        }
        s
    }

    /// A pair with this setup's configurations.
    #[must_use]
    pub fn pair(self, sim: SimConfig) -> Pair {
        Pair::new(self.client_config(), self.server_config(), sim)
    }

    /// A pair whose handshake is done: the client is ready (and, in the legacy era, the
    /// server too; a stateless server gets ready with the first request).
    ///
    /// # Panics
    ///
    /// If the handshake does not complete.
    #[must_use]
    pub fn connected(self, sim: SimConfig) -> Pair {
        let mut pair = self.pair(sim);
        pair.connect();
        pair
    }
}

impl fmt::Display for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Legacy(v) => write!(f, "legacy {v}"),
            Self::Stateless => f.write_str("stateless"),
            Self::AutoBoth => f.write_str("auto vs dual-era server"),
            Self::AutoLegacyServer => f.write_str("auto vs legacy-only server"),
        }
    }
}
