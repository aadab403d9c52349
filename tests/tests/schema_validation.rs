//! What our encoder produces validates against the JSON Schema of the revision in play.
//!
//! For every revision, representative requests, notifications, results and errors are built
//! from the typed schema, adapted with `ForRevision::adapt_to`, wrapped in their JSON-RPC
//! envelope, and validated against both the envelope definition and the message's own
//! definition in that revision's `schema.json`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};
use talaria_core::jsonrpc::{ErrorObject, ErrorResponse, Message, Notification, Request, Response};
use talaria_core::schema::{self as s, method_info, ForRevision, Meta};
use talaria_core::version::{Feature, ProtocolVersion};

struct Schema {
    doc: Value,
    defs_key: &'static str,
    validators: BTreeMap<String, jsonschema::Validator>,
}

impl Schema {
    fn load(version: ProtocolVersion) -> Self {
        let path = talaria_tests::fixtures_dir().join(format!("spec/{version}/schema.json"));
        let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let defs_key = if doc.get("$defs").is_some() { "$defs" } else { "definitions" };
        Self { doc, defs_key, validators: BTreeMap::new() }
    }

    fn has(&self, def: &str) -> bool {
        self.doc[self.defs_key].get(def).is_some()
    }

    /// Validation errors of `instance` against definition `def`.
    fn errors(&mut self, def: &str, instance: &Value) -> Vec<String> {
        let (doc, key) = (&self.doc, self.defs_key);
        let validator = self.validators.entry(def.to_owned()).or_insert_with(|| {
            let mut root = doc.clone();
            root["$ref"] = json!(format!("#/{key}/{def}"));
            jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{def}: {e}"))
        });
        validator.iter_errors(instance).map(|e| format!("{e} at {}", e.instance_path())).collect()
    }
}

/// The `_meta` a stateless (2026-07-28) client puts on every request.
fn stateless_meta(version: ProtocolVersion) -> Option<Meta> {
    version.supports(Feature::Stateless).then(|| {
        let v = json!({
            "io.modelcontextprotocol/protocolVersion": version.as_str(),
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "talaria-test", "version": "0.1.0"},
        });
        serde_json::from_value(v).unwrap()
    })
}

fn value(x: &impl Serialize) -> Value {
    serde_json::to_value(x).unwrap()
}

/// A sample: the definition it must satisfy, and the whole JSON-RPC message.
type Sample = (&'static str, Value);

fn request(def: &'static str, method: &str, mut params: Value, version: ProtocolVersion) -> Option<Sample> {
    if !method_info(method).unwrap().exists_in(version) {
        return None;
    }
    if let Some(meta) = stateless_meta(version) {
        let obj = params.as_object_mut().unwrap();
        let slot = obj.entry("_meta").or_insert_with(|| json!({}));
        slot.as_object_mut().unwrap().extend(meta);
    }
    let msg: Message = Request::new(1, method, Some(params)).unwrap().into();
    Some((def, serde_json::from_slice(&msg.to_vec()).unwrap()))
}

fn notification(def: &'static str, method: &str, params: Option<Value>, version: ProtocolVersion) -> Option<Sample> {
    if !method_info(method).unwrap().exists_in(version) {
        return None;
    }
    let msg: Message = Notification::new(method, params).unwrap().into();
    Some((def, serde_json::from_slice(&msg.to_vec()).unwrap()))
}

/// A result, adapted to the revision and validated on its own (its definition is the result's).
fn result<R: Serialize + ForRevision>(def: &'static str, mut r: R, version: ProtocolVersion) -> Sample {
    r.adapt_to(version);
    let msg: Message = Response::new(1, &r).unwrap().into();
    let whole: Value = serde_json::from_slice(&msg.to_vec()).unwrap();
    (def, whole["result"].clone())
}

fn tool() -> s::tools::Tool {
    serde_json::from_value(json!({
        "name": "get_weather",
        "title": "Weather",
        "description": "Current weather",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}},
        "annotations": {"readOnlyHint": true},
        "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}]
    }))
    .unwrap()
}

fn samples(v: ProtocolVersion) -> Vec<Sample> {
    use s::{completion as c, lifecycle as l, logging as lg, prompts as p, resources as r, tools as t};
    let mut out: Vec<Option<Sample>> = vec![
        request(
            "InitializeRequest",
            "initialize",
            value(&l::InitializeRequestParams::new(
                v.as_str(),
                serde_json::from_value(json!({"roots": {"listChanged": true}, "sampling": {}})).unwrap(),
                s::Implementation::new("c", "1"),
            )),
            v,
        ),
        request("PingRequest", "ping", json!({}), v),
        request("ListToolsRequest", "tools/list", value(&s::PaginatedRequestParams::after("c1")), v),
        request(
            "CallToolRequest",
            "tools/call",
            json!({"name": "get_weather", "arguments": {"city": "Paris"}, "_meta": {"progressToken": 3}}),
            v,
        ),
        request("ListPromptsRequest", "prompts/list", json!({}), v),
        request("GetPromptRequest", "prompts/get", json!({"name": "greet", "arguments": {"who": "you"}}), v),
        request("ListResourcesRequest", "resources/list", json!({}), v),
        request("ReadResourceRequest", "resources/read", json!({"uri": "file:///a.txt"}), v),
        request("SubscribeRequest", "resources/subscribe", json!({"uri": "file:///a.txt"}), v),
        request(
            "SetLevelRequest",
            "logging/setLevel",
            value(&lg::SetLevelRequestParams::new(s::LoggingLevel::Warning)),
            v,
        ),
        request(
            "CompleteRequest",
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "y"}}),
            v,
        ),
        request("DiscoverRequest", "server/discover", json!({}), v),
        request(
            "SubscriptionsListenRequest",
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///a.txt"]}}),
            v,
        ),
        request("ListRootsRequest", "roots/list", json!({}), v),
        request(
            "CreateMessageRequest",
            "sampling/createMessage",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}),
            v,
        ),
        request(
            "ElicitRequest",
            "elicitation/create",
            json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
            v,
        ),
        notification("InitializedNotification", "notifications/initialized", None, v),
        notification(
            "ProgressNotification",
            "notifications/progress",
            Some(value(&s::utilities::ProgressNotificationParams::new(3.into(), 1.0, Some(2.0), Some("half".into())))),
            v,
        ),
        notification(
            "CancelledNotification",
            "notifications/cancelled",
            Some(value(&s::utilities::CancelledNotificationParams::new(1, Some("timeout")))),
            v,
        ),
        notification(
            "LoggingMessageNotification",
            "notifications/message",
            Some(value(&lg::LoggingMessageNotificationParams::new(s::LoggingLevel::Info, Some("db"), json!({"x": 1})))),
            v,
        ),
        notification("ToolListChangedNotification", "notifications/tools/list_changed", None, v),
        notification(
            "ResourceUpdatedNotification",
            "notifications/resources/updated",
            Some(json!({"uri": "file:///a.txt"})),
            v,
        ),
        notification("RootsListChangedNotification", "notifications/roots/list_changed", None, v),
    ];
    let mut results = vec![
        result("EmptyResult", s::EmptyResult::default(), v),
        result("ListToolsResult", t::ListToolsResult::new(vec![tool()]), v),
        result("CallToolResult", t::CallToolResult::text("sunny"), v),
        result("CallToolResult", t::CallToolResult::error("no such city"), v),
        result("CallToolResult", t::CallToolResult::structured(json!({"temp": 21.5})), v),
        result(
            "ListPromptsResult",
            serde_json::from_value::<p::ListPromptsResult>(
                json!({"prompts": [{"name": "greet", "arguments": [{"name": "who", "required": true}]}]}),
            )
            .unwrap(),
            v,
        ),
        result(
            "GetPromptResult",
            serde_json::from_value::<p::GetPromptResult>(
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}),
            )
            .unwrap(),
            v,
        ),
        result(
            "ListResourcesResult",
            serde_json::from_value::<r::ListResourcesResult>(
                json!({"resources": [{"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}]}),
            )
            .unwrap(),
            v,
        ),
        result(
            "ReadResourceResult",
            serde_json::from_value::<r::ReadResourceResult>(
                json!({"contents": [{"uri": "file:///a.txt", "text": "hello"}, {"uri": "file:///b", "blob": "AAE="}]}),
            )
            .unwrap(),
            v,
        ),
        result(
            "ListResourceTemplatesResult",
            serde_json::from_value::<r::ListResourceTemplatesResult>(
                json!({"resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}]}),
            )
            .unwrap(),
            v,
        ),
        result(
            "CompleteResult",
            serde_json::from_value::<c::CompleteResult>(
                json!({"completion": {"values": ["a", "b"], "total": 2, "hasMore": false}}),
            )
            .unwrap(),
            v,
        ),
    ];
    if v.supports(Feature::Initialize) {
        results.push(result(
            "InitializeResult",
            serde_json::from_value::<l::InitializeResult>(json!({
            "protocolVersion": v.as_str(), "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": {"name": "s", "version": "1"}, "instructions": "be nice"}))
            .unwrap(),
            v,
        ));
    }
    if v.supports(Feature::Discover) {
        results.push(result(
            "DiscoverResult",
            l::DiscoverResult {
                supported_versions: vec![v.as_str().into()],
                capabilities: serde_json::from_value(json!({"tools": {}})).unwrap(),
                ..Default::default()
            },
            v,
        ));
    }
    out.extend(results.into_iter().map(Some));
    let error = |def: &'static str, e: ErrorObject| -> Sample {
        let msg: Message = ErrorResponse { id: Some(1.into()), error: e }.into();
        (def, serde_json::from_slice(&msg.to_vec()).unwrap())
    };
    let error_def = if v >= ProtocolVersion::V2025_11_25 { "JSONRPCErrorResponse" } else { "JSONRPCError" };
    out.push(Some(error(error_def, ErrorObject::method_not_found("x"))));
    out.push(Some(error(error_def, r::resource_not_found("file:///gone", v))));
    if v.supports(Feature::Stateless) {
        out.push(Some(error(
            "UnsupportedProtocolVersionError",
            ErrorObject::unsupported_protocol_version("1900-01-01", &["2026-07-28"]),
        )));
        out.push(Some(error(
            "MissingRequiredClientCapabilityError",
            ErrorObject::missing_required_client_capability("needs elicitation", json!({"elicitation": {}})),
        )));
        out.push(Some(error("HeaderMismatchError", ErrorObject::header_mismatch("Mcp-Name does not match"))));
    }
    out.into_iter().flatten().collect()
}

#[test]
fn encoded_messages_validate_against_their_revision_schema() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for version in ProtocolVersion::ALL {
        let mut schema = Schema::load(version);
        for (def, instance) in samples(version) {
            if !schema.has(def) {
                failures.push(format!("{version}: no definition {def} (sample should be gated)"));
                continue;
            }
            checked += 1;
            for e in schema.errors(def, &instance) {
                failures.push(format!("{version} {def}: {e}\n    {instance}"));
            }
            // Whole messages also satisfy the envelope.
            if instance.get("jsonrpc").is_some() {
                for e in schema.errors("JSONRPCMessage", &instance) {
                    failures.push(format!("{version} {def} as JSONRPCMessage: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(checked > 100, "only {checked} samples validated");
}

#[test]
fn the_validator_is_not_vacuous() {
    let mut schema = Schema::load(ProtocolVersion::V2025_06_18);
    assert!(!schema.errors("CallToolResult", &json!({"isError": "yes"})).is_empty());
    let mut schema = Schema::load(ProtocolVersion::V2026_07_28);
    let missing_result_type = json!({"tools": [], "ttlMs": 0, "cacheScope": "public"});
    assert!(!schema.errors("ListToolsResult", &missing_result_type).is_empty());
}
