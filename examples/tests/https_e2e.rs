//! `https://` and `wss://` end to end: the SDK's clients against the SDK's servers behind a
//! small TLS-terminating proxy whose certificate a test CA signed (as a deployment behind
//! nginx or a load balancer would look). Blocking, smol and tokio hosts; the CA trusted
//! through `TlsRoots`, and refused when it is not.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection};
use serde_json::json;
use talaria::client::{AsyncClient, Client, ClientError, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};
use talaria::tls::TlsRoots;
use talaria::ws::{WsServer, WsServerOptions};

/// A test CA and a `localhost` certificate it signed, as a rustls server configuration.
struct Pki {
    ca_pem: String,
    server: Arc<ServerConfig>,
    /// The server's certificate chain and key, as PEM files hold them.
    chain_pem: String,
    key_pem: String,
}

fn pki() -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap().signed_by(&leaf_key, &ca).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca.der().clone()], key)
        .unwrap();
    let chain_pem = format!("{}{}", leaf.pem(), ca.pem());
    Pki { ca_pem: ca.pem(), server: Arc::new(server), chain_pem, key_pem: leaf_key.serialize_pem() }
}

/// Accepts TLS on a port of its own and relays each connection's plaintext to `backend`.
fn tls_proxy(backend: SocketAddr, config: Arc<ServerConfig>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let config = Arc::clone(&config);
            std::thread::spawn(move || relay(client, backend, config));
        }
    });
    port
}

/// One connection: TLS records from `client` in, plaintext to `backend`, and back. Polls both
/// non-blocking sockets (a test's load, not a server's).
fn relay(mut client: TcpStream, backend: SocketAddr, config: Arc<ServerConfig>) {
    let mut tls = ServerConnection::new(config).unwrap();
    let Ok(mut upstream) = TcpStream::connect(backend) else { return };
    client.set_nonblocking(true).unwrap();
    upstream.set_nonblocking(true).unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut busy = false;
        while tls.wants_write() {
            match tls.write_tls(&mut client) {
                Ok(_) => busy = true,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return,
            }
        }
        match tls.read_tls(&mut client) {
            Ok(0) => return,
            Ok(_) => {
                busy = true;
                if tls.process_new_packets().is_err() {
                    let _ = tls.write_tls(&mut client);
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
        loop {
            match tls.reader().read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    busy = true;
                    if write_all(&mut upstream, &buf[..n]).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return,
            }
        }
        match upstream.read(&mut buf) {
            Ok(0) => {
                tls.send_close_notify();
                let _ = tls.write_tls(&mut client);
                return;
            }
            Ok(n) => {
                busy = true;
                tls.writer().write_all(&buf[..n]).unwrap();
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
        if !busy {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// `write_all` on a non-blocking socket.
fn write_all(stream: &mut TcpStream, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match stream.write(bytes) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_micros(100)),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

fn trusting(pki: &Pki) -> ClientOptions {
    let roots = TlsRoots::none().add_pem(pki.ca_pem.as_bytes()).unwrap();
    ClientOptions::new("https-e2e", "1").tls_roots(roots)
}

/// The everything server over Streamable HTTP (the smol server: the blocking one answers
/// bursts of new connections slowly, as issue 19 says), behind the TLS proxy: its
/// `https://` URL.
fn https_server(pki: &Pki) -> (SmolHttpServer, String) {
    let listening =
        SmolHttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", HttpServerOptions::default())
            .unwrap();
    let port = tls_proxy(listening.local_addr(), Arc::clone(&pki.server));
    (listening, format!("https://localhost:{port}/mcp"))
}

#[test]
fn the_blocking_client_speaks_https_to_a_server_its_roots_trust() {
    let pki = pki();
    let (_listening, url) = https_server(&pki);
    let client = Client::http(&url, &[], trusting(&pki)).unwrap();
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "over tls"})).unwrap()), "over tls");
    let big = "z".repeat(256 * 1024);
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": big})).unwrap()).len(), big.len());
    client.close();
}

#[test]
fn a_certificate_no_root_vouches_for_is_refused() {
    let pki = pki();
    let (_listening, url) = https_server(&pki);
    // Mozilla's roots and the system's do not know the test CA.
    let refused =
        Client::http(&url, &[], ClientOptions::new("https-e2e", "1").connect_timeout(Duration::from_secs(10)));
    let error = refused.expect_err("an unknown issuer is refused");
    let text = error.to_string().to_lowercase();
    assert!(text.contains("certificate") || text.contains("issuer") || text.contains("tls"), "{error}");
    // Another CA's roots do not help either.
    let other = pki_other_ca();
    let refused = Client::http(&url, &[], ClientOptions::new("https-e2e", "1").tls_roots(other));
    assert!(matches!(refused, Err(ClientError::Connect(_) | ClientError::Call(_) | ClientError::Io(_))), "{refused:?}");
}

fn pki_other_ca() -> TlsRoots {
    TlsRoots::none().add_pem(pki().ca_pem.as_bytes()).unwrap()
}

#[test]
fn the_async_client_speaks_https_under_smol_and_tokio() {
    let pki = pki();
    let (_listening, url) = https_server(&pki);
    let under_smol = smol::block_on(async {
        let client = AsyncClient::http(&url, &[], trusting(&pki)).await.unwrap();
        text_of(&client.call_tool("echo", json!({"text": "smol"})).await.unwrap())
    });
    assert_eq!(under_smol, "smol");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let under_tokio = runtime.block_on(async {
        let client = AsyncClient::http(&url, &[], trusting(&pki)).await.unwrap();
        let calls: Vec<_> = (0..20)
            .map(|i| {
                let client = client.clone();
                tokio::spawn(async move {
                    text_of(&client.call_tool("echo", json!({"text": format!("t{i}")})).await.unwrap())
                })
            })
            .collect();
        let mut answers = Vec::new();
        for call in calls {
            answers.push(call.await.unwrap());
        }
        answers
    });
    assert_eq!(under_tokio, (0..20).map(|i| format!("t{i}")).collect::<Vec<_>>());
}

/// The everything server speaking TLS itself, its configuration read from PEM as from files:
/// its `https://` URL.
fn tls_server(pki: &Pki) -> (HttpServer, String) {
    let config = talaria::tls::server_config(pki.chain_pem.as_bytes(), pki.key_pem.as_bytes()).unwrap();
    let options = HttpServerOptions::default().tls(config);
    let listening = HttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", options).unwrap();
    let url = format!("https://localhost:{}/mcp", listening.local_addr().port());
    (listening, url)
}

#[test]
fn the_server_speaks_tls_itself_to_the_blocking_smol_and_tokio_clients() {
    let pki = pki();
    let (_listening, url) = tls_server(&pki);
    let blocking = Client::http(&url, &[], trusting(&pki)).unwrap();
    let big = "y".repeat(256 * 1024);
    assert_eq!(text_of(&blocking.call_tool("echo", json!({"text": big})).unwrap()).len(), big.len());
    // The smol client (its own HTTP stack: hyper's client, rustls), both eras.
    let (stateless, legacy) = smol::block_on(async {
        let stateless = talaria::smol::http(&url, &[], trusting(&pki)).await.unwrap();
        let legacy_options = trusting(&pki)
            .mode(talaria::core::session::ClientMode::Legacy)
            .versions(vec![talaria::core::version::ProtocolVersion::V2025_06_18]);
        let legacy = talaria::smol::http(&url, &[], legacy_options).await.unwrap();
        (
            text_of(&stateless.call_tool("echo", json!({"text": "smol"})).await.unwrap()),
            text_of(&legacy.call_tool("echo", json!({"text": "smol legacy"})).await.unwrap()),
        )
    });
    assert_eq!((stateless.as_str(), legacy.as_str()), ("smol", "smol legacy"));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let under_tokio = runtime.block_on(async {
        let client = AsyncClient::http(&url, &[], trusting(&pki)).await.unwrap();
        text_of(&client.call_tool("echo", json!({"text": "tokio"})).await.unwrap())
    });
    assert_eq!(under_tokio, "tokio");
    // Untrusted, or plain HTTP to the TLS port: refused, and the server serves on.
    let untrusted = smol::block_on(talaria::smol::http(&url, &[], ClientOptions::new("https-e2e", "1")));
    assert!(untrusted.is_err(), "an unknown issuer is refused by the smol client");
    let plain = Client::http(
        &url.replace("https://", "http://"),
        &[],
        ClientOptions::new("plain", "1").connect_timeout(Duration::from_secs(5)),
    );
    assert!(plain.is_err(), "plain HTTP is not served on a TLS port");
    assert_eq!(text_of(&blocking.call_tool("echo", json!({"text": "still"})).unwrap()), "still");
}

#[test]
fn pem_that_makes_no_server_is_refused_with_a_typed_error() {
    let pki = pki();
    let no_cert = talaria::tls::server_config(b"", pki.key_pem.as_bytes());
    assert!(matches!(no_cert, Err(talaria::tls::TlsError::Pem(_))), "{no_cert:?}");
    let no_key = talaria::tls::server_config(pki.chain_pem.as_bytes(), b"not a key");
    assert!(matches!(no_key, Err(talaria::tls::TlsError::Key(_))), "{no_key:?}");
    let other = self::pki();
    let mismatched = talaria::tls::server_config(pki.chain_pem.as_bytes(), other.key_pem.as_bytes());
    assert!(matches!(mismatched, Err(talaria::tls::TlsError::Server(_))), "{mismatched:?}");
}

#[test]
fn the_websocket_client_speaks_wss_through_the_same_roots() {
    let pki = pki();
    let listening =
        WsServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", WsServerOptions::default()).unwrap();
    let port = tls_proxy(listening.local_addr(), Arc::clone(&pki.server));
    let url = format!("wss://localhost:{port}/ws");
    let client = Client::websocket(&url, &[], trusting(&pki)).unwrap();
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "wss"})).unwrap()), "wss");
    let untrusted = Client::websocket(&url, &[], ClientOptions::new("https-e2e", "1"));
    assert!(untrusted.is_err(), "an unknown issuer is refused over wss too");
    client.close();
}
