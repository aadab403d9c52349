//! The JSON-RPC 2.0 wire layer: messages, ids, errors, batches.
//!
//! [`Message::from_slice`] decodes one frame strictly and fast; [`Packet::from_slice`] also
//! accepts batches. Every failure is a [`DecodeError`] that knows its JSON-RPC error reply.
//!
//! # Examples
//!
//! ```
//! use talaria_core::jsonrpc::{Message, Request};
//!
//! let req = Request::new(1, "ping", None::<()>).unwrap();
//! let bytes = Message::from(req).to_vec();
//! assert_eq!(bytes, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! let back = Message::from_slice(&bytes).unwrap();
//! assert_eq!(back.method(), Some("ping"));
//! ```

mod decode;
mod envelope;
mod error;
mod id;
mod message;
pub(crate) mod scan;

pub use decode::{decode_with, encode_batch, DecodeError, Packet, TypedDecodeError};
pub use envelope::{Envelope, PayloadDecoder, RawPayloads};
pub use error::{ErrorCode, ErrorKind, ErrorObject};
pub use id::RequestId;
pub use message::{ErrorResponse, Message, Notification, Request, Response, JSONRPC_VERSION};
