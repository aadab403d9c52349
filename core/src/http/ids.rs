//! Session ids: at least 128 bits from a random source the adapter injects (the operating
//! system's CSPRNG in production, a seeded generator in tests), as visible ASCII.

use crate::alloc_prelude::*;
/// A source of random bytes.
///
/// Any `FnMut(&mut [u8])` is one.
pub trait Entropy {
    /// Fills `buf` with random bytes.
    fn fill(&mut self, buf: &mut [u8]);
}

impl<F: FnMut(&mut [u8])> Entropy for F {
    fn fill(&mut self, buf: &mut [u8]) {
        self(buf);
    }
}

/// How many random bytes a session id carries (128 bits).
pub const SESSION_ID_BYTES: usize = 16;

/// Mints a session id: 128 random bits as 32 lowercase hex digits (visible ASCII, as
/// `Mcp-Session-Id` requires).
///
/// # Examples
///
/// ```
/// use talaria_core::http::ids::mint_session_id;
///
/// let mut counter = 0u8;
/// let id = mint_session_id(&mut |buf: &mut [u8]| buf.iter_mut().for_each(|b| { counter += 1; *b = counter }));
/// assert_eq!(id, "0102030405060708090a0b0c0d0e0f10");
/// ```
pub fn mint_session_id(entropy: &mut impl Entropy) -> String {
    let mut bytes = [0u8; SESSION_ID_BYTES];
    entropy.fill(&mut bytes);
    bytes.iter().fold(String::with_capacity(2 * SESSION_ID_BYTES), |mut id, b| {
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 15)]));
        id
    })
}

/// [`mint_session_id`] from a source that can fail (the operating system's CSPRNG): its
/// error, and no id, when it does, so that a server fails closed instead of minting an id
/// from whatever the buffer held.
///
/// # Errors
///
/// The source's error.
///
/// # Examples
///
/// ```
/// use talaria_core::http::ids::try_mint_session_id;
///
/// let minted = try_mint_session_id(|buf: &mut [u8]| {
///     buf.fill(7);
///     Ok::<(), ()>(())
/// });
/// assert_eq!(minted.unwrap(), "07".repeat(16));
/// assert!(try_mint_session_id(|_: &mut [u8]| Err("no entropy")).is_err());
/// ```
pub fn try_mint_session_id<E>(mut fill: impl FnMut(&mut [u8]) -> Result<(), E>) -> Result<String, E> {
    let mut failed = None;
    let id = mint_session_id(&mut |buf: &mut [u8]| {
        if let Err(e) = fill(buf) {
            failed = Some(e);
        }
    });
    failed.map_or(Ok(id), Err)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether `id` could be a session id this module minted (used to refuse junk before a
/// lookup).
///
/// # Examples
///
/// ```
/// use talaria_core::http::ids::looks_like_session_id;
///
/// assert!(looks_like_session_id("0102030405060708090a0b0c0d0e0f10"));
/// assert!(!looks_like_session_id("../../etc/passwd"));
/// ```
#[must_use]
pub fn looks_like_session_id(id: &str) -> bool {
    id.len() == 2 * SESSION_ID_BYTES && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
