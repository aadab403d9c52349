//! TLS for the clients (`https://`, `wss://`): rustls with ring, trusting Mozilla's roots and
//! the operating system's store unless told otherwise.
//!
//! [`TlsRoots`] says which certificate authorities a client trusts; give it to
//! [`ClientOptions::tls_roots`](crate::client::ClientOptions::tls_roots). A private CA (a test
//! server's, a company's) is added with [`TlsRoots::add_pem`] or [`TlsRoots::add_der`], or
//! trusted alone with [`TlsRoots::none`] first.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

/// Why TLS roots could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The PEM text held no certificate, or one that could not be read.
    #[error("no certificate could be read from the PEM text: {0}")]
    Pem(String),
    /// The PEM text held no private key, or one that could not be read.
    #[error("no private key could be read from the PEM text: {0}")]
    Key(String),
    /// rustls refused the certificate chain and key (a key that does not match, say).
    #[error("the certificate and key do not make a TLS server: {0}")]
    Server(String),
}

/// A rustls server configuration (ring; TLS 1.2 and 1.3; ALPN `h2` then `http/1.1`)
/// presenting the certificate chain in `cert_pem` (the server's certificate first) with the
/// private key in `key_pem` (PKCS#8, PKCS#1 or SEC1): what
/// [`HttpServerOptions::tls`](crate::http::HttpServerOptions::tls) takes. A client that offers
/// `h2` is served HTTP/2, any other HTTP/1.1; [`SERVER_ALPN`] is the list, for a
/// configuration built another way.
///
/// # Errors
///
/// [`TlsError::Pem`] or [`TlsError::Key`] if the PEM texts hold none, [`TlsError::Server`] if
/// rustls refuses them.
///
/// # Examples
///
/// ```no_run
/// let cert = std::fs::read("/etc/mcp/cert.pem")?;
/// let key = std::fs::read("/etc/mcp/key.pem")?;
/// let config = talaria::tls::server_config(&cert, &key)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    use rustls::pki_types::PrivateKeyDer;
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Pem(e.to_string()))?;
    if chain.is_empty() {
        return Err(TlsError::Pem("no CERTIFICATE block".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::Key(e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Server(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::Server(e.to_string()))?;
    config.alpn_protocols = SERVER_ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// The ALPN protocols the HTTP server speaks, in its order of preference: HTTP/2 (`h2`), then
/// HTTP/1.1. [`server_config`] sets them; a `rustls::ServerConfig` of your own is used as it
/// is, so set them on it for HTTP/2 (rustls's builder leaves the list empty, and a server
/// without ALPN is spoken to in HTTP/1.1).
///
/// # Examples
///
/// ```
/// # let key = rcgen::KeyPair::generate().unwrap();
/// # let cert = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
/// # let (chain, key) = (vec![cert.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()));
/// let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
/// let mut config = rustls::ServerConfig::builder_with_provider(provider)
///     .with_safe_default_protocol_versions()?
///     .with_no_client_auth()
///     .with_single_cert(chain, key)?;
/// config.alpn_protocols = talaria::tls::SERVER_ALPN.iter().map(|p| p.to_vec()).collect();
/// let options = talaria::http::HttpServerOptions::default().tls(std::sync::Arc::new(config));
/// # let _ = options;
/// # Ok::<(), rustls::Error>(())
/// ```
pub const SERVER_ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// The certificate authorities a client trusts for `https://` and `wss://`.
///
/// The default trusts Mozilla's roots (the `webpki-root-certs` crate) and the operating
/// system's store (read once per process; `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured).
///
/// # Examples
///
/// ```
/// use talaria::client::ClientOptions;
/// use talaria::tls::TlsRoots;
///
/// // A server whose certificate a private CA signed, and nothing else.
/// # let ca_pem = rcgen_ca_pem();
/// let roots = TlsRoots::none().add_pem(ca_pem.as_bytes())?;
/// let options = ClientOptions::new("me", "1").tls_roots(roots);
/// # let _ = options;
/// # fn rcgen_ca_pem() -> String {
/// #     rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap().cert.pem()
/// # }
/// # Ok::<(), talaria::tls::TlsError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct TlsRoots {
    mozilla: bool,
    system: bool,
    extra: Vec<CertificateDer<'static>>,
}

impl Default for TlsRoots {
    fn default() -> Self {
        Self { mozilla: true, system: true, extra: Vec::new() }
    }
}

impl TlsRoots {
    /// Mozilla's roots and the operating system's store: the default.
    pub fn new() -> Self {
        Self::default()
    }

    /// No roots at all: only what [`TlsRoots::add_pem`] and [`TlsRoots::add_der`] add.
    pub const fn none() -> Self {
        Self { mozilla: false, system: false, extra: Vec::new() }
    }

    /// Leaves the operating system's store out (Mozilla's roots and what is added only).
    pub const fn without_system(mut self) -> Self {
        self.system = false;
        self
    }

    /// Also trusts the certificate authority in `der` (one X.509 certificate, DER).
    pub fn add_der(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.extra.push(CertificateDer::from(der.into()));
        self
    }

    /// Also trusts every certificate in `pem` (`-----BEGIN CERTIFICATE-----` blocks).
    ///
    /// # Errors
    ///
    /// [`TlsError::Pem`] if `pem` holds no certificate or a malformed one.
    pub fn add_pem(mut self, pem: &[u8]) -> Result<Self, TlsError> {
        let before = self.extra.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            self.extra.push(cert.map_err(|e| TlsError::Pem(e.to_string()))?);
        }
        if self.extra.len() == before {
            return Err(TlsError::Pem("no CERTIFICATE block".into()));
        }
        Ok(self)
    }

    /// Every certificate trusted, as DER.
    pub(crate) fn certificates(&self) -> Vec<CertificateDer<'static>> {
        let mut all = Vec::new();
        if self.mozilla {
            all.extend(webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().cloned());
        }
        if self.system {
            all.extend(system_roots().iter().cloned());
        }
        all.extend(self.extra.iter().cloned());
        all
    }

    /// A rustls client configuration trusting these roots (ring, TLS 1.2 and 1.3). The
    /// default roots' configuration is built once per process.
    #[must_use]
    pub fn client_config(&self) -> Arc<ClientConfig> {
        static DEFAULT: OnceLock<Arc<ClientConfig>> = OnceLock::new();
        if self.is_default() {
            return Arc::clone(DEFAULT.get_or_init(|| build_config(&self.certificates())));
        }
        build_config(&self.certificates())
    }

    fn is_default(&self) -> bool {
        self.mozilla && self.system && self.extra.is_empty()
    }

    /// The `ureq` TLS configuration trusting these roots, for a `ureq` agent of your own
    /// (the `talaria` CLI's `doctor` makes its plain HTTP checks with one).
    ///
    /// # Examples
    ///
    /// ```
    /// let agent: ureq::Agent = ureq::Agent::config_builder()
    ///     .tls_config(talaria::tls::TlsRoots::new().ureq_config())
    ///     .build()
    ///     .into();
    /// # drop(agent);
    /// ```
    #[cfg(feature = "http")]
    #[must_use]
    pub fn ureq_config(&self) -> ureq::tls::TlsConfig {
        static DEFAULT: OnceLock<Arc<Vec<ureq::tls::Certificate<'static>>>> = OnceLock::new();
        let to_ureq = |roots: &Self| -> Arc<Vec<ureq::tls::Certificate<'static>>> {
            Arc::new(roots.certificates().iter().map(|c| ureq::tls::Certificate::from_der(c).to_owned()).collect())
        };
        let certs = if self.is_default() { Arc::clone(DEFAULT.get_or_init(|| to_ureq(self))) } else { to_ureq(self) };
        ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::Rustls)
            .root_certs(ureq::tls::RootCerts::Specific(certs))
            .build()
    }
}

/// The operating system's trusted roots, read once (unreadable entries are skipped).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static SYSTEM: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    SYSTEM.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

fn build_config(certs: &[CertificateDer<'static>]) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    // A certificate rustls cannot use as a trust anchor is left out, not fatal.
    let _ = roots.add_parsable_certificates(certs.iter().cloned());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|_| ClientConfig::builder());
    Arc::new(builder.with_root_certificates(roots).with_no_client_auth())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_default_trusts_mozilla_and_none_trusts_only_what_is_added() {
        assert!(TlsRoots::new().certificates().len() >= webpki_root_certs::TLS_SERVER_ROOT_CERTS.len());
        assert!(TlsRoots::none().certificates().is_empty());
        let ca = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap().cert;
        let roots = TlsRoots::none().add_pem(ca.pem().as_bytes()).unwrap();
        assert_eq!(roots.certificates(), vec![ca.der().clone()]);
        assert_eq!(TlsRoots::none().add_der(ca.der().to_vec()).certificates(), vec![ca.der().clone()]);
    }

    #[test]
    fn pem_without_a_certificate_is_an_error() {
        assert!(matches!(TlsRoots::none().add_pem(b"not pem"), Err(TlsError::Pem(_))));
        let broken = b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
        assert!(TlsRoots::none().add_pem(broken).is_err());
    }

    #[test]
    fn the_server_configuration_offers_h2_then_http_1_1() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
        let config = server_config(cert.pem().as_bytes(), key.serialize_pem().as_bytes()).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
    }

    #[test]
    fn the_default_configuration_is_built_once() {
        assert!(Arc::ptr_eq(&TlsRoots::new().client_config(), &TlsRoots::default().client_config()));
        assert!(!Arc::ptr_eq(&TlsRoots::none().client_config(), &TlsRoots::new().client_config()));
    }
}
