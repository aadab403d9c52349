//! Every official 2026-07-28 example message decodes into its Rust type and encodes back to
//! equal JSON. A new example folder without a mapping here fails the test, so the table stays
//! complete.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use talaria_core::jsonrpc::{ErrorObject, Message};
use talaria_core::schema::{self as s, RequestMethod};

type Check = fn(&Value) -> Result<(), String>;

/// Decodes `v` as `T` and checks that it encodes back to `v`.
fn plain<T: Serialize + DeserializeOwned>(v: &Value) -> Result<(), String> {
    let typed: T = serde_json::from_value(v.clone()).map_err(|e| format!("decode: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("encode: {e}"))?;
    if &back == v {
        Ok(())
    } else {
        Err(format!("round trip changed it:\n  in:  {v}\n  out: {back}"))
    }
}

/// A full JSON-RPC message: the envelope round-trips through `Message`, and its params or
/// result through the method's types.
fn message(v: &Value) -> Result<(), String> {
    let bytes = serde_json::to_vec(v).unwrap();
    let msg = Message::from_slice(&bytes).map_err(|e| format!("envelope: {e}"))?;
    let back: Value = serde_json::from_slice(&msg.to_vec()).unwrap();
    if &back == v {
        Ok(())
    } else {
        Err(format!("envelope round trip changed it:\n  in:  {v}\n  out: {back}"))
    }
}

fn request<M: RequestMethod>(v: &Value) -> Result<(), String> {
    message(v)?;
    if v["method"] != M::INFO.name {
        return Err(format!("method {} is not {}", v["method"], M::INFO.name));
    }
    plain::<M::Params>(&v["params"])
}

fn notification<P: Serialize + DeserializeOwned>(name: &'static str) -> impl Fn(&Value) -> Result<(), String> {
    move |v| {
        message(v)?;
        if v["method"] != name {
            return Err(format!("method {} is not {name}", v["method"]));
        }
        match v.get("params") {
            Some(p) => plain::<P>(p),
            None => Ok(()),
        }
    }
}

/// A result response: `input_required` results decode as `InputRequiredResult`.
fn response<M: RequestMethod>(v: &Value) -> Result<(), String> {
    message(v)?;
    let result = &v["result"];
    if result["resultType"] == "input_required" {
        plain::<s::mrtr::InputRequiredResult>(result)
    } else {
        plain::<M::Result>(result)
    }
}

macro_rules! notif {
    ($p:ty, $name:literal) => {{
        fn check(v: &Value) -> Result<(), String> {
            notification::<$p>($name)(v)
        }
        check as Check
    }};
}

fn table() -> Vec<(&'static str, Check)> {
    use s::{completion as c, elicitation as el, lifecycle as l, logging as lg, mrtr as m, prompts as p};
    use s::{resources as r, roots as ro, sampling as sa, subscriptions as su, tools as t, utilities as u};
    vec![
        ("AudioContent", plain::<s::AudioContent>),
        ("BlobResourceContents", plain::<s::BlobResourceContents>),
        ("BooleanSchema", plain::<el::PrimitiveSchemaDefinition>),
        ("CallToolRequest", request::<t::CallTool>),
        ("CallToolRequestParams", plain::<t::CallToolRequestParams>),
        ("CallToolResult", plain::<t::CallToolResult>),
        ("CallToolResultResponse", response::<t::CallTool>),
        ("CancelledNotification", notif!(u::CancelledNotificationParams, "notifications/cancelled")),
        ("CancelledNotificationParams", plain::<u::CancelledNotificationParams>),
        ("ClientCapabilities", plain::<l::ClientCapabilities>),
        ("CompleteRequest", request::<c::Complete>),
        ("CompleteRequestParams", plain::<c::CompleteRequestParams>),
        ("CompleteResult", plain::<c::CompleteResult>),
        ("CompleteResultResponse", response::<c::Complete>),
        ("CreateMessageRequest", plain::<m::InputRequest>),
        ("CreateMessageRequestParams", plain::<sa::CreateMessageRequestParams>),
        ("CreateMessageResult", plain::<sa::CreateMessageResult>),
        ("DiscoverRequest", request::<l::Discover>),
        ("DiscoverResult", plain::<l::DiscoverResult>),
        ("DiscoverResultResponse", response::<l::Discover>),
        ("ElicitRequest", plain::<m::InputRequest>),
        ("ElicitRequestFormParams", plain::<el::ElicitRequestParams>),
        ("ElicitRequestURLParams", plain::<el::ElicitRequestParams>),
        ("ElicitResult", plain::<el::ElicitResult>),
        ("EmbeddedResource", plain::<s::EmbeddedResource>),
        ("GetPromptRequest", request::<p::GetPrompt>),
        ("GetPromptRequestParams", plain::<p::GetPromptRequestParams>),
        ("GetPromptResult", plain::<p::GetPromptResult>),
        ("GetPromptResultResponse", response::<p::GetPrompt>),
        ("HeaderMismatchError", message),
        ("ImageContent", plain::<s::ImageContent>),
        ("InputRequests", plain::<m::InputRequests>),
        ("InputRequiredResult", plain::<m::InputRequiredResult>),
        ("InputResponses", plain::<m::InputResponses>),
        ("InternalError", plain::<ErrorObject>),
        ("InvalidParamsError", plain::<ErrorObject>),
        ("ListPromptsRequest", request::<p::ListPrompts>),
        ("ListPromptsResult", plain::<p::ListPromptsResult>),
        ("ListPromptsResultResponse", response::<p::ListPrompts>),
        ("ListResourceTemplatesRequest", request::<r::ListResourceTemplates>),
        ("ListResourceTemplatesResult", plain::<r::ListResourceTemplatesResult>),
        ("ListResourceTemplatesResultResponse", response::<r::ListResourceTemplates>),
        ("ListResourcesRequest", request::<r::ListResources>),
        ("ListResourcesResult", plain::<r::ListResourcesResult>),
        ("ListResourcesResultResponse", response::<r::ListResources>),
        ("ListRootsRequest", plain::<m::InputRequest>),
        ("ListRootsResult", plain::<ro::ListRootsResult>),
        ("ListToolsRequest", request::<t::ListTools>),
        ("ListToolsResult", plain::<t::ListToolsResult>),
        ("ListToolsResultResponse", response::<t::ListTools>),
        ("LoggingMessageNotification", notif!(lg::LoggingMessageNotificationParams, "notifications/message")),
        ("LoggingMessageNotificationParams", plain::<lg::LoggingMessageNotificationParams>),
        ("MethodNotFoundError", plain::<ErrorObject>),
        ("MissingRequiredClientCapabilityError", message),
        ("ModelPreferences", plain::<sa::ModelPreferences>),
        ("NumberSchema", plain::<el::PrimitiveSchemaDefinition>),
        ("PaginatedRequestParams", plain::<s::PaginatedRequestParams>),
        ("ParseError", plain::<ErrorObject>),
        ("ProgressNotification", notif!(u::ProgressNotificationParams, "notifications/progress")),
        ("ProgressNotificationParams", plain::<u::ProgressNotificationParams>),
        ("PromptListChangedNotification", notif!(s::NotificationParams, "notifications/prompts/list_changed")),
        ("ReadResourceRequest", request::<r::ReadResource>),
        ("ReadResourceResult", plain::<r::ReadResourceResult>),
        ("ReadResourceResultResponse", response::<r::ReadResource>),
        ("Resource", plain::<r::Resource>),
        ("ResourceLink", plain::<s::ResourceLink>),
        ("ResourceListChangedNotification", notif!(s::NotificationParams, "notifications/resources/list_changed")),
        (
            "ResourceUpdatedNotification",
            notif!(r::ResourceUpdatedNotificationParams, "notifications/resources/updated"),
        ),
        ("ResourceUpdatedNotificationParams", plain::<r::ResourceUpdatedNotificationParams>),
        ("Root", plain::<ro::Root>),
        ("SamplingMessage", plain::<sa::SamplingMessage>),
        ("ServerCapabilities", plain::<l::ServerCapabilities>),
        ("StringSchema", plain::<el::PrimitiveSchemaDefinition>),
        (
            "SubscriptionsAcknowledgedNotification",
            notif!(su::SubscriptionsAcknowledgedNotificationParams, "notifications/subscriptions/acknowledged"),
        ),
        ("SubscriptionsListenRequest", request::<su::SubscriptionsListen>),
        ("SubscriptionsListenResult", plain::<su::SubscriptionsListenResult>),
        ("SubscriptionsListenResultResponse", response::<su::SubscriptionsListen>),
        ("TextContent", plain::<s::TextContent>),
        ("TextResourceContents", plain::<s::TextResourceContents>),
        ("TitledMultiSelectEnumSchema", plain::<el::PrimitiveSchemaDefinition>),
        ("TitledSingleSelectEnumSchema", plain::<el::PrimitiveSchemaDefinition>),
        ("Tool", plain::<t::Tool>),
        ("ToolListChangedNotification", notif!(s::NotificationParams, "notifications/tools/list_changed")),
        ("ToolResultContent", plain::<sa::ToolResultContent>),
        ("ToolUseContent", plain::<sa::ToolUseContent>),
        ("UnsupportedProtocolVersionError", message),
        ("UntitledMultiSelectEnumSchema", plain::<el::PrimitiveSchemaDefinition>),
        ("UntitledSingleSelectEnumSchema", plain::<el::PrimitiveSchemaDefinition>),
    ]
}

#[test]
fn every_official_example_round_trips_through_its_type() {
    let root = talaria_tests::fixtures_dir().join("spec/2026-07-28/examples");
    let table = table();
    let mut folders: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    folders.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for folder in &folders {
        let Some((_, check)) = table.iter().find(|(name, _)| name == folder) else {
            failures.push(format!("{folder}: no Rust type mapped for this example folder"));
            continue;
        };
        for file in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = file.unwrap().path();
            let value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            checked += 1;
            if let Err(e) = check(&value) {
                failures.push(format!("{folder}/{}: {e}", path.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {checked} examples failed:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 129, "only {checked} examples found");
}
