//! Authorization (MCP's OAuth 2.1 profile, 2025-03-26 onward), the sans-IO parts a client and a
//! server need before any request is made: reading a `WWW-Authenticate` challenge, where to
//! look for the Protected Resource Metadata (RFC 9728) and the Authorization Server Metadata
//! (RFC 8414 and OIDC discovery, in the spec's order), the metadata documents
//! themselves, checking that a metadata document speaks for the server it was fetched for,
//! choosing the scope to ask for, and the authorization code flow with PKCE (S256): the
//! authorization URL, the redirect's checks (`state`, `iss`), the token requests (code,
//! refresh, client credentials; `none`, `client_secret_basic`, `client_secret_post`) and their
//! answers. Randomness comes from the caller; the core sends nothing itself.
//!
//! ```text
//! client                         MCP server                    authorization server
//!   | -- request (no token) -------> |                                  |
//!   | <-- 401 WWW-Authenticate ------ |  challenge::parse               |
//!   | -- GET protected resource md -> |  discovery::resource_metadata_urls
//!   | <-- {resource, authorization_servers, scopes_supported}          |
//!   |       metadata::ProtectedResourceMetadata::check_resource        |
//!   | -- GET AS metadata ------------------------------------------->  |  discovery::authorization_server_metadata_urls
//!   | <-- {authorization_endpoint, token_endpoint, ...} -------------- |
//!   |       scope::select                                              |
//! ```

pub mod challenge;
pub mod client;
pub mod discovery;
pub mod encoding;
pub mod flow;
pub mod jwt;
pub mod metadata;
pub mod pkce;
pub mod registration;
pub mod resource;
pub mod scope;
pub mod url;
