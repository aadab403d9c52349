//! The 2026-07-28 MUSTs of Streamable HTTP, each a row sent raw to both server flavours over
//! a real socket on 127.0.0.1: the status, the JSON-RPC error code and the id each refusal
//! carries (spec `basic/transports/streamable-http.mdx` and `basic/index.mdx` of 2026-07-28).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};

/// The `_meta` every 2026-07-28 request carries.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    })
}

/// A POST of `body` with the standard headers plus `extra` (`(name, value)`; a value of
/// `None` leaves the standard header out).
fn post(addr: &str, body: &Value, extra: &[(&str, Option<&str>)]) -> (u16, Value) {
    let text = body.to_string();
    let mut headers: Vec<(String, String)> = vec![
        ("Host".into(), "127.0.0.1".into()),
        ("Connection".into(), "close".into()),
        ("Content-Type".into(), "application/json".into()),
        ("Accept".into(), "application/json, text/event-stream".into()),
        ("MCP-Protocol-Version".into(), "2026-07-28".into()),
    ];
    if let Some(method) = body["method"].as_str() {
        headers.push(("Mcp-Method".into(), method.into()));
    }
    if let Some(name) = body["params"]["name"].as_str().or_else(|| body["params"]["uri"].as_str()) {
        headers.push(("Mcp-Name".into(), name.into()));
    }
    for (name, value) in extra {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        if let Some(value) = value {
            headers.push(((*name).to_owned(), (*value).to_owned()));
        }
    }
    let mut request = String::from("POST /mcp HTTP/1.1\r\n");
    for (name, value) in &headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{text}", text.len()));
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    let out = String::from_utf8_lossy(&out).into_owned();
    let status = out.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let (head, rest) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    let body = if chunked { dechunk(rest) } else { rest.to_owned() };
    // An SSE reply: its last data line.
    let json = body.lines().filter_map(|l| l.strip_prefix("data: ")).next_back().map_or(body.clone(), str::to_owned);
    (status, serde_json::from_str(&json).unwrap_or(Value::Null))
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    body
}

/// Runs `check` against the blocking and the smol server, each serving the everything demo.
fn on_both_servers(check: impl Fn(&str)) {
    let server = talaria_examples::everything::server();
    let blocking = HttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    check(&blocking.local_addr().to_string());
    let smol = SmolHttpServer::bind(&server, "127.0.0.1:0", HttpServerOptions::default()).unwrap();
    check(&smol.local_addr().to_string());
}

fn call(id: i64, method: &str, params: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn an_unknown_method_is_404_with_method_not_found() {
    on_both_servers(|addr| {
        let (status, body) = post(addr, &call(7, "no/such/method", &json!({"_meta": meta()})), &[]);
        assert_eq!((status, &body["error"]["code"], &body["id"]), (404, &json!(-32601), &json!(7)), "{body}");
    });
}

#[test]
fn a_version_header_that_disagrees_with_meta_is_400_header_mismatch_with_the_id() {
    on_both_servers(|addr| {
        let mut meta = meta();
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        let (status, body) = post(addr, &call(8, "tools/list", &json!({"_meta": meta})), &[]);
        assert_eq!((status, &body["error"]["code"], &body["id"]), (400, &json!(-32020), &json!(8)), "{body}");
    });
}

#[test]
fn a_request_without_its_required_meta_is_400_invalid_params_with_the_id() {
    on_both_servers(|addr| {
        for params in [json!({}), json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})] {
            let (status, body) = post(addr, &call(9, "tools/list", &params), &[]);
            assert_eq!(
                (status, &body["error"]["code"], &body["id"]),
                (400, &json!(-32602), &json!(9)),
                "{params} {body}"
            );
        }
    });
}

#[test]
fn header_check_refusals_carry_the_body_id() {
    on_both_servers(|addr| {
        type Headers<'a> = &'a [(&'a str, Option<&'a str>)];
        let rows: [(&str, Headers<'_>); 3] = [
            ("Mcp-Method missing", &[("Mcp-Method", None)]),
            ("Mcp-Method mismatched", &[("Mcp-Method", Some("tools/list"))]),
            ("Mcp-Name mismatched", &[("Mcp-Name", Some("other"))]),
        ];
        for (what, extra) in rows {
            let body = call(10, "tools/call", &json!({"name": "echo", "arguments": {"text": "x"}, "_meta": meta()}));
            let (status, reply) = post(addr, &body, extra);
            assert_eq!(
                (status, &reply["error"]["code"], &reply["id"]),
                (400, &json!(-32020), &json!(10)),
                "{what}: {reply}"
            );
        }
    });
}

#[test]
fn results_name_the_server_in_their_meta() {
    on_both_servers(|addr| {
        let (status, body) = post(addr, &call(11, "tools/list", &json!({"_meta": meta()})), &[]);
        assert_eq!(status, 200, "{body}");
        let info = &body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
        assert!(info["name"].is_string() && info["version"].is_string(), "{body}");
    });
}

#[test]
fn a_call_without_its_mirrored_argument_headers_is_400_header_mismatch() {
    on_both_servers(|addr| {
        let body = call(
            12,
            "tools/call",
            &json!({"name": "forecast", "arguments": {"region": "Zürich", "days": 3},
            "_meta": meta()}),
        );
        type Headers<'a> = Vec<(&'a str, Option<&'a str>)>;
        let rows: [(&str, Headers<'_>); 4] = [
            ("none sent", vec![]),
            ("one missing", vec![("Mcp-Param-Region", Some("=?base64?WsO8cmljaA==?="))]),
            ("a wrong value", vec![("Mcp-Param-Region", Some("Bern")), ("Mcp-Param-Days", Some("3"))]),
            ("not Base64-wrapped", vec![("Mcp-Param-Region", Some("Zürich")), ("Mcp-Param-Days", Some("3"))]),
        ];
        for (what, extra) in rows {
            let (status, reply) = post(addr, &body, &extra);
            assert_eq!(
                (status, &reply["error"]["code"], &reply["id"]),
                (400, &json!(-32020), &json!(12)),
                "{what}: {reply}"
            );
        }
        let both = [("Mcp-Param-Region", Some("=?base64?WsO8cmljaA==?=")), ("Mcp-Param-Days", Some("03"))];
        let (status, reply) = post(addr, &body, &both);
        assert_eq!(
            (status, &reply["result"]["content"][0]["text"]),
            (200, &json!("Zürich: sunny for 3 days")),
            "{reply}"
        );
    });
}

#[test]
fn the_sdk_client_mirrors_the_arguments_a_tool_marks_and_the_servers_accept_them() {
    use talaria::client::{Client, ClientOptions};
    use talaria::core::session::ClientMode;
    on_both_servers(|addr| {
        let url = format!("http://{addr}/mcp");
        let client = Client::http(&url, &[], ClientOptions::new("musts", "1").mode(ClientMode::Stateless)).unwrap();
        assert!(client.list_all_tools().unwrap().iter().any(|t| t.name == "forecast"));
        let result = client.call_tool("forecast", json!({"region": "Zürich", "days": 3})).unwrap();
        let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
        assert_eq!(text, ["Zürich: sunny for 3 days"]);
    });
}

#[test]
fn a_tool_that_needs_an_undeclared_client_capability_is_400_with_the_capability_named() {
    on_both_servers(|addr| {
        // The `roots` tool asks the client for its roots; this client declared no capability.
        let body = call(13, "tools/call", &json!({"name": "roots", "arguments": {}, "_meta": meta()}));
        let (status, reply) = post(addr, &body, &[]);
        assert_eq!((status, &reply["error"]["code"], &reply["id"]), (400, &json!(-32021), &json!(13)), "{reply}");
        assert_eq!(reply["error"]["data"]["requiredCapabilities"], json!({"roots": {}}), "{reply}");
    });
}

#[test]
fn a_call_made_before_listing_the_tools_lists_them_and_goes_again() {
    use talaria::client::{Client, ClientOptions};
    use talaria::core::session::ClientMode;
    let options = || ClientOptions::new("musts", "1").mode(ClientMode::Stateless);
    on_both_servers(|addr| {
        let url = format!("http://{addr}/mcp");
        // The first call goes without Mcp-Param-* headers (nothing listed yet), is refused
        // with -32020, and goes again after the client lists the tools, as the spec advises.
        let blocking = Client::http(&url, &[], options()).unwrap();
        let result = blocking.call_tool("forecast", json!({"region": "Bern", "days": 1})).unwrap();
        assert_eq!(result.content[0].as_text(), Some("Bern: sunny for 1 days"));
        let smol = smol::block_on(talaria::smol::http(&url, &[], options())).unwrap();
        let result = smol::block_on(smol.call_tool("forecast", json!({"region": "Bern", "days": 2}))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("Bern: sunny for 2 days"));
        // A call that still disagrees after the listing ends with the refusal.
        let refused = blocking.call_tool("forecast", json!({"region": "Bern", "days": 1.5}));
        assert!(refused.is_err() || refused.as_ref().is_ok_and(|r| r.is_error()), "{refused:?}");
    });
}
