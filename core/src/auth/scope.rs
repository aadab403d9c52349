//! Which scope a client asks for (2025-11-25 authorization, "Scope Selection Strategy").

use crate::alloc_prelude::*;
/// The `scope` to request: the challenge's `scope` if the 401 named one; else every scope in
/// the Protected Resource Metadata's `scopes_supported`; else none (the parameter is omitted).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::scope::select;
///
/// let supported = vec!["read".to_owned(), "write".to_owned()];
/// assert_eq!(select(Some("read"), Some(&supported)), Some("read".to_owned()));
/// assert_eq!(select(None, Some(&supported)), Some("read write".to_owned()));
/// assert_eq!(select(None, None), None);
/// ```
#[must_use]
pub fn select(challenged: Option<&str>, supported: Option<&[String]>) -> Option<String> {
    if let Some(scope) = challenged.map(str::trim).filter(|s| !s.is_empty()) {
        return Some(scope.to_owned());
    }
    let supported = supported?.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect::<Vec<_>>();
    (!supported.is_empty()).then(|| supported.join(" "))
}

/// The scope to ask for after a `403` with `error="insufficient_scope"` (step-up): what was
/// granted so far and what the challenge needs, each scope once, in that order.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::scope::step_up;
///
/// assert_eq!(step_up(Some("read"), "read write"), "read write");
/// ```
#[must_use]
pub fn step_up(granted: Option<&str>, needed: &str) -> String {
    let mut scopes: Vec<&str> = Vec::new();
    for scope in granted.unwrap_or_default().split_ascii_whitespace().chain(needed.split_ascii_whitespace()) {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    scopes.join(" ")
}

/// Whether every scope in `needed` is among the `tried` scope strings (granted, or asked
/// for and narrowed by the server): if so, authorizing again for `needed` cannot help, and a
/// client answered `403 insufficient_scope` should stop rather than loop.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::scope::already_tried;
///
/// assert!(already_tried("a b", &[Some("b"), Some("a c")]));
/// assert!(!already_tried("a d", &[Some("a"), None]));
/// ```
#[must_use]
pub fn already_tried(needed: &str, tried: &[Option<&str>]) -> bool {
    let tried: Vec<&str> = tried.iter().flatten().flat_map(|s| s.split_ascii_whitespace()).collect();
    needed.split_ascii_whitespace().all(|scope| tried.contains(&scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_values_count_as_absent() {
        assert_eq!(select(Some("  "), Some(&["a".to_owned()])), Some("a".to_owned()));
        assert_eq!(select(None, Some(&[])), None);
        assert_eq!(step_up(None, "a  b a"), "a b");
    }
}
