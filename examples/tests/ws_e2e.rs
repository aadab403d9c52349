//! End to end over WebSocket on 127.0.0.1: our client <-> our server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::schema::tools::CallToolResult;
use talaria::ws::{WsServer, WsServerOptions};
use talaria_examples::child::ServerChild;

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

#[test]
fn fifty_clients_each_making_two_hundred_calls_get_every_answer_exactly_once() {
    let server = talaria_examples::everything::server();
    let listening = WsServer::bind(&server, "127.0.0.1:0", WsServerOptions::default()).unwrap();
    let url = format!("ws://{}/ws", listening.local_addr());
    let workers: Vec<_> = (0..50)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let client = Client::websocket(&url, &[], ClientOptions::new(format!("client-{c}"), "1")).unwrap();
                let mut answers = Vec::with_capacity(200);
                for i in 0..200 {
                    let text = format!("{c}:{i}");
                    answers.push(text_of(&client.call_tool("echo", json!({"text": text})).unwrap()));
                }
                // The server counted this connection's calls in its own per-session state.
                let counted = text_of(&client.call_tool("calls", json!({})).unwrap());
                (c, answers, counted)
            })
        })
        .collect();
    for worker in workers {
        let (c, answers, counted) = worker.join().unwrap();
        let expected: Vec<String> = (0..200).map(|i| format!("{c}:{i}")).collect();
        assert_eq!(answers, expected, "client {c}");
        assert_eq!(counted, "200", "client {c}: per-session state");
    }
    listening.shutdown();
}

#[test]
fn the_async_handle_pipelines_over_websocket() {
    let server = talaria_examples::everything::server();
    let listening = WsServer::bind(&server, "127.0.0.1:0", WsServerOptions::default()).unwrap();
    let url = format!("ws://{}/ws", listening.local_addr());
    let client = Client::websocket(&url, &[("Authorization", "Bearer x")], ClientOptions::new("async", "1")).unwrap();
    let client = client.to_async();
    smol::block_on(async {
        let calls: Vec<_> = (0..200).map(|i| client.call_tool("echo", json!({"text": i.to_string()}))).collect();
        for (i, call) in calls.into_iter().enumerate() {
            assert_eq!(text_of(&call.await.unwrap()), i.to_string());
        }
    });
}

fn upgrade(addr: std::net::SocketAddr, path: &str, origin: Option<&str>) -> String {
    upgrade_as(addr, &addr.to_string(), path, origin)
}

/// An upgrade request naming `host`; the server's status line.
fn upgrade_as(addr: std::net::SocketAddr, host: &str, path: &str, origin: Option<&str>) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: mcp\r\n{origin}\r\n"
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(stream).read_line(&mut status).unwrap();
    status
}

#[test]
fn upgrades_are_checked_for_path_and_origin() {
    let server = talaria_examples::everything::server();
    let options = WsServerOptions::default().allow_origin("https://app.example");
    let listening = WsServer::bind(&server, "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr();
    assert!(upgrade(addr, "/ws", None).contains("101"), "no origin: not a browser, allowed");
    assert!(upgrade(addr, "/ws", Some("http://localhost:3000")).contains("101"));
    assert!(upgrade(addr, "/ws", Some("https://app.example")).contains("101"));
    assert!(upgrade(addr, "/ws", Some("https://evil.example")).contains("403"));
    assert!(upgrade(addr, "/elsewhere", None).contains("404"));
    let refused = Client::websocket(&format!("ws://{addr}/nope"), &[], ClientOptions::new("c", "1"));
    assert!(matches!(refused, Err(ClientError::HttpStatus { status: 404, .. })), "{refused:?}");
    // Bound to loopback: a rebinding attacker's host name is refused, localhost names are not.
    assert!(upgrade_as(addr, "attacker.example:80", "/ws", None).contains("403"));
    assert!(upgrade_as(addr, &format!("localhost:{}", addr.port()), "/ws", None).contains("101"));
    let named = WsServerOptions::default().allow_host("mcp.example");
    let listening = WsServer::bind(&server, "127.0.0.1:0", named).unwrap();
    assert!(upgrade_as(listening.local_addr(), "mcp.example", "/ws", None).contains("101"));
    assert!(upgrade_as(listening.local_addr(), "other.example", "/ws", None).contains("403"));
}

#[test]
fn a_half_sent_handshake_is_cut_at_the_handshake_timeout() {
    let server = talaria_examples::everything::server();
    let options = WsServerOptions::default().handshake_timeout(Duration::from_millis(300));
    let listening = WsServer::bind(&server, "127.0.0.1:0", options).unwrap();
    let addr = listening.local_addr();
    for trickle in [false, true] {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let start = std::time::Instant::now();
        write!(stream, "GET /ws HTTP/1.1\r\nHost: {addr}\r\n").unwrap();
        if trickle {
            // A byte every 100 ms: each read is quick, the whole never arrives in time.
            for _ in 0..20 {
                std::thread::sleep(Duration::from_millis(100));
                if stream.write_all(b"X").is_err() {
                    break;
                }
            }
        }
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stream, &mut rest);
        let took = start.elapsed();
        // The trickle would last 2 s: being cut well before shows the deadline covers the
        // whole handshake, not each read.
        assert!(took < Duration::from_millis(1500), "trickle {trickle}: cut after {took:?}");
        assert!(!String::from_utf8_lossy(&rest).contains("101"), "never upgraded");
    }
    // The server serves on.
    assert!(upgrade(addr, "/ws", None).contains("101"));
}

#[test]
fn the_everything_server_binary_serves_websocket() {
    let server =
        ServerChild::start(env!("CARGO_BIN_EXE_everything-server"), &["--transport", "ws", "--port", "0"]).unwrap();
    assert!(server.url.starts_with("ws://127.0.0.1:"), "{}", server.url);
    let client = Client::websocket(&server.url, &[], ClientOptions::new("c", "1")).unwrap();
    assert_eq!(text_of(&client.call_tool("echo", json!({"text": "over ws"})).unwrap()), "over ws");
    client.close();
}
