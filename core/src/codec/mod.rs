//! Framing codecs: newline-delimited JSON and Server-Sent Events.
