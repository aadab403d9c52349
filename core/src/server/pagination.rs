//! (being written: a stand-in with the agreed API until the real module lands)

/// One page of a list.
#[derive(Debug)]
pub struct Page<'a, T> {
    /// The items on this page.
    pub items: &'a [T],
    /// The cursor of the next page.
    pub next_cursor: Option<String>,
}

/// A cursor that is not one this server handed out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid cursor")]
pub struct InvalidCursor;

impl InvalidCursor {
    /// The -32602 answer.
    #[must_use]
    pub fn to_error_object(&self) -> crate::jsonrpc::ErrorObject {
        crate::jsonrpc::ErrorObject::invalid_params("Invalid cursor")
    }
}

/// Everything on one page (stand-in).
///
/// # Errors
///
/// Any cursor is refused by the stand-in.
pub fn paginate<'a, T>(items: &'a [T], cursor: Option<&str>, _page_size: usize) -> Result<Page<'a, T>, InvalidCursor> {
    match cursor {
        Some(_) => Err(InvalidCursor),
        None => Ok(Page { items, next_cursor: None }),
    }
}
