//! URL-mode elicitation (2025-11-25; a URL input request in 2026-07-28), our client and server
//! end to end over the in-process transport: the server sends the user to a page, the client
//! accepts, the server says the page's flow is complete and the client hears of it once. A
//! client that declared forms only is never sent a URL, and refuses one if it were.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use talaria::client::{ClientError, ClientOptions};
use talaria::core::client::Handlers;
use talaria::core::schema::elicitation::{
    Elicit, ElicitAction, ElicitRequestParams, ElicitRequestUrlParams, ElicitResult,
};
use talaria::core::schema::tools::{CallToolResult, Tool};
use talaria::core::server::{Router, ToolError};
use talaria::core::session::{CallError, ClientMode};
use talaria::core::version::ProtocolVersion;

/// A server whose `link_account` tool sends the user to a sign-in page, then (the sign-in
/// done out of band) says the elicitation is complete.
fn server() -> talaria::server::Server<()> {
    let router = Router::<()>::builder()
        .blocking_tool(
            Tool::new("link_account", json!({"type": "object"}).as_object().cloned().unwrap()),
            |job, _: serde_json::Value| {
                let mut page = ElicitRequestUrlParams::new("Sign in to link your account", "https://example.com/link");
                page.elicitation_id = Some("link-1".into());
                let answer = job
                    .ask::<Elicit>(&ElicitRequestParams::Url(page))
                    .map_err(|e| ToolError::execution(e.to_string()))?;
                if answer.action != ElicitAction::Accept {
                    return Ok(CallToolResult::text("not linked"));
                }
                let told = job.elicitation_complete("link-1");
                Ok(CallToolResult::text(format!("linked (completion sent: {told})")))
            },
        )
        .build();
    talaria::server::Server::new("linker", "1", router)
}

fn options(mode: ClientMode, handlers: Handlers) -> ClientOptions {
    let options = ClientOptions::new("browser", "1").mode(mode).handlers(handlers);
    match mode {
        ClientMode::Legacy => options.versions(vec![ProtocolVersion::V2025_11_25]),
        _ => options,
    }
}

#[test]
fn the_user_is_sent_to_the_page_and_the_client_hears_it_is_complete() {
    let opened = Arc::new(Mutex::new(Vec::new()));
    let completed = Arc::new(Mutex::new(Vec::new()));
    let (seen, done) = (Arc::clone(&opened), Arc::clone(&completed));
    let handlers = Handlers::default()
        .with_elicitation(true, move |params| {
            if let ElicitRequestParams::Url(page) = params {
                seen.lock().unwrap().push(page.url.clone());
            }
            Ok(ElicitResult::new(ElicitAction::Accept))
        })
        .with_elicitation_complete(move |id| done.lock().unwrap().push(id.to_owned()));
    let client = talaria::memory::connect(&server(), options(ClientMode::Legacy, handlers)).unwrap();
    let result = client.call_tool("link_account", json!({})).unwrap();
    assert_eq!(result.content[0].as_text(), Some("linked (completion sent: true)"));
    assert_eq!(*opened.lock().unwrap(), ["https://example.com/link"]);
    assert_eq!(*completed.lock().unwrap(), ["link-1"], "heard once");
}

#[test]
fn in_the_stateless_era_the_url_travels_as_an_input_request_with_no_completion() {
    let opened = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&opened);
    let handlers = Handlers::default().with_elicitation(true, move |params| {
        let ElicitRequestParams::Url(page) = params else { panic!("{params:?}") };
        assert_eq!(page.elicitation_id, None, "2026-07-28 has no elicitationId");
        *seen.lock().unwrap() += 1;
        Ok(ElicitResult::new(ElicitAction::Accept))
    });
    let client = talaria::memory::connect(&server(), options(ClientMode::Stateless, handlers)).unwrap();
    let result = client.call_tool("link_account", json!({})).unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("linked (completion sent: false)"),
        "no such notification in 2026-07-28"
    );
    assert_eq!(*opened.lock().unwrap(), 1);
}

#[test]
fn a_client_that_declared_forms_only_is_never_sent_a_url() {
    let forms_only = || Handlers::default().with_elicitation(false, |_| panic!("a URL reached a form-only client"));
    let client = talaria::memory::connect(&server(), options(ClientMode::Legacy, forms_only())).unwrap();
    let result = client.call_tool("link_account", json!({})).unwrap();
    assert!(result.is_error(), "the ask failed in the tool: {result:?}");
    let client = talaria::memory::connect(&server(), options(ClientMode::Stateless, forms_only())).unwrap();
    match client.call_tool("link_account", json!({})) {
        Err(ClientError::Call(CallError::Remote(e))) => {
            assert_eq!(
                (e.code.0, e.data),
                (-32021, Some(json!({"requiredCapabilities": {"elicitation": {"url": {}}}})))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_completion_the_client_cannot_place_is_ignored() {
    let heard = Arc::new(Mutex::new(0));
    let count = Arc::clone(&heard);
    let handlers = Handlers::default()
        .with_elicitation(true, |_| Ok(ElicitResult::new(ElicitAction::Decline)))
        .with_elicitation_complete(move |_| *count.lock().unwrap() += 1);
    let unknown = serde_json::value::to_raw_value(&json!({"elicitationId": "never-asked"})).unwrap();
    assert!(!handlers.elicitation_completed(Some(&unknown)));
    assert_eq!(*heard.lock().unwrap(), 0);
    // A URL request this client refuses (no URL mode declared) is answered -32602.
    let forms_only = Handlers::default().with_elicitation(false, |_| panic!("refused first"));
    let mut page = ElicitRequestUrlParams::new("Open", "https://example.com");
    page.elicitation_id = Some("e".into());
    let request: talaria::core::schema::mrtr::InputRequest =
        serde_json::from_value(json!({"method": "elicitation/create", "params": ElicitRequestParams::Url(page)}))
            .unwrap();
    assert_eq!(forms_only.answer_input(&request).unwrap_err().code.0, -32602);
}

#[test]
fn a_url_elicitation_required_error_becomes_input_requests_in_the_stateless_era() {
    // A tool written the 2025-11-25 way: -32042 until the user has visited the page.
    let router = Router::<()>::builder()
        .tool(Tool::new("pay", json!({"type": "object"}).as_object().cloned().unwrap()), |ctx, _: serde_json::Value| {
            if ctx.input_responses().is_some_and(|answers| answers.contains_key("url-1")) {
                return Ok(CallToolResult::text("paid"));
            }
            let page = json!({"mode": "url", "message": "Confirm the payment", "url": "https://example.com/pay", "elicitationId": "pay-1"});
            Err(ToolError::Protocol(talaria::core::jsonrpc::ErrorObject::url_elicitation_required("confirm first", vec![page])))
        })
        .build();
    let server = talaria::server::Server::new("shop", "1", router);
    let visited = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&visited);
    let handlers = Handlers::default().with_elicitation(true, move |params| {
        let ElicitRequestParams::Url(page) = params else { panic!("{params:?}") };
        assert_eq!(page.elicitation_id, None, "2026-07-28 has no elicitationId");
        seen.lock().unwrap().push(page.url.clone());
        Ok(ElicitResult::new(ElicitAction::Accept))
    });
    let client = talaria::memory::connect(&server, options(ClientMode::Stateless, handlers)).unwrap();
    assert_eq!(client.call_tool("pay", json!({})).unwrap().content[0].as_text(), Some("paid"));
    assert_eq!(*visited.lock().unwrap(), ["https://example.com/pay"]);
    // In 2025-11-25 the error goes to the client as it is.
    let legacy = talaria::memory::connect(&server, options(ClientMode::Legacy, Handlers::default())).unwrap();
    match legacy.call_tool("pay", json!({})) {
        Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code.0, -32042),
        other => panic!("{other:?}"),
    }
}
