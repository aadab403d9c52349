//! The typed layers end to end (see [`talaria_tests::typed`]): prompts, resources and resource
//! templates, and completion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods, missing_docs)]

use serde_json::json;
use talaria_core::jsonrpc::ErrorCode;
use talaria_core::schema::completion::{Complete, CompleteRequestParams, CompletionArgument, PromptReference};
use talaria_core::schema::prompts::{GetPrompt, GetPromptRequestParams, ListPrompts};
use talaria_core::schema::resources::{ListResourceTemplates, ListResources, ReadResource, ReadResourceRequestParams};
use talaria_core::schema::{PaginatedRequestParams, ResourceContents};
use talaria_core::version::Feature;
use talaria_tests::typed::{remote, Link, ROWS};

// ---------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------

#[test]
fn prompts_list_and_get_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let list = link.call::<ListPrompts>(&PaginatedRequestParams::default()).unwrap();
        assert_eq!(list.prompts.len(), 1, "{row:?}");
        assert_eq!(list.prompts[0].name, "greet", "{row:?}");
        let arguments = list.prompts[0].arguments.clone().unwrap();
        assert_eq!(arguments.iter().filter(|a| a.is_required()).count(), 1, "{row:?}");

        let got = link
            .call::<GetPrompt>(
                &GetPromptRequestParams::new("greet").with_argument("name", "Ada").with_argument("tone", "briskly"),
            )
            .unwrap();
        assert_eq!(got.messages.len(), 1, "{row:?}");
        assert_eq!(got.messages[0].content.as_text(), Some("Greet Ada briskly"), "{row:?}");
        assert_eq!(got.description.as_deref(), Some("A greeting"), "{row:?}");

        let missing =
            remote(link.call::<GetPrompt>(&GetPromptRequestParams::new("greet").with_argument("tone", "x")), row);
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(missing.message.contains("\"name\""), "{row:?}: {missing:?}");

        let unknown = remote(link.call::<GetPrompt>(&GetPromptRequestParams::new("farewell")), row);
        assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS, "{row:?}");
        assert!(unknown.message.contains("farewell"), "{row:?}: {unknown:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

fn text_contents(contents: &[ResourceContents]) -> Vec<(&str, &str)> {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::Text(t) => (t.uri.as_str(), t.text.as_str()),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

#[test]
fn resources_list_templates_and_read_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let list = link.call::<ListResources>(&PaginatedRequestParams::default()).unwrap();
        let uris: Vec<&str> = list.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["file:///readme.md"], "{row:?}");
        assert_eq!(list.resources[0].mime_type.as_deref(), Some("text/markdown"), "{row:?}");

        let templates = link.call::<ListResourceTemplates>(&PaginatedRequestParams::default()).unwrap();
        let patterns: Vec<&str> = templates.resource_templates.iter().map(|t| t.uri_template.as_str()).collect();
        assert_eq!(patterns, ["notes://{folder}/{id}"], "{row:?}");

        let read = link.call::<ReadResource>(&ReadResourceRequestParams::new("file:///readme.md")).unwrap();
        assert_eq!(text_contents(&read.contents), [("file:///readme.md", "# Talaria")], "{row:?}");

        let note = link.call::<ReadResource>(&ReadResourceRequestParams::new("notes://inbox/42")).unwrap();
        assert_eq!(text_contents(&note.contents), [("notes://inbox/42", "note 42 in inbox")], "{row:?}");

        let missing = remote(link.call::<ReadResource>(&ReadResourceRequestParams::new("file:///nope")), row);
        let expected = if row.has(Feature::ResourceNotFoundIsInvalidParams) {
            ErrorCode::INVALID_PARAMS
        } else {
            ErrorCode::RESOURCE_NOT_FOUND
        };
        assert_eq!(missing.code, expected, "{row:?}");
        assert_eq!(missing.data.as_ref().and_then(|d| d.get("uri")), Some(&json!("file:///nope")), "{row:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------------------------

#[test]
fn completion_of_a_prompt_argument_in_every_revision() {
    for row in ROWS {
        let mut link = Link::new(row);
        let ask = |value: &str| {
            CompleteRequestParams::new(PromptReference::new("greet"), CompletionArgument::new("name", value))
        };
        let done = link.call::<Complete>(&ask("A")).unwrap();
        assert_eq!(done.completion.values, ["Ada", "Alan"], "{row:?}");
        assert_eq!(done.completion.total, Some(2), "{row:?}");
        assert!(!done.completion.has_more(), "{row:?}");
        let none = link.call::<Complete>(&ask("Z")).unwrap();
        assert!(none.completion.values.is_empty(), "{row:?}");
        let unknown = remote(
            link.call::<Complete>(&CompleteRequestParams::new(
                PromptReference::new("nope"),
                CompletionArgument::new("x", ""),
            )),
            row,
        );
        assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS, "{row:?}");
    }
}
