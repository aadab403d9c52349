//! The `talaria` binary over TLS: `serve-demo --tls-cert --tls-key` serves https://, and the
//! CLI reaches it with `--cacert` (a private CA), or refuses it, as a transport failure, when
//! the certificate is not trusted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::process::Output;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use serde_json::Value;

mod common;
use common::{json_lines, talaria, NetDemo};

/// A private CA and a certificate it signed for `localhost` and 127.0.0.1, as PEM files.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("talaria-cli-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        let cert = leaf.signed_by(&key, &ca).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
        Self { dir }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `talaria serve-demo --transport TRANSPORT` over TLS with `pki`'s certificate.
fn serve_tls(pki: &Pki, transport: &str) -> NetDemo {
    let (cert, key) = (pki.path("cert.pem"), pki.path("key.pem"));
    NetDemo::start_with(transport, &["--tls-cert", &cert, "--tls-key", &key])
}

#[test]
fn https_servers_are_reached_with_a_private_ca_and_refused_without_it() {
    let pki = Pki::new("https");
    for transport in ["http", "sse"] {
        let served = serve_tls(&pki, transport);
        assert!(served.url.starts_with("https://"), "{}", served.url);
        let url = served.url.replace("127.0.0.1", "localhost");
        // Trusted through --cacert: the URL alone picks the transport (an sse URL through the
        // fallback probe).
        let cacert = pki.path("ca.pem");
        let output =
            talaria(&["--json", "--cacert", &cacert, &url, "call-tool", "echo", "text=over tls", ":::", "show-state"]);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{transport}: {err}");
        let values = json_lines(&output);
        assert_eq!(values[0]["content"][0]["text"], "over tls", "{values:?}");
        let reached = values[1]["transport"].as_str().unwrap_or_default();
        assert_eq!(reached, if transport == "sse" { "sse" } else { "streamable-http" }, "{values:?}");
        // Not trusted: a transport failure naming the certificate, exit 4.
        let output = talaria(&["--json", "--timeout", "5s", &url, "ping"]);
        assert_eq!(output.status.code(), Some(4), "{}", String::from_utf8_lossy(&output.stderr));
        let failure = &json_lines(&output)[0];
        assert_eq!(failure["kind"], "transport", "{failure}");
        assert!(failure["message"].as_str().unwrap().to_lowercase().contains("certificate"), "{failure}");
    }
}

#[test]
fn a_cacert_that_cannot_be_read_is_a_usage_error() {
    let output = talaria(&["--json", "--cacert", "/nonexistent/ca.pem", "https://localhost:1/mcp", "ping"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(json_lines(&output)[0]["message"].as_str().unwrap().contains("--cacert"));
    let output = talaria(&["serve-demo", "--transport", "ws", "--tls-cert", "a", "--tls-key", "b"]);
    assert_eq!(output.status.code(), Some(2), "the WebSocket server has no TLS");
}

#[test]
fn doctor_checks_the_certificate() {
    let pki = Pki::new("doctor");
    let served = serve_tls(&pki, "http");
    let url = served.url.replace("127.0.0.1", "localhost");
    let finding = |output: &Output, check: &str| -> Value {
        let report = &json_lines(output)[0];
        report["findings"].as_array().unwrap().iter().find(|f| f["check"] == check).cloned().unwrap_or_default()
    };
    let trusted = talaria(&["--json", "--cacert", &pki.path("ca.pem"), "doctor", &url]);
    assert_eq!(trusted.status.code(), Some(0), "{}", String::from_utf8_lossy(&trusted.stdout));
    assert_eq!(finding(&trusted, "tls")["level"], "ok");
    assert_eq!(finding(&trusted, "redirects")["level"], "ok");
    assert_eq!(finding(&trusted, "auth")["detail"], "no sign-in asked");
    let untrusted = talaria(&["--json", "--timeout", "5s", "doctor", &url]);
    assert_eq!(untrusted.status.code(), Some(3));
    let tls = finding(&untrusted, "tls");
    assert_eq!(tls["level"], "error", "{tls}");
    assert!(tls["fix"].as_str().unwrap().contains("--cacert"), "{tls}");
}
