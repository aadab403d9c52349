//! Opaque cursors for the MCP list methods (`tools/list`, `prompts/list`, `resources/list`, ...).
//!
//! [`paginate`] cuts a slice into pages and hands out a cursor for the next one. A cursor encodes
//! the offset of the page it starts, with a short prefix and a checksum: clients must treat it as
//! opaque, and the server refuses anything it did not hand out with [`InvalidCursor`], which maps
//! to the -32602 `Invalid cursor` error the specification shows.
//!
//! The checksum only catches accidents (a truncated, mistyped or hand-made cursor); it is not a
//! security boundary. Anyone can compute a valid cursor for any offset, and that is harmless: a
//! cursor only selects a window of a list the client may read in full anyway.
//!
//! Offsets index the list as it is when the next page is asked for: if the list changes between
//! two calls, items may be skipped or seen twice. A server whose list changes sends
//! `notifications/*/list_changed`, after which clients list again from the start.
//!
//! # Examples
//!
//! ```
//! use talaria_core::server::pagination::paginate;
//!
//! let items = ["a", "b", "c"];
//! let first = paginate(&items, None, 2).unwrap();
//! assert_eq!(first.items, ["a", "b"]);
//! let second = paginate(&items, first.next_cursor.as_deref(), 2).unwrap();
//! assert_eq!((second.items, second.next_cursor), (&["c"][..], None));
//! ```

use crate::alloc_prelude::*;
use crate::jsonrpc::ErrorObject;

/// What every cursor starts with.
const PREFIX: &str = "tc1.";

/// Mixed into the checksum, so that cursors of another scheme with the same shape do not pass.
const SALT: &[u8] = b"talaria/cursor/v1";

/// No cursor handed out is longer: prefix, 16 hex digits, a dot, 8 hex digits.
const MAX_CURSOR_LEN: usize = PREFIX.len() + 16 + 1 + 8;

/// One page of a list, and the cursor of the next page.
///
/// # Examples
///
/// ```
/// use talaria_core::server::pagination::{paginate, Page};
///
/// let page: Page<'_, u32> = paginate(&[1, 2, 3], None, 0).unwrap();
/// assert_eq!((page.items, page.next_cursor), (&[1, 2, 3][..], None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<'a, T> {
    /// The items on this page, in list order.
    pub items: &'a [T],
    /// The cursor of the next page, for the result's `nextCursor`; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// Returns the page of `items` that `cursor` points to, at most `page_size` items long.
///
/// No cursor means the first page. A `page_size` of 0 means no pagination: the page runs to the
/// end of the list. `next_cursor` is `Some` exactly when items remain after this page, so
/// following the cursors visits every item once, in order, and a last page is never empty
/// unless the whole list is.
///
/// # Errors
///
/// [`InvalidCursor::Malformed`] if `cursor` is not one this module handed out (garbage, a
/// tampered or truncated cursor, the empty string), and [`InvalidCursor::PastEnd`] if it points
/// beyond the end of the list (the list shrank since). A cursor pointing exactly at the end gives
/// an empty last page.
///
/// # Examples
///
/// ```
/// use talaria_core::server::pagination::{paginate, InvalidCursor};
///
/// let items: Vec<u32> = (0..5).collect();
/// let mut cursor = None;
/// let mut seen = Vec::new();
/// loop {
///     let page = paginate(&items, cursor.as_deref(), 2).unwrap();
///     seen.extend_from_slice(page.items);
///     match page.next_cursor {
///         Some(next) => cursor = Some(next),
///         None => break,
///     }
/// }
/// assert_eq!(seen, items);
/// assert_eq!(paginate(&items, Some("page-3"), 2), Err(InvalidCursor::Malformed));
/// ```
pub fn paginate<'a, T>(items: &'a [T], cursor: Option<&str>, page_size: usize) -> Result<Page<'a, T>, InvalidCursor> {
    let offset = match cursor {
        None => 0,
        Some(cursor) => decode_cursor(cursor).ok_or(InvalidCursor::Malformed)?,
    };
    let rest = items.get(offset..).ok_or(InvalidCursor::PastEnd { offset, len: items.len() })?;
    let len = if page_size == 0 { rest.len() } else { page_size.min(rest.len()) };
    let (page, after) = rest.split_at(len);
    let next_cursor = (!after.is_empty()).then(|| encode_cursor(offset + len));
    Ok(Page { items: page, next_cursor })
}

/// Why a cursor was refused.
///
/// Both variants display as `Invalid cursor`, the message of the -32602 error they answer with;
/// the variant tells the server's logs which case it was.
///
/// # Examples
///
/// ```
/// use talaria_core::jsonrpc::ErrorCode;
/// use talaria_core::server::pagination::{paginate, InvalidCursor};
///
/// let err = paginate(&[1, 2, 3], Some("garbage"), 2).unwrap_err();
/// assert_eq!(err, InvalidCursor::Malformed);
/// assert_eq!(err.to_string(), "Invalid cursor");
/// assert_eq!(err.to_error_object().code, ErrorCode::INVALID_PARAMS);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidCursor {
    /// The cursor is not one this module handed out: wrong prefix, bad digits, bad checksum.
    #[error("Invalid cursor")]
    Malformed,
    /// The cursor is well-formed but points past the end of the list, which must have shrunk.
    #[error("Invalid cursor")]
    PastEnd {
        /// The offset the cursor encodes.
        offset: usize,
        /// The length of the list now.
        len: usize,
    },
}

impl InvalidCursor {
    /// The error to answer the list request with: -32602, `Invalid cursor`, no data.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::jsonrpc::ErrorObject;
    /// use talaria_core::server::pagination::InvalidCursor;
    ///
    /// assert_eq!(InvalidCursor::Malformed.to_error_object(), ErrorObject::invalid_params("Invalid cursor"));
    /// ```
    #[must_use]
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::invalid_params("Invalid cursor")
    }
}

/// The cursor of the page that starts at `offset`: `tc1.<offset in hex>.<checksum in hex>`.
fn encode_cursor(offset: usize) -> String {
    let digits = format!("{offset:x}");
    let check = checksum(&digits);
    format!("{PREFIX}{digits}.{check:08x}")
}

/// The offset a cursor encodes, if it is exactly what [`encode_cursor`] gives for that offset.
fn decode_cursor(cursor: &str) -> Option<usize> {
    if cursor.len() > MAX_CURSOR_LEN {
        return None;
    }
    let (digits, _) = cursor.strip_prefix(PREFIX)?.split_once('.')?;
    let offset = usize::from_str_radix(digits, 16).ok()?;
    // Re-encoding rejects every non-canonical spelling (`+1`, `01`, `A`) and checks the checksum.
    (encode_cursor(offset) == cursor).then_some(offset)
}

/// 32-bit FNV-1a of the salt and the offset digits.
fn checksum(digits: &str) -> u32 {
    SALT.iter()
        .chain(digits.as_bytes())
        .fold(0x811c_9dc5, |hash, &byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::jsonrpc::ErrorCode;

    /// Follows the cursors from the first page to the last; returns the pages.
    fn walk<T>(items: &[T], page_size: usize) -> Vec<&[T]> {
        let mut pages = Vec::new();
        let mut cursor = None;
        loop {
            let page = paginate(items, cursor.as_deref(), page_size).unwrap();
            pages.push(page.items);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return pages,
            }
        }
    }

    #[test]
    fn empty_list_is_one_empty_page() {
        let items: [u8; 0] = [];
        for page_size in [0, 1, 10] {
            assert_eq!(paginate(&items, None, page_size), Ok(Page { items: &items[..], next_cursor: None }));
        }
        assert_eq!(paginate(&items, Some(&encode_cursor(0)), 3).unwrap().items, &items);
        assert_eq!(paginate(&items, Some(&encode_cursor(1)), 3), Err(InvalidCursor::PastEnd { offset: 1, len: 0 }));
    }

    #[test]
    fn page_size_zero_or_larger_than_the_list_gives_everything() {
        let items = [1, 2, 3];
        for page_size in [0, 3, 4, usize::MAX] {
            assert_eq!(paginate(&items, None, page_size), Ok(Page { items: &items[..], next_cursor: None }));
        }
        let rest = paginate(&items, Some(&encode_cursor(1)), 0).unwrap();
        assert_eq!((rest.items, rest.next_cursor), (&items[1..], None));
    }

    #[test]
    fn pages_split_the_list_in_order() {
        let items: Vec<u32> = (0..7).collect();
        assert_eq!(walk(&items, 3), [&items[0..3], &items[3..6], &items[6..7]]);
        assert_eq!(walk(&items, 7), [&items[..]]);
        let first = paginate(&items, None, 3).unwrap();
        assert_eq!(first.next_cursor.as_deref(), Some(encode_cursor(3).as_str()));
    }

    #[test]
    fn cursor_at_the_end_is_an_empty_last_page_and_past_it_is_refused() {
        let items = [1, 2, 3];
        assert_eq!(paginate(&items, Some(&encode_cursor(3)), 2), Ok(Page { items: &items[3..], next_cursor: None }));
        assert_eq!(paginate(&items, Some(&encode_cursor(4)), 2), Err(InvalidCursor::PastEnd { offset: 4, len: 3 }));
        let far = encode_cursor(usize::MAX);
        assert_eq!(decode_cursor(&far), Some(usize::MAX));
        assert_eq!(paginate(&items, Some(&far), 2), Err(InvalidCursor::PastEnd { offset: usize::MAX, len: 3 }));
    }

    #[test]
    fn tampered_and_garbage_cursors_are_refused() {
        let items: Vec<u32> = (0..100).collect();
        let good = encode_cursor(42);
        assert_eq!(paginate(&items, Some(&good), 10).unwrap().items[0], 42);
        // Every single-character change.
        for (i, _) in good.char_indices() {
            for replacement in ['0', '1', '2', '9', 'a', 'f', 'F', '.', 'x'] {
                let mut tampered = good.clone();
                tampered.replace_range(i..=i, &replacement.to_string());
                if tampered != good {
                    assert_eq!(paginate(&items, Some(&tampered), 10), Err(InvalidCursor::Malformed), "{tampered}");
                }
            }
        }
        let digits = good.strip_prefix(PREFIX).unwrap().split_once('.').unwrap().1;
        let garbage = [
            String::new(),
            "garbage".to_owned(),
            "42".to_owned(),
            PREFIX.to_owned(),
            format!("{PREFIX}2a"),
            format!("{PREFIX}2a."),
            format!("{PREFIX}02a.{digits}"),
            format!("{PREFIX}+2a.{digits}"),
            format!("{PREFIX}2A.{digits}"),
            format!("{PREFIX}2b.{digits}"),
            format!("{good} "),
            format!(" {good}"),
            format!("{good}0"),
            good.to_uppercase(),
            "x".repeat(10_000),
        ];
        for cursor in garbage {
            assert_eq!(paginate(&items, Some(&cursor), 10), Err(InvalidCursor::Malformed), "{cursor}");
        }
    }

    #[test]
    fn invalid_cursor_answers_with_invalid_params() {
        for err in [InvalidCursor::Malformed, InvalidCursor::PastEnd { offset: 5, len: 2 }] {
            assert_eq!(err.to_string(), "Invalid cursor");
            let obj = err.to_error_object();
            assert_eq!((obj.code, obj.message.as_str(), obj.data), (ErrorCode::INVALID_PARAMS, "Invalid cursor", None));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn walking_the_cursors_visits_every_item_once_in_order(len in 0usize..300, page_size in 0usize..40) {
            let items: Vec<usize> = (0..len).collect();
            let pages = walk(&items, page_size);
            prop_assert_eq!(pages.concat(), items.clone());
            let expected_pages = if len == 0 || page_size == 0 { 1 } else { len.div_ceil(page_size) };
            prop_assert_eq!(pages.len(), expected_pages);
            prop_assert!(pages.iter().all(|p| p.len() <= page_size || page_size == 0));
            prop_assert!(len == 0 || pages.iter().all(|p| !p.is_empty()));
        }

        #[test]
        fn cursors_round_trip_every_offset(offset in any::<usize>()) {
            prop_assert_eq!(decode_cursor(&encode_cursor(offset)), Some(offset));
        }

        #[test]
        fn arbitrary_strings_are_refused_unless_canonical(cursor in "(?s).{0,40}|tc1\\.[0-9a-f]{1,4}\\.[0-9a-f]{8}") {
            let items = [0u8; 16];
            match paginate(&items, Some(&cursor), 4) {
                Ok(_) => prop_assert_eq!(decode_cursor(&cursor).map(encode_cursor), Some(cursor)),
                Err(InvalidCursor::Malformed) => prop_assert_eq!(decode_cursor(&cursor), None),
                Err(InvalidCursor::PastEnd { offset, len }) => prop_assert!(offset > len),
            }
        }
    }
}
