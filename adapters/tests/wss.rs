//! `wss://` end to end: our WebSocket client over TLS against a small TLS WebSocket server
//! (rustls with a self-signed certificate, the core's server endpoint behind it).
#![cfg(feature = "tls")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::result_large_err, missing_docs)]

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Instant;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};
use serde_json::json;
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::schema::Implementation;
use talaria::core::server::{Endpoint, Router};
use talaria::core::session::{Output, Route, ServerConfig as McpServerConfig};
use tungstenite::Message;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Serves one MCP connection over TLS WebSocket on a thread; returns the port and the CA.
fn tls_server() -> (u16, CertificateDer<'static>) {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let der = cert.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der()));
    let config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        let tls = StreamOwned::new(ServerConnection::new(config).unwrap(), tcp);
        let echo_subprotocol = |_: &tungstenite::handshake::server::Request,
                                mut response: tungstenite::handshake::server::Response| {
            response.headers_mut().insert("Sec-WebSocket-Protocol", "mcp".parse().unwrap());
            Ok(response)
        };
        let mut ws = tungstenite::accept_hdr(tls, echo_subprotocol).unwrap();
        let router = Router::<()>::builder()
            .tool(Tool::new("echo", Default::default()), |_ctx, args: serde_json::Value| {
                Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default().to_owned()))
            })
            .build();
        let config =
            McpServerConfig::new(Implementation::new("tls-server", "1")).with_capabilities(router.capabilities());
        let mut endpoint = Endpoint::new(config, ());
        while let Ok(message) = ws.read() {
            let Message::Text(text) = message else { continue };
            endpoint.handle_frame(Instant::now(), Route::Connection, text.as_bytes());
            while let Some(output) = endpoint.poll_output(&router) {
                if let Output::Transmit { payload, .. } = output {
                    ws.send(Message::text(String::from_utf8(payload).unwrap())).unwrap();
                }
            }
        }
    });
    (port, der)
}

#[test]
fn wss_carries_calls_and_checks_the_certificate() {
    let (port, ca) = tls_server();
    let mut roots = RootCertStore::empty();
    roots.add(ca).unwrap();
    let tls = Arc::new(
        rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    let url = format!("wss://localhost:{port}/ws");
    let client =
        Client::websocket_tls(&url, &[("Authorization", "Bearer x")], tls, ClientOptions::new("tls", "1")).unwrap();
    assert_eq!(client.server_info().name, "tls-server");
    for i in 0..20 {
        let result = client.call_tool("echo", json!({"text": format!("secret {i}")})).unwrap();
        assert_eq!(result.content[0].as_text(), Some(format!("secret {i}").as_str()));
    }
    // Concurrent calls share the one TLS socket.
    let async_client = client.to_async();
    let calls: Vec<_> = (0..16).map(|i| async_client.call_tool("echo", json!({"text": i.to_string()}))).collect();
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.wait().unwrap().content[0].as_text(), Some(i.to_string().as_str()));
    }

    // The default roots do not trust a self-signed certificate.
    let (port, _) = tls_server();
    let refused = Client::websocket(&format!("wss://localhost:{port}/ws"), &[], ClientOptions::new("tls", "1"));
    assert!(matches!(refused, Err(ClientError::Connect(ref why)) if why.contains("certificate")), "{refused:?}");
}
