//! Extensions (2026-07-28): each side declares what it supports in `capabilities.extensions`,
//! an extension is in use when both do, and revisions with a handshake never see them. Our
//! client and server over the in-process transport.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::json;
use talaria::client::ClientOptions;
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::Router;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;

const VERBOSE: &str = "com.example/verbose";

/// A server declaring the `verbose` extension, whose `hello` tool says more to a client that
/// declared it too.
fn server() -> talaria::server::Server<()> {
    let settings = json!({"maxWords": 5}).as_object().cloned().unwrap();
    let router = Router::<()>::builder()
        .extension(VERBOSE, settings)
        .unwrap()
        .tool(
            Tool::new("hello", json!({"type": "object"}).as_object().cloned().unwrap()),
            |ctx, _: serde_json::Value| {
                let text = match ctx.client_extension(VERBOSE) {
                    Some(settings) => format!("Hello! Nice to meet you. ({settings})"),
                    None => "Hello".to_owned(),
                };
                Ok(CallToolResult::text(text))
            },
        )
        .build();
    talaria::server::Server::new("ext", "1", router)
}

fn hello(options: ClientOptions) -> (String, Option<serde_json::Value>) {
    let client = talaria::memory::connect(&server(), options).unwrap();
    let text = client.call_tool("hello", json!({})).unwrap().content[0].as_text().unwrap().to_owned();
    let server_side = client.server_capabilities().and_then(|c| c.extension(VERBOSE)).cloned();
    (text, server_side)
}

#[test]
fn an_extension_both_sides_declare_is_in_use() {
    let settings = json!({"style": "warm"}).as_object().cloned().unwrap();
    let options = ClientOptions::new("ext", "1").mode(ClientMode::Stateless).extension(VERBOSE, settings).unwrap();
    let (text, server_side) = hello(options);
    assert_eq!(text, r#"Hello! Nice to meet you. ({"style":"warm"})"#, "the handler sees the client's settings");
    assert_eq!(server_side, Some(json!({"maxWords": 5})), "the client sees the server's");
}

#[test]
fn an_extension_only_one_side_declares_is_not() {
    let (text, server_side) = hello(ClientOptions::new("ext", "1").mode(ClientMode::Stateless));
    assert_eq!(text, "Hello");
    assert!(server_side.is_some(), "the server still declares it");
}

#[test]
fn revisions_with_a_handshake_carry_no_extensions() {
    let options = ClientOptions::new("ext", "1")
        .mode(ClientMode::Legacy)
        .versions(vec![ProtocolVersion::V2025_11_25])
        .extension(VERBOSE, Default::default())
        .unwrap();
    let (text, server_side) = hello(options);
    assert_eq!((text.as_str(), server_side), ("Hello", None));
}

#[test]
fn extension_ids_need_a_prefix() {
    assert!(ClientOptions::new("ext", "1").extension("verbose", Default::default()).is_err());
    assert!(Router::<()>::builder().extension("com.example/", Default::default()).is_err());
}
