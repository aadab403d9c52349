//! Sans-IO core of Talaria, a Model Context Protocol SDK.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod codec;
