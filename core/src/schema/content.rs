//! Content blocks: text, image, audio, resource links and embedded resources, and the resource
//! contents they carry.

use super::common::{Annotations, Icon, Meta};
use super::macros::{duplicate, mcp_struct, tagged_union, FromMap, Key, MapVisitor};
use crate::alloc_prelude::*;
use crate::version::{Feature, ProtocolVersion};

mcp_struct! {
    /// Text content.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::TextContent;
    ///
    /// let t = TextContent::new("hello");
    /// assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"type":"text","text":"hello"}"#);
    /// ```
    #[derive(Default)]
    pub struct TextContent {
        @tag "type" = "text";
        /// The text.
        req text: String = "text",
        /// Display hints.
        opt annotations: Box<Annotations> = "annotations",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// An image, base64-encoded.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::ImageContent;
    ///
    /// let i = ImageContent::new("iVBORw0KGgo=", "image/png");
    /// assert_eq!(i.mime_type, "image/png");
    /// ```
    #[derive(Default)]
    pub struct ImageContent {
        @tag "type" = "image";
        /// Base64-encoded image data.
        req data: String = "data",
        /// The image's MIME type.
        req mime_type: String = "mimeType",
        /// Display hints.
        opt annotations: Box<Annotations> = "annotations",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// Audio, base64-encoded (2025-03-26+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::AudioContent;
    ///
    /// let a = AudioContent::new("UklGRg==", "audio/wav");
    /// assert!(serde_json::to_string(&a).unwrap().starts_with(r#"{"type":"audio""#));
    /// ```
    #[derive(Default)]
    pub struct AudioContent {
        @tag "type" = "audio";
        /// Base64-encoded audio data.
        req data: String = "data",
        /// The audio's MIME type.
        req mime_type: String = "mimeType",
        /// Display hints.
        opt annotations: Box<Annotations> = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// A link to a resource the client may read (2025-06-18+).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::ResourceLink;
    ///
    /// let l = ResourceLink::new("file:///a.txt", "a.txt");
    /// assert!(serde_json::to_string(&l).unwrap().contains(r#""type":"resource_link""#));
    /// ```
    #[derive(Default)]
    pub struct ResourceLink {
        @tag "type" = "resource_link";
        /// The resource's URI.
        req uri: String = "uri",
        /// Programmatic name.
        req name: String = "name",
        /// Human-readable name.
        opt title: String = "title",
        /// Description.
        opt description: String = "description",
        /// MIME type.
        opt mime_type: String = "mimeType",
        /// Size in bytes of the raw content, if known.
        opt size: u64 = "size",
        /// Icons (2025-11-25+).
        opt icons: Vec<Icon> = "icons",
        /// Display hints.
        opt annotations: Box<Annotations> = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// The contents of a resource embedded in a message.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{EmbeddedResource, ResourceContents, TextResourceContents};
    ///
    /// let e = EmbeddedResource::new(TextResourceContents::new("file:///a", "hi").into());
    /// assert!(matches!(e.resource, ResourceContents::Text(_)));
    /// ```
    pub struct EmbeddedResource {
        @tag "type" = "resource";
        /// The contents.
        req resource: ResourceContents = "resource",
        /// Display hints.
        opt annotations: Box<Annotations> = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// The text contents of a resource.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::TextResourceContents;
    ///
    /// let t = TextResourceContents::new("file:///a.txt", "hello").with_mime_type("text/plain");
    /// assert_eq!(t.mime_type.as_deref(), Some("text/plain"));
    /// ```
    #[derive(Default)]
    pub struct TextResourceContents {
        /// The resource's URI.
        req uri: String = "uri",
        /// The text.
        req text: String = "text",
        /// MIME type.
        opt mime_type: String = "mimeType",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

mcp_struct! {
    /// The binary contents of a resource, base64-encoded.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::BlobResourceContents;
    ///
    /// let b = BlobResourceContents::new("file:///a.bin", "AAEC");
    /// assert_eq!(b.blob, "AAEC");
    /// ```
    #[derive(Default)]
    pub struct BlobResourceContents {
        /// The resource's URI.
        req uri: String = "uri",
        /// Base64-encoded bytes.
        req blob: String = "blob",
        /// MIME type.
        opt mime_type: String = "mimeType",
        /// Metadata (2025-06-18+).
        opt meta: Meta = "_meta",
    }
}

/// The contents of a resource: text or binary.
///
/// Told apart by the presence of `text` or `blob`; an object with neither is kept in
/// `Unknown`.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::ResourceContents;
///
/// let c: ResourceContents = serde_json::from_str(r#"{"uri":"x:/","blob":"AA=="}"#).unwrap();
/// assert!(matches!(c, ResourceContents::Blob(_)));
/// assert_eq!(c.uri(), Some("x:/"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
    /// Neither `text` nor `blob`: kept whole.
    Unknown(super::JsonObject),
}

impl ResourceContents {
    /// The URI of the resource.
    #[must_use]
    pub fn uri(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.uri),
            Self::Blob(b) => Some(&b.uri),
            Self::Unknown(m) => m.get("uri").and_then(serde_json::Value::as_str),
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(t: TextResourceContents) -> Self {
        Self::Text(t)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(b: BlobResourceContents) -> Self {
        Self::Blob(b)
    }
}

impl serde::Serialize for ResourceContents {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(t) => t.serialize(serializer),
            Self::Blob(b) => b.serialize(serializer),
            Self::Unknown(m) => m.serialize(serializer),
        }
    }
}

impl<'de> serde::Deserialize<'de> for ResourceContents {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MapVisitor::<Self>::new("resource contents (an object)"))
    }
}

/// One pass over the members; `text` or `blob` decides the variant at the end.
impl FromMap for ResourceContents {
    fn from_map<'de, A: serde::de::MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
        let (mut uri, mut text, mut blob, mut mime_type, mut meta) = (None, None, None, None, None);
        let mut extra = super::JsonObject::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let slot = match key.0.as_ref() {
                "uri" => &mut uri,
                "text" => &mut text,
                "blob" => &mut blob,
                "mimeType" => &mut mime_type,
                "_meta" => {
                    if meta.is_some() {
                        return Err(duplicate("_meta"));
                    }
                    meta = map.next_value::<Option<Meta>>()?;
                    continue;
                }
                _ => {
                    let name = key.0.into_owned();
                    let value = map.next_value()?;
                    if extra.insert(name, value).is_some() {
                        return Err(duplicate("member"));
                    }
                    continue;
                }
            };
            if slot.is_some() {
                return Err(duplicate(&key.0));
            }
            *slot = map.next_value::<Option<String>>()?;
        }
        let missing_uri = || serde::de::Error::missing_field("uri");
        Ok(match (text, blob) {
            (Some(text), blob) => Self::Text(TextResourceContents {
                uri: uri.ok_or_else(missing_uri)?,
                text,
                mime_type,
                meta,
                extra: blob_back(extra, blob),
            }),
            (None, Some(blob)) => {
                Self::Blob(BlobResourceContents { uri: uri.ok_or_else(missing_uri)?, blob, mime_type, meta, extra })
            }
            (None, None) => {
                let mut all = super::JsonObject::new();
                let strings = [("uri", uri), ("mimeType", mime_type)];
                for (k, v) in strings {
                    if let Some(v) = v {
                        all.insert(k.to_owned(), serde_json::Value::String(v));
                    }
                }
                if let Some(m) = meta {
                    all.insert("_meta".to_owned(), serde_json::Value::Object(m));
                }
                all.extend(extra);
                Self::Unknown(all)
            }
        })
    }
}

/// Text contents that also carried a `blob` keep it as an unknown member.
fn blob_back(mut extra: super::JsonObject, blob: Option<String>) -> super::JsonObject {
    if let Some(b) = blob {
        extra.insert("blob".to_owned(), serde_json::Value::String(b));
    }
    extra
}

tagged_union! {
    /// A piece of content in a tool result, prompt message or sampling message.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::ContentBlock;
    ///
    /// let c: ContentBlock = serde_json::from_str(r#"{"type":"text","text":"hi"}"#).unwrap();
    /// assert_eq!(c.as_text(), Some("hi"));
    /// let future: ContentBlock = serde_json::from_str(r#"{"type":"hologram","x":1}"#).unwrap();
    /// assert!(matches!(future, ContentBlock::Unknown(_)));
    /// assert_eq!(serde_json::to_string(&future).unwrap(), r#"{"type":"hologram","x":1}"#);
    /// ```
    pub enum ContentBlock by "type" {
        /// Text.
        "text" => Text(TextContent),
        /// An image.
        "image" => Image(ImageContent),
        /// Audio (2025-03-26+).
        "audio" => Audio(AudioContent),
        /// A link to a resource (2025-06-18+).
        "resource_link" => ResourceLink(Box<ResourceLink>),
        /// An embedded resource.
        "resource" => Resource(Box<EmbeddedResource>),
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(link: ResourceLink) -> Self {
        Self::ResourceLink(Box::new(link))
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(resource: EmbeddedResource) -> Self {
        Self::Resource(Box::new(resource))
    }
}

impl ContentBlock {
    /// Text content with the given text.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The block as `version` can carry it: a kind of content the revision does not define
    /// becomes a text block saying what it was, so that an older client never receives a
    /// block it cannot read. The table:
    ///
    /// | block | since | before it, the client gets |
    /// |---|---|---|
    /// | `audio` | 2025-03-26 | text: `[audio (<mimeType>) not shown: ...]` |
    /// | `resource_link` | 2025-06-18 | text: `<title or name>: <uri>`, and the description |
    ///
    /// `text`, `image` and embedded `resource` blocks exist in every revision and are kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::schema::{AudioContent, ContentBlock};
    /// use talaria_core::version::ProtocolVersion;
    ///
    /// let audio = ContentBlock::Audio(AudioContent::new("UklGRg==", "audio/wav"));
    /// assert!(matches!(audio.clone().for_revision(ProtocolVersion::V2025_03_26), ContentBlock::Audio(_)));
    /// let text = audio.for_revision(ProtocolVersion::V2024_11_05);
    /// assert!(text.as_text().unwrap().contains("audio/wav"));
    /// ```
    #[must_use]
    pub fn for_revision(self, version: ProtocolVersion) -> Self {
        match self {
            Self::Audio(audio) if !version.supports(Feature::AudioContent) => Self::text(format!(
                "[audio ({}) not shown: this client's protocol revision ({version}) has no audio content]",
                audio.mime_type
            )),
            Self::ResourceLink(link) if !version.supports(Feature::ResourceLinks) => {
                let name = link.title.as_deref().unwrap_or(&link.name);
                let mut text = format!("{name}: {}", link.uri);
                if let Some(description) = &link.description {
                    text.push_str(&format!("\n{description}"));
                }
                Self::text(text)
            }
            block => block,
        }
    }

    /// Each of `blocks` as `version` can carry it ([`ContentBlock::for_revision`]).
    pub fn adapt_all(blocks: &mut Vec<Self>, version: ProtocolVersion) {
        if version.supports(Feature::ResourceLinks) {
            return;
        }
        *blocks = core::mem::take(blocks).into_iter().map(|block| block.for_revision(version)).collect();
    }

    /// The text of a text block.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl TextContent {
    /// Text content with the given text.
    #[must_use]
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
}

impl ImageContent {
    /// An image from base64 data and a MIME type.
    #[must_use]
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), ..Self::default() }
    }
}

impl AudioContent {
    /// Audio from base64 data and a MIME type.
    #[must_use]
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), ..Self::default() }
    }
}

impl ResourceLink {
    /// A link to `uri` named `name`.
    #[must_use]
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self { uri: uri.into(), name: name.into(), ..Self::default() }
    }
}

impl EmbeddedResource {
    /// Embeds the given contents.
    #[must_use]
    pub fn new(resource: ResourceContents) -> Self {
        Self { resource, annotations: None, meta: None, extra: super::JsonObject::new() }
    }
}

impl TextResourceContents {
    /// Text contents of `uri`.
    #[must_use]
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self { uri: uri.into(), text: text.into(), ..Self::default() }
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl BlobResourceContents {
    /// Binary contents of `uri` from base64 data.
    #[must_use]
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        Self { uri: uri.into(), blob: blob.into(), ..Self::default() }
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_wrong_tag_on_a_concrete_type_is_refused() {
        assert!(serde_json::from_str::<TextContent>(r#"{"type":"image","text":"x"}"#).is_err());
        assert!(serde_json::from_str::<TextContent>(r#"{"text":"x"}"#).is_ok());
    }

    #[test]
    fn every_block_kind_round_trips() {
        let blocks = json!([
            {"type": "text", "text": "a", "annotations": {"priority": 0.5}},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "audio", "data": "AA==", "mimeType": "audio/wav", "_meta": {"k": 1}},
            {"type": "resource_link", "uri": "x:/", "name": "x", "size": 3},
            {"type": "resource", "resource": {"uri": "x:/", "text": "t"}},
            {"type": "resource", "resource": {"uri": "x:/", "blob": "AA=="}},
        ]);
        let decoded: Vec<ContentBlock> = serde_json::from_value(blocks.clone()).unwrap();
        assert!(decoded.iter().all(|b| !matches!(b, ContentBlock::Unknown(_))));
        assert_eq!(serde_json::to_value(&decoded).unwrap(), blocks);
    }

    /// The boxed variants are built from their plain types too, and a block stays small
    /// (every block is moved several times on its way out of a decoder).
    #[test]
    fn boxed_blocks_are_built_from_their_plain_types() {
        let link = ContentBlock::from(ResourceLink::new("file:///a.txt", "a.txt"));
        let ContentBlock::ResourceLink(inner) = &link else { panic!("{link:?}") };
        assert_eq!(inner.uri, "file:///a.txt");
        let embedded = ContentBlock::from(EmbeddedResource::new(TextResourceContents::new("x:/", "t").into()));
        assert!(matches!(&embedded, ContentBlock::Resource(e) if matches!(e.resource, ResourceContents::Text(_))));
        let text = serde_json::to_string(&[link, embedded]).unwrap();
        let back: Vec<ContentBlock> = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        let size = size_of::<ContentBlock>();
        assert!(size <= 128, "a content block is {size} bytes");
    }

    #[test]
    fn a_tag_that_is_not_a_string_is_kept_whole_in_unknown() {
        for text in [
            r#"{"type":5,"x":1}"#,
            r#"{"type":-2.5}"#,
            r#"{"type":true}"#,
            r#"{"type":null,"text":"t"}"#,
            r#"{"type":["text"],"text":"t"}"#,
            r#"{"type":{"kind":"text","n":[1,{"a":null}]},"text":"t"}"#,
        ] {
            let block: ContentBlock = serde_json::from_str(text).unwrap();
            assert!(matches!(block, ContentBlock::Unknown(_)), "{text}: {block:?}");
            let back: serde_json::Value = serde_json::to_value(&block).unwrap();
            assert_eq!(back, serde_json::from_str::<serde_json::Value>(text).unwrap(), "{text}");
        }
        // An escaped tag is read (owned, not borrowed) and still known.
        let block: ContentBlock = serde_json::from_str(r#"{"type":"te\u0078t","text":"t"}"#).unwrap();
        assert_eq!(block.as_text(), Some("t"));
    }

    #[test]
    fn a_known_tag_with_bad_members_is_an_error_not_unknown() {
        assert!(serde_json::from_str::<ContentBlock>(r#"{"type":"text"}"#).is_err());
    }
}
