//! Typed MCP messages for every published revision.
//!
//! One Rust type covers a concept across revisions: members added later are optional, and
//! [`ForRevision::adapt_to`] applies the encoding rules of the revision in play. Every object
//! keeps the members it does not know in `extra` and writes them back, and `_meta` is kept
//! wherever the schema allows it.
//!
//! Each method is described once in [`METHODS`]; marker types (such as [`tools::CallTool`])
//! implement [`RequestMethod`] or [`NotificationMethod`] to pair the method with its types.
//!
//! # Examples
//!
//! ```
//! use talaria_core::jsonrpc::Message;
//! use talaria_core::schema::{tools::CallToolRequestParams, RequestMethod, tools::CallTool};
//!
//! let msg = Message::from_slice(
//!     br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}"#,
//! ).unwrap();
//! let Message::Request(req) = msg else { unreachable!() };
//! assert_eq!(req.method, CallTool::INFO.name);
//! let params: CallToolRequestParams = req.params_as().unwrap();
//! assert_eq!(params.name, "echo");
//! ```

pub(crate) mod macros;
#[cfg(test)]
pub(crate) mod test_support;

mod common;
mod content;
mod dispatch;
mod lazy;
mod methods;
mod ordered;

pub mod completion;
pub mod elicitation;
pub mod lifecycle;
pub mod logging;
pub mod mrtr;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod subscriptions;
pub mod tasks;
pub mod tools;
pub mod utilities;
pub mod validate;

pub use common::{
    meta_keys, Annotations, CacheScope, Cursor, EmptyResult, ForRevision, Icon, IconTheme, Implementation, JsonObject,
    LoggingLevel, Meta, NotificationParams, Paginated, PaginatedRequestParams, ProgressToken, RequestParams,
    ResultType, Role, UnknownLevel,
};

pub(crate) use common::{adapt_cacheable, adapt_result_type};
pub use content::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent, ResourceContents, ResourceLink,
    TextContent, TextResourceContents,
};
pub use dispatch::{result_type_of, AnyParams, AnyResult, McpPayloads};
pub use lazy::{LazyJson, LazyObject, LazyShape};
pub use methods::{
    method_info, method_info_in, params_capability, Capability, MethodInfo, MethodKind, NotificationMethod,
    RequestMethod, SentBy, Side, METHODS,
};
pub use ordered::OrderedMap;
