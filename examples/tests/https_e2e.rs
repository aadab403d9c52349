//! `https://` and `wss://` end to end: the SDK's clients against the SDK's servers behind a
//! small TLS-terminating proxy whose certificate a test CA signed (as a deployment behind
//! nginx or a load balancer would look). Blocking, smol and tokio hosts; the CA trusted
//! through `TlsRoots`, and refused when it is not. The server speaking TLS itself, and HTTP/2
//! to a client whose ALPN offers `h2`: calls, SSE streams and its limits over `h2`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection};
use serde_json::json;
use smol::Timer;
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

/// The everything server speaking TLS itself with `options` (ALPN `h2` and `http/1.1`, from
/// `talaria::tls::server_config`): its address.
fn tls_server_with(pki: &Pki, options: HttpServerOptions) -> (HttpServer, SocketAddr) {
    let config = talaria::tls::server_config(pki.chain_pem.as_bytes(), pki.key_pem.as_bytes()).unwrap();
    let listening =
        HttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", options.tls(config)).unwrap();
    let addr = listening.local_addr();
    (listening, addr)
}

/// Runs hyper's client tasks on smol's global executor.
#[derive(Clone, Copy)]
struct Spawn;

impl<F: std::future::Future + Send + 'static> hyper::rt::Executor<F> for Spawn
where
    F::Output: Send,
{
    fn execute(&self, future: F) {
        smol::spawn(future).detach();
    }
}

type TlsStream = futures_rustls::client::TlsStream<smol::net::TcpStream>;

/// A TLS connection to `addr` trusting the test CA and offering `alpn`: the stream, and the
/// protocol the handshake settled on.
async fn tls_connect(pki: &Pki, addr: SocketAddr, alpn: &[&[u8]]) -> (TlsStream, Option<Vec<u8>>) {
    let roots = TlsRoots::none().add_pem(pki.ca_pem.as_bytes()).unwrap();
    let mut config = (*roots.client_config()).clone();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = smol::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = futures_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp).await.unwrap();
    let negotiated = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    (tls, negotiated)
}

type Http2 = hyper::client::conn::http2::SendRequest<http_body_util::Full<bytes::Bytes>>;

/// An HTTP/2 connection to the server (ALPN `h2`), its connection task on smol.
async fn h2_connect(pki: &Pki, addr: SocketAddr) -> Http2 {
    let (tls, negotiated) = tls_connect(pki, addr, &[b"h2", b"http/1.1"]).await;
    assert_eq!(negotiated.as_deref(), Some(&b"h2"[..]), "the server picks h2 when offered");
    let (sender, connection) = hyper::client::conn::http2::Builder::new(Spawn)
        .timer(smol_hyper::rt::SmolTimer::new())
        .handshake(smol_hyper::rt::FuturesIo::new(tls))
        .await
        .unwrap();
    smol::spawn(connection).detach();
    sender
}

/// A POST to `/mcp` (as `https://{authority}/mcp`) with the headers every MCP client sends,
/// plus `extra`.
fn mcp_post(
    authority: &str,
    extra: &[(&str, &str)],
    body: &serde_json::Value,
) -> hyper::Request<http_body_util::Full<bytes::Bytes>> {
    let mut request = hyper::Request::post(format!("https://{authority}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    request.body(http_body_util::Full::new(bytes::Bytes::from(body.to_string()))).unwrap()
}

/// A response's head and whole body, as text.
async fn answer(response: hyper::Response<hyper::body::Incoming>) -> (hyper::http::response::Parts, String) {
    use http_body_util::BodyExt;
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (parts, String::from_utf8(bytes.to_vec()).unwrap())
}

/// `initialize` (2025-06-18) and `notifications/initialized` over `h2`: the session's headers.
async fn h2_session(h2: &mut Http2, authority: &str) -> Vec<(&'static str, String)> {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h2", "version": "1"}}});
    let response = h2.send_request(mcp_post(authority, &[], &init)).await.unwrap();
    assert_eq!(response.version(), hyper::Version::HTTP_2);
    let (head, body) = answer(response).await;
    assert_eq!(head.status, 200, "{body}");
    let session = head.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["protocolVersion"], "2025-06-18", "{reply}");
    assert!(reply["result"]["serverInfo"]["name"].is_string(), "{reply}");
    let headers = vec![("mcp-session-id", session), ("mcp-protocol-version", "2025-06-18".to_owned())];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (head, _) = answer(h2.send_request(mcp_post(authority, &pairs(&headers), &initialized)).await.unwrap()).await;
    assert_eq!(head.status, 202);
    headers
}

/// Name and value pairs, as `mcp_post` takes them.
fn pairs<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(n, v)| (*n, v.as_str())).collect()
}

#[test]
fn a_client_offering_h2_is_served_http2_calls_and_sse_streams_included() {
    let pki = pki();
    let (_listening, addr) = tls_server_with(&pki, HttpServerOptions::default());
    let authority = format!("localhost:{}", addr.port());
    smol::block_on(async {
        let mut h2 = h2_connect(&pki, addr).await;
        let session = h2_session(&mut h2, &authority).await;
        let session = pairs(&session);

        // A tools/call answered with JSON.
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 40}}});
        let response = h2.send_request(mcp_post(&authority, &session, &call)).await.unwrap();
        assert_eq!(response.version(), hyper::Version::HTTP_2);
        let (head, body) = answer(response).await;
        assert_eq!(head.status, 200, "{body}");
        assert_eq!(head.headers["content-type"], "application/json");
        let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(reply["id"], 2);
        assert_eq!(reply["result"]["structuredContent"], json!({"sum": 42}), "{reply}");

        // Twenty calls at once, streams of the one connection.
        let calls: Vec<_> = (0..20)
            .map(|i| {
                let mut h2 = h2.clone();
                let call = json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": format!("h2 {i}")}}});
                let request = mcp_post(&authority, &session, &call);
                smol::spawn(async move { answer(h2.send_request(request).await.unwrap()).await.1 })
            })
            .collect();
        for (i, call) in calls.into_iter().enumerate() {
            let reply: serde_json::Value = serde_json::from_str(&call.await).unwrap();
            assert_eq!(reply["id"], 100 + i);
            assert_eq!(reply["result"]["content"][0]["text"], format!("h2 {i}"), "{reply}");
        }

        // A call that reports progress is answered with an SSE stream, its events arriving as
        // they are sent (the first well before the result), then the result, then the end.
        let slow = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "slow", "arguments": {"steps": 3, "step_ms": 150}, "_meta": {"progressToken": "p"}}});
        let response = h2.send_request(mcp_post(&authority, &session, &slow)).await.unwrap();
        assert_eq!(response.version(), hyper::Version::HTTP_2);
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut body = response.into_body();
        let (mut text, mut first_progress, mut result) = (String::new(), None, None);
        while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
            let Ok(data) = frame.unwrap().into_data() else { continue };
            text.push_str(std::str::from_utf8(&data).unwrap());
            if first_progress.is_none() && text.contains("notifications/progress") {
                first_progress = Some(std::time::Instant::now());
            }
            if result.is_none() && text.contains("done after 3 steps") {
                result = Some(std::time::Instant::now());
            }
        }
        let (first_progress, result) = (first_progress.expect(&text), result.expect(&text));
        assert!(result - first_progress >= Duration::from_millis(150), "streamed, not buffered: {text}");
        assert_eq!(text.matches("notifications/progress").count(), 3, "{text}");
        let last = text.split("data: ").last().unwrap().trim();
        let reply: serde_json::Value = serde_json::from_str(last).unwrap();
        assert_eq!(reply["id"], 3, "{reply}");
    });
}

#[test]
fn a_client_offering_only_http_1_1_over_tls_is_served_http_1_1() {
    let pki = pki();
    let (_listening, addr) = tls_server_with(&pki, HttpServerOptions::default());
    let authority = format!("localhost:{}", addr.port());
    smol::block_on(async {
        for alpn in [&[&b"http/1.1"[..]][..], &[]] {
            let (tls, negotiated) = tls_connect(&pki, addr, alpn).await;
            let expected = alpn.first().map(|p| p.to_vec());
            assert_eq!(negotiated, expected, "offered {alpn:?}");
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(smol_hyper::rt::FuturesIo::new(tls)).await.unwrap();
            smol::spawn(connection).detach();
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h1", "version": "1"}}});
            let mut request = mcp_post(&authority, &[], &init);
            *request.uri_mut() = "/mcp".parse().unwrap();
            request.headers_mut().insert("host", authority.parse().unwrap());
            let response = sender.send_request(request).await.unwrap();
            assert_eq!(response.version(), hyper::Version::HTTP_11);
            let (head, body) = answer(response).await;
            assert_eq!(head.status, 200, "{body}");
            assert!(body.contains("\"protocolVersion\":\"2025-06-18\""), "{body}");
        }
    });
}

#[test]
fn h2_requests_past_the_limits_or_for_another_host_are_refused_and_the_server_serves_on() {
    let pki = pki();
    let mut endpoint = talaria::core::http::exchange::EndpointConfig::default().localhost_only(&[]);
    endpoint.max_body = 4096;
    let (_listening, addr) = tls_server_with(&pki, HttpServerOptions::default().endpoint(endpoint));
    let authority = format!("localhost:{}", addr.port());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h2", "version": "1"}}});
    smol::block_on(async {
        // A header block past max_head (64 KiB), one large field or many: the h2 crate answers
        // 431 and resets the stream; the connection serves on.
        let mut h2 = h2_connect(&pki, addr).await;
        let big = "a".repeat(80 * 1024);
        let response = h2.send_request(mcp_post(&authority, &[("x-big", &big)], &init)).await.unwrap();
        assert_eq!(response.status(), 431);
        let names: Vec<String> = (0..10).map(|i| format!("x-part-{i}")).collect();
        let part = "b".repeat(8 * 1024);
        let parts: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), part.as_str())).collect();
        let response = h2.send_request(mcp_post(&authority, &parts, &init)).await.unwrap();
        assert_eq!(response.status(), 431);
        // Many fields, the head within max_head: past max_headers (100), 431.
        let names: Vec<String> = (0..120).map(|i| format!("x-field-{i}")).collect();
        let many: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "v")).collect();
        let response = h2.send_request(mcp_post(&authority, &many, &init)).await.unwrap();
        assert_eq!(response.status(), 431);
        // A body past max_body: 413, as over HTTP/1.1 (the exchange's own limit).
        let echo = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "c".repeat(8192)}}});
        let response = h2.send_request(mcp_post(&authority, &[], &echo)).await.unwrap();
        assert_eq!(response.status(), 413);
        // `:authority` is the Host the DNS-rebinding check sees.
        let response = h2.send_request(mcp_post("attacker.example", &[], &init)).await.unwrap();
        let (head, body) = answer(response).await;
        assert_eq!(head.status, 403, "{body}");
        assert!(body.contains("attacker.example"), "{body}");
        // A Host naming another than :authority is malformed.
        let outcome = h2.send_request(mcp_post(&authority, &[("host", "attacker.example")], &init)).await.unwrap();
        assert_eq!(outcome.status(), 400);
        // The same connection, and a new one, still serve.
        let (head, _) = answer(h2.send_request(mcp_post(&authority, &[], &init)).await.unwrap()).await;
        assert_eq!(head.status, 200);
        let mut fresh = h2_connect(&pki, addr).await;
        let session = h2_session(&mut fresh, &authority).await;
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "still here"}}});
        let (_, body) = answer(fresh.send_request(mcp_post(&authority, &pairs(&session), &call)).await.unwrap()).await;
        assert!(body.contains("still here"), "{body}");
    });
}

#[test]
fn an_idle_h2_connection_is_shut_down_after_the_read_timeout() {
    let pki = pki();
    let mut options = HttpServerOptions::default();
    options.read_timeout = Duration::from_millis(300);
    let (_listening, addr) = tls_server_with(&pki, options);
    let authority = format!("localhost:{}", addr.port());
    smol::block_on(async {
        let mut h2 = h2_connect(&pki, addr).await;
        let session = h2_session(&mut h2, &authority).await;
        // A request under way for longer than the timeout keeps the connection: a slow call
        // (4 steps of 150 ms) streaming its progress.
        let slow = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "slow", "arguments": {"steps": 4, "step_ms": 150}, "_meta": {"progressToken": "p"}}});
        let (head, body) = answer(h2.send_request(mcp_post(&authority, &pairs(&session), &slow)).await.unwrap()).await;
        assert_eq!(head.status, 200);
        assert!(body.contains("done after 4 steps"), "{body}");
        assert!(!h2.is_closed());
        // Then nothing: GOAWAY, and the connection closes.
        let closed = smol::future::or(
            async {
                while !h2.is_closed() {
                    Timer::after(Duration::from_millis(20)).await;
                }
                true
            },
            async {
                Timer::after(Duration::from_secs(5)).await;
                false
            },
        )
        .await;
        assert!(closed, "an idle connection is closed");
    });
}

#[test]
fn the_smol_server_serves_h2_too() {
    let pki = pki();
    let config = talaria::tls::server_config(pki.chain_pem.as_bytes(), pki.key_pem.as_bytes()).unwrap();
    let options = HttpServerOptions::default().tls(config);
    let listening = SmolHttpServer::bind(&talaria_examples::everything::server(), "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr();
    let authority = format!("localhost:{}", addr.port());
    let text = smol::block_on(async {
        let mut h2 = h2_connect(&pki, addr).await;
        let session = h2_session(&mut h2, &authority).await;
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "smol h2"}}});
        let response = h2.send_request(mcp_post(&authority, &pairs(&session), &call)).await.unwrap();
        assert_eq!(response.version(), hyper::Version::HTTP_2);
        let reply: serde_json::Value = serde_json::from_str(&answer(response).await.1).unwrap();
        reply["result"]["content"][0]["text"].as_str().unwrap().to_owned()
    });
    assert_eq!(text, "smol h2");
    listening.shutdown();
}
