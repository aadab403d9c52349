//! Multi round-trip requests (2026-07-28).

/// Client answers to a server's input requests, keyed like the requests (placeholder).
pub type InputResponses = super::JsonObject;
