//! Resource registrations: fixed URIs and URI templates.

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

use super::context::Context;
use super::error::ToolError;
use super::uri_template::UriTemplate;
use crate::schema::resources::{Resource, ResourceTemplate};
use crate::schema::ResourceContents;

/// A resource reader: the URI asked for and the template's variables (empty for a fixed
/// resource) in, the contents out.
pub(super) type ReadFn<S> = Box<
    dyn Fn(&mut Context<'_, S>, &str, &BTreeMap<String, String>) -> Result<Vec<ResourceContents>, ToolError>
        + Send
        + Sync,
>;

/// A resource at one fixed URI.
pub(super) struct ResourceEntry<S> {
    pub(super) resource: Resource,
    pub(super) read: ReadFn<S>,
}

/// A family of resources behind a URI template.
pub(super) struct TemplateEntry<S> {
    pub(super) template: ResourceTemplate,
    pub(super) pattern: UriTemplate,
    pub(super) read: ReadFn<S>,
}

/// Finds the reader for `uri`: a fixed resource first, then the first template that matches,
/// in registration order. Returns the reader, the resource's name and the variables.
pub(super) fn find<'r, S>(
    fixed: &'r [ResourceEntry<S>],
    templates: &'r [TemplateEntry<S>],
    uri: &str,
) -> Option<(&'r ReadFn<S>, &'r str, BTreeMap<String, String>)> {
    if let Some(entry) = fixed.iter().find(|e| e.resource.uri == uri) {
        return Some((&entry.read, entry.resource.name.as_str(), BTreeMap::new()));
    }
    templates.iter().find_map(|t| t.pattern.match_uri(uri).map(|vars| (&t.read, t.template.name.as_str(), vars)))
}
