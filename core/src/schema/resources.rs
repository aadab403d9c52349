//! Resources: definitions, templates, listing, reading, subscriptions and change
//! notifications.

use crate::alloc_prelude::*;
use serde_json::json;

use super::common::{
    Annotations, CacheScope, EmptyResult, Icon, JsonObject, Meta, NotificationParams, PaginatedRequestParams,
    ResultType,
};
use super::content::ResourceContents;
use super::macros::{cacheable_list, mcp_struct};
use super::methods::{notification_method, request_method};
use super::mrtr::InputResponses;
use super::{adapt_cacheable, ForRevision};
use crate::jsonrpc::ErrorObject;
use crate::version::{Feature, ProtocolVersion};

mcp_struct! {
    /// A resource the server can read.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::Resource;
    ///
    /// let r = Resource::new("file:///project/README.md", "README.md").with_mime_type("text/markdown");
    /// assert_eq!(
    ///     serde_json::to_string(&r).unwrap(),
    ///     r#"{"uri":"file:///project/README.md","name":"README.md","mimeType":"text/markdown"}"#
    /// );
    /// ```
    #[derive(Default)]
    pub struct Resource {
        /// The resource's URI.
        req uri: String = "uri",
        /// Programmatic name (the display name before 2025-06-18).
        req name: String = "name",
        /// Human-readable name (2025-06-18+).
        opt title: String = "title",
        /// What the resource represents, for the model.
        opt description: String = "description",
        /// MIME type, if known.
        opt mime_type: String = "mimeType",
        /// Size in bytes of the raw content (before base64 encoding), if known.
        opt size: u64 = "size",
        /// Display hints.
        opt annotations: Annotations = "annotations",
        /// Icons (2025-11-25+).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

impl Resource {
    /// A resource at `uri` named `name`.
    #[must_use]
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self { uri: uri.into(), name: name.into(), ..Self::default() }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

mcp_struct! {
    /// A family of resources described by an RFC 6570 URI template.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::ResourceTemplate;
    ///
    /// let t = ResourceTemplate::new("file:///{path}", "Project Files");
    /// assert_eq!(
    ///     serde_json::to_string(&t).unwrap(),
    ///     r#"{"uriTemplate":"file:///{path}","name":"Project Files"}"#
    /// );
    /// ```
    #[derive(Default)]
    pub struct ResourceTemplate {
        /// The URI template (RFC 6570).
        req uri_template: String = "uriTemplate",
        /// Programmatic name (the display name before 2025-06-18).
        req name: String = "name",
        /// Human-readable name (2025-06-18+).
        opt title: String = "title",
        /// What the template is for, for the model.
        opt description: String = "description",
        /// The MIME type of every matching resource, if they all share one.
        opt mime_type: String = "mimeType",
        /// Display hints.
        opt annotations: Annotations = "annotations",
        /// Icons (2025-11-25+).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

impl ResourceTemplate {
    /// A template `uri_template` named `name`.
    #[must_use]
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self { uri_template: uri_template.into(), name: name.into(), ..Self::default() }
    }

    /// Sets the human-readable name (2025-06-18+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::ResourceTemplate;
    ///
    /// let t = ResourceTemplate::new("notes://{id}", "notes")
    ///     .with_title("Notes")
    ///     .with_description("A note by its id")
    ///     .with_mime_type("text/markdown");
    /// assert_eq!(
    ///     serde_json::to_string(&t).unwrap(),
    ///     r#"{"uriTemplate":"notes://{id}","name":"notes","title":"Notes","description":"A note by its id","mimeType":"text/markdown"}"#
    /// );
    /// ```
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the template is for, for the model.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type every matching resource shares.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the display hints.
    #[must_use]
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets the icons (2025-11-25+).
    #[must_use]
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }
}

cacheable_list! {
    /// The result of `resources/list`: one page of the server's resources.
    ///
    /// Cacheable from 2026-07-28 on: see [`ForRevision`] for the members it gains there.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::{ListResourcesResult, Resource};
    /// use talaria_core::schema::ForRevision;
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let mut r = ListResourcesResult::new(vec![Resource::new("file:///a", "a")]);
    /// r.next_cursor = Some("page-2".into());
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!(r.ttl_ms, Some(0));
    /// r.adapt_to(ProtocolVersion::V2025_06_18);
    /// assert_eq!(
    ///     serde_json::to_string(&r).unwrap(),
    ///     r#"{"resources":[{"uri":"file:///a","name":"a"}],"nextCursor":"page-2"}"#
    /// );
    /// ```
    pub struct ListResourcesResult {
        /// The resources on this page.
        items resources: Resource = "resources"
    }
}

cacheable_list! {
    /// The result of `resources/templates/list`: one page of the server's resource templates.
    ///
    /// Cacheable from 2026-07-28 on: see [`ForRevision`] for the members it gains there.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::{ListResourceTemplatesResult, ResourceTemplate};
    /// use talaria_core::schema::{CacheScope, ForRevision};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let mut r = ListResourceTemplatesResult::new(vec![ResourceTemplate::new("file:///{path}", "files")]);
    /// r.cache_scope = Some(CacheScope::Public);
    /// r.adapt_to(ProtocolVersion::V2026_07_28);
    /// assert_eq!((r.ttl_ms, r.cache_scope), (Some(0), Some(CacheScope::Public)));
    /// ```
    pub struct ListResourceTemplatesResult {
        /// The templates on this page.
        items resource_templates: ResourceTemplate = "resourceTemplates"
    }
}

mcp_struct! {
    /// Parameters of `resources/read`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::ReadResourceRequestParams;
    ///
    /// let p = ReadResourceRequestParams::new("file:///project/src/main.rs");
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"uri":"file:///project/src/main.rs"}"#);
    /// ```
    pub struct ReadResourceRequestParams {
        /// The URI of the resource to read; its interpretation is up to the server.
        req uri: String = "uri",
        /// Request metadata (required from 2026-07-28 on, where it carries the protocol
        /// version and client capabilities).
        opt meta: Meta = "_meta",
        /// The client's answers to the input requests of an earlier `input_required` result
        /// (2026-07-28).
        opt input_responses: InputResponses = "inputResponses",
        /// The opaque state of an earlier `input_required` result, echoed back (2026-07-28).
        opt request_state: String = "requestState",
    }
}

impl ReadResourceRequestParams {
    /// Asks to read `uri`.
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), meta: None, input_responses: None, request_state: None, extra: JsonObject::new() }
    }
}

mcp_struct! {
    /// The result of `resources/read`.
    ///
    /// Cacheable from 2026-07-28 on: see [`ForRevision`] for the members it gains there.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::ReadResourceResult;
    /// use talaria_core::schema::TextResourceContents;
    ///
    /// let r = ReadResourceResult::new(vec![TextResourceContents::new("file:///a.txt", "hi").into()]);
    /// assert_eq!(r.contents[0].uri(), Some("file:///a.txt"));
    /// assert_eq!(
    ///     serde_json::to_string(&r).unwrap(),
    ///     r#"{"contents":[{"uri":"file:///a.txt","text":"hi"}]}"#
    /// );
    /// ```
    #[derive(Default)]
    pub struct ReadResourceResult {
        /// The contents: one item for a plain resource, several for a composite one.
        req contents: Vec<ResourceContents> = "contents",
        /// Result metadata.
        opt meta: Meta = "_meta",
        /// The kind of result (2026-07-28, where it is required).
        opt result_type: ResultType = "resultType",
        /// How long, in milliseconds, the client may cache the result (2026-07-28, where it is
        /// required).
        opt ttl_ms: u64 = "ttlMs",
        /// Who may cache the result (2026-07-28, where it is required).
        opt cache_scope: CacheScope = "cacheScope",
    }
}

impl ReadResourceResult {
    /// A result holding `contents`.
    #[must_use]
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        Self { contents, ..Self::default() }
    }
}

impl ForRevision for ReadResourceResult {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        adapt_cacheable(&mut self.result_type, &mut self.ttl_ms, &mut self.cache_scope, version);
    }
}

mcp_struct! {
    /// Parameters of `resources/subscribe` (through 2025-11-25; 2026-07-28 uses
    /// `subscriptions/listen`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::SubscribeRequestParams;
    ///
    /// let p = SubscribeRequestParams::new("file:///a.txt");
    /// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"uri":"file:///a.txt"}"#);
    /// ```
    #[derive(Default)]
    pub struct SubscribeRequestParams {
        /// The URI of the resource to watch.
        req uri: String = "uri",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl SubscribeRequestParams {
    /// Asks to watch `uri`.
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), ..Self::default() }
    }
}

mcp_struct! {
    /// Parameters of `resources/unsubscribe` (through 2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::UnsubscribeRequestParams;
    ///
    /// let p: UnsubscribeRequestParams = serde_json::from_str(r#"{"uri":"file:///a.txt"}"#).unwrap();
    /// assert_eq!(p, UnsubscribeRequestParams::new("file:///a.txt"));
    /// ```
    #[derive(Default)]
    pub struct UnsubscribeRequestParams {
        /// The URI of the resource to stop watching.
        req uri: String = "uri",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl UnsubscribeRequestParams {
    /// Asks to stop watching `uri`.
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), ..Self::default() }
    }
}

mcp_struct! {
    /// Parameters of `notifications/resources/updated`.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::resources::ResourceUpdatedNotificationParams;
    ///
    /// let p: ResourceUpdatedNotificationParams = serde_json::from_str(
    ///     r#"{"uri":"file:///a.txt","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}"#,
    /// ).unwrap();
    /// assert_eq!(p.uri, "file:///a.txt");
    /// assert_eq!(p.meta.unwrap()["io.modelcontextprotocol/subscriptionId"], "listen-1");
    /// ```
    #[derive(Default)]
    pub struct ResourceUpdatedNotificationParams {
        /// The URI of the resource that changed; possibly a sub-resource of the one watched.
        req uri: String = "uri",
        /// Notification metadata (from 2026-07-28 on it names the `subscriptions/listen`
        /// stream).
        opt meta: Meta = "_meta",
    }
}

impl ResourceUpdatedNotificationParams {
    /// Announces that `uri` changed.
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), ..Self::default() }
    }
}

/// The error answering a `resources/read` of an unknown URI in `version`: -32002 with
/// `{"uri"}` data before 2026-07-28, -32602 (Invalid Params) naming the URI, with the same
/// data, from 2026-07-28 on.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::ErrorCode;
/// use talaria_core::schema::resources::resource_not_found;
/// use talaria_core::version::ProtocolVersion;
///
/// let legacy = resource_not_found("file:///gone", ProtocolVersion::V2025_11_25);
/// assert_eq!(legacy.code, ErrorCode::RESOURCE_NOT_FOUND);
/// let stateless = resource_not_found("file:///gone", ProtocolVersion::V2026_07_28);
/// assert_eq!(stateless.code, ErrorCode::INVALID_PARAMS);
/// assert_eq!(stateless.data.unwrap()["uri"], "file:///gone");
/// ```
#[must_use]
pub fn resource_not_found(uri: &str, version: ProtocolVersion) -> ErrorObject {
    if version.supports(Feature::ResourceNotFoundIsInvalidParams) {
        ErrorObject::invalid_params(format!("Resource not found: {uri}")).with_data(json!({ "uri": uri }))
    } else {
        ErrorObject::resource_not_found(uri)
    }
}

request_method! {
    /// `resources/list`: lists the server's resources, a page at a time.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{resources::ListResources, RequestMethod};
    ///
    /// assert_eq!(ListResources::INFO.name, "resources/list");
    /// ```
    ListResources, "resources/list", PaginatedRequestParams => ListResourcesResult
}

request_method! {
    /// `resources/templates/list`: lists the server's resource templates, a page at a time.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{resources::ListResourceTemplates, RequestMethod};
    ///
    /// assert_eq!(ListResourceTemplates::INFO.name, "resources/templates/list");
    /// ```
    ListResourceTemplates, "resources/templates/list", PaginatedRequestParams => ListResourceTemplatesResult
}

request_method! {
    /// `resources/read`: reads a resource's contents.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{resources::ReadResource, RequestMethod};
    ///
    /// assert_eq!(ReadResource::INFO.name, "resources/read");
    /// ```
    ReadResource, "resources/read", ReadResourceRequestParams => ReadResourceResult
}

request_method! {
    /// `resources/subscribe`: asks for `notifications/resources/updated` about a resource
    /// (through 2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{resources::Subscribe, Capability, RequestMethod};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// assert_eq!(Subscribe::INFO.capability, Some(Capability::ResourcesSubscribe));
    /// assert!(!Subscribe::INFO.exists_in(ProtocolVersion::V2026_07_28));
    /// ```
    Subscribe, "resources/subscribe", SubscribeRequestParams => EmptyResult
}

request_method! {
    /// `resources/unsubscribe`: cancels a `resources/subscribe` (through 2025-11-25).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{resources::Unsubscribe, RequestMethod};
    ///
    /// assert_eq!(Unsubscribe::INFO.name, "resources/unsubscribe");
    /// ```
    Unsubscribe, "resources/unsubscribe", UnsubscribeRequestParams => EmptyResult
}

notification_method! {
    /// `notifications/resources/list_changed`: the server's list of resources changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{resources::ResourceListChanged, NotificationMethod};
    ///
    /// assert_eq!(ResourceListChanged::INFO.name, "notifications/resources/list_changed");
    /// ```
    ResourceListChanged, "notifications/resources/list_changed", NotificationParams
}

notification_method! {
    /// `notifications/resources/updated`: a watched resource changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{resources::ResourceUpdated, NotificationMethod};
    ///
    /// assert_eq!(ResourceUpdated::INFO.name, "notifications/resources/updated");
    /// ```
    ResourceUpdated, "notifications/resources/updated", ResourceUpdatedNotificationParams
}

/// A resource as a revision knows it: `title` and `icons` only where they exist.
impl ForRevision for Resource {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        super::common::adapt_named(&mut self.title, &mut self.icons, version);
    }
}

/// A resource template as a revision knows it: `title` and `icons` only where they exist.
impl ForRevision for ResourceTemplate {
    fn adapt_to(&mut self, version: ProtocolVersion) {
        super::common::adapt_named(&mut self.title, &mut self.icons, version);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::jsonrpc::ErrorCode;
    use crate::schema::test_support::{
        notification_round_trips, request_round_trips, response_round_trips, round_trips_as_written, EXAMPLES,
    };

    #[test]
    fn official_examples_round_trip() {
        round_trips_as_written::<Resource>("Resource");
        round_trips_as_written::<ListResourcesResult>("ListResourcesResult");
        round_trips_as_written::<ListResourceTemplatesResult>("ListResourceTemplatesResult");
        round_trips_as_written::<ReadResourceResult>("ReadResourceResult");
        round_trips_as_written::<ResourceUpdatedNotificationParams>("ResourceUpdatedNotificationParams");
        request_round_trips::<ListResources>("ListResourcesRequest");
        response_round_trips::<ListResources>("ListResourcesResultResponse");
        request_round_trips::<ListResourceTemplates>("ListResourceTemplatesRequest");
        response_round_trips::<ListResourceTemplates>("ListResourceTemplatesResultResponse");
        request_round_trips::<ReadResource>("ReadResourceRequest");
        response_round_trips::<ReadResource>("ReadResourceResultResponse");
        notification_round_trips::<ResourceListChanged>("ResourceListChangedNotification");
        notification_round_trips::<ResourceUpdated>("ResourceUpdatedNotification");
    }

    #[test]
    fn examples_decode_to_the_expected_fields() {
        let text =
            std::fs::read_to_string(format!("{EXAMPLES}ReadResourceResult/file-resource-contents.json")).unwrap();
        let r: ReadResourceResult = serde_json::from_str(&text).unwrap();
        assert!(
            matches!(&r.contents[..], [ResourceContents::Text(t)] if t.mime_type.as_deref() == Some("text/x-rust"))
        );
        assert_eq!((r.ttl_ms, r.cache_scope), (Some(60_000), Some(CacheScope::Private)));

        let text = std::fs::read_to_string(format!("{EXAMPLES}Resource/file-resource-with-annotations.json")).unwrap();
        let r: Resource = serde_json::from_str(&text).unwrap();
        assert_eq!(r.annotations.and_then(|a| a.last_modified).as_deref(), Some("2025-01-12T15:00:58Z"));
        assert!(r.extra.is_empty());
    }

    #[test]
    fn a_2024_11_05_resource_and_template_decode() {
        let r: Resource = serde_json::from_value(json!({
            "uri": "file:///a.bin", "name": "a", "size": 3, "annotations": {"audience": ["assistant"], "priority": 0.1}
        }))
        .unwrap();
        assert_eq!((r.size, r.title, r.icons, r.meta), (Some(3), None, None, None));
        let t: ResourceTemplate =
            serde_json::from_value(json!({"uriTemplate": "db://{table}", "name": "tables"})).unwrap();
        assert_eq!(t.uri_template, "db://{table}");
        // `resources/subscribe` params were inline before 2025-11-25, with just `uri`.
        let s: SubscribeRequestParams = serde_json::from_value(json!({"uri": "file:///a"})).unwrap();
        assert_eq!(s, SubscribeRequestParams::new("file:///a"));
    }

    #[test]
    fn unknown_members_round_trip() {
        let v = json!({
            "contents": [{"uri": "x:/", "text": "t", "encoding": "utf-8"}, {"uri": "x:/2", "future": 1}],
            "freshness": "high"
        });
        let r: ReadResourceResult = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(r.contents[1], ResourceContents::Unknown(_)));
        assert_eq!(r.extra["freshness"], "high");
        assert_eq!(serde_json::to_value(&r).unwrap(), v);

        let v = json!({"uri": "x:/", "requestState": "s", "inputResponses": {}, "priority": 2});
        let p: ReadResourceRequestParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.request_state.as_deref(), Some("s"));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn missing_required_members_fail() {
        assert!(serde_json::from_value::<Resource>(json!({"uri": "x:/"})).is_err());
        assert!(serde_json::from_value::<Resource>(json!({"name": "x"})).is_err());
        assert!(serde_json::from_value::<ResourceTemplate>(json!({"name": "x", "uri": "x:/"})).is_err());
        assert!(serde_json::from_value::<ListResourcesResult>(json!({})).is_err());
        assert!(serde_json::from_value::<ListResourceTemplatesResult>(json!({"resources": []})).is_err());
        assert!(serde_json::from_value::<ReadResourceRequestParams>(json!({"_meta": {}})).is_err());
        assert!(serde_json::from_value::<ReadResourceResult>(json!({"ttlMs": 5})).is_err());
        assert!(serde_json::from_value::<SubscribeRequestParams>(json!({})).is_err());
        assert!(serde_json::from_value::<UnsubscribeRequestParams>(json!({})).is_err());
        assert!(serde_json::from_value::<ResourceUpdatedNotificationParams>(json!({"_meta": {}})).is_err());
    }

    #[test]
    fn cacheable_results_adapt_to_legacy_and_stateless_revisions() {
        let mut r = ReadResourceResult { ttl_ms: Some(60_000), ..ReadResourceResult::new(Vec::new()) };
        r.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"contents": [], "resultType": "complete", "ttlMs": 60_000, "cacheScope": "private"})
        );
        r.adapt_to(ProtocolVersion::V2024_11_05);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"contents": []}));

        let mut l = ListResourcesResult::new(Vec::new());
        l.adapt_to(ProtocolVersion::V2026_07_28);
        assert_eq!(
            (l.result_type, l.ttl_ms, l.cache_scope),
            (Some(ResultType::Complete), Some(0), Some(CacheScope::Private))
        );
        let mut t = ListResourceTemplatesResult { result_type: Some(ResultType::Complete), ..Default::default() };
        t.adapt_to(ProtocolVersion::V2025_11_25);
        assert_eq!(serde_json::to_value(&t).unwrap(), json!({"resourceTemplates": []}));
    }

    #[test]
    fn resource_not_found_code_depends_on_the_revision() {
        for version in ProtocolVersion::ALL {
            let err = resource_not_found("file:///gone", version);
            let expected = if version == ProtocolVersion::V2026_07_28 {
                ErrorCode::INVALID_PARAMS
            } else {
                ErrorCode::RESOURCE_NOT_FOUND
            };
            assert_eq!(err.code, expected, "{version:?}");
            assert_eq!(err.data, Some(json!({"uri": "file:///gone"})));
            assert!(err.message.contains("file:///gone"));
        }
    }
}
