//! `WWW-Authenticate` (RFC 9110 §11.6.1, RFC 6750 §3): the challenges a server answers an
//! unauthenticated or under-privileged request with, and the Bearer parameters MCP reads from
//! them (`resource_metadata`, `scope`, `error`).

use crate::alloc_prelude::*;
use alloc::collections::BTreeMap;

/// One challenge: an auth scheme and its parameters (names lowercased).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Challenge {
    /// The scheme, as sent (`Bearer`).
    pub scheme: String,
    /// `name=value` parameters, names lowercased, quoted values unquoted.
    pub params: BTreeMap<String, String>,
    /// A `token68` credential instead of parameters, if the challenge had one.
    pub token68: Option<String>,
}

impl Challenge {
    /// The parameter `name` (case-insensitive).
    #[must_use]
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// Whether this is a Bearer challenge.
    #[must_use]
    pub fn is_bearer(&self) -> bool {
        self.scheme.eq_ignore_ascii_case("bearer")
    }

    /// `resource_metadata`: where the Protected Resource Metadata is (RFC 9728 §5.1).
    #[must_use]
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// `scope`: the scopes the request needs, space-separated.
    #[must_use]
    pub fn scope(&self) -> Option<&str> {
        self.param("scope")
    }

    /// `error` (`invalid_token`, `insufficient_scope`, ...).
    #[must_use]
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }
}

/// The challenges in a `WWW-Authenticate` value, in order. Malformed parts are skipped, never
/// a panic: this reads what a peer sent.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::challenge::{bearer, parse};
///
/// let header = r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write""#;
/// let challenge = bearer(header).unwrap();
/// assert_eq!(challenge.resource_metadata(), Some("https://mcp.example.com/.well-known/oauth-protected-resource"));
/// assert_eq!(challenge.scope(), Some("files:read files:write"));
///
/// let two = parse(r#"Basic realm="x", Bearer error="insufficient_scope", scope="admin""#);
/// assert_eq!(two.len(), 2);
/// assert_eq!(two[1].error(), Some("insufficient_scope"));
/// ```
#[must_use]
pub fn parse(header: &str) -> Vec<Challenge> {
    let mut lexer = Lexer { rest: header };
    let mut challenges: Vec<Challenge> = Vec::new();
    while let Some(item) = lexer.item() {
        match item {
            Item::Scheme(scheme) => challenges.push(Challenge { scheme, ..Challenge::default() }),
            Item::Param(name, value) => {
                if let Some(current) = challenges.last_mut() {
                    current.params.entry(name.to_ascii_lowercase()).or_insert(value);
                }
            }
            Item::Token68(token) => {
                if let Some(current) = challenges.last_mut() {
                    current.token68.get_or_insert(token);
                }
            }
        }
    }
    challenges
}

/// The first Bearer challenge in a `WWW-Authenticate` value.
#[must_use]
pub fn bearer(header: &str) -> Option<Challenge> {
    parse(header).into_iter().find(Challenge::is_bearer)
}

enum Item {
    Scheme(String),
    Param(String, String),
    Token68(String),
}

struct Lexer<'a> {
    rest: &'a str,
}

impl Lexer<'_> {
    fn skip_separators(&mut self) {
        self.rest = self.rest.trim_start_matches(|c: char| c == ',' || c.is_ascii_whitespace());
    }

    /// The next scheme, parameter or token68.
    fn item(&mut self) -> Option<Item> {
        loop {
            self.skip_separators();
            if self.rest.is_empty() {
                return None;
            }
            let end = self.rest.find(|c: char| !is_tchar(c)).unwrap_or(self.rest.len());
            if end == 0 {
                // Not a token: skip one character and go on.
                let mut chars = self.rest.chars();
                chars.next();
                self.rest = chars.as_str();
                continue;
            }
            let token = &self.rest[..end];
            let after = self.rest[end..].trim_start_matches([' ', '\t']);
            if let Some(value) = after.strip_prefix('=') {
                // `name=value`, or a token68 ending in '='.
                let value = value.trim_start_matches([' ', '\t']);
                if value.is_empty() || value.starts_with(',') || value.starts_with('=') {
                    let padded_end = self.rest[end..].find(|c: char| c != '=').map_or(self.rest.len(), |n| end + n);
                    let token68 = self.rest[..padded_end].to_owned();
                    self.rest = &self.rest[padded_end..];
                    return Some(Item::Token68(token68));
                }
                let name = token.to_owned();
                let (value, rest) = read_value(value);
                self.rest = rest;
                return Some(Item::Param(name, value));
            }
            self.rest = &self.rest[end..];
            return Some(Item::Scheme(token.to_owned()));
        }
    }
}

/// A parameter value: a quoted string (escapes resolved) or a token; and what follows.
fn read_value(text: &str) -> (String, &str) {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                _ => value.push(c),
            }
        }
        // An unterminated quote takes the rest.
        return (value, "");
    }
    let end = text.find(|c: char| c == ',' || c.is_ascii_whitespace()).unwrap_or(text.len());
    (text[..end].to_owned(), &text[end..])
}

/// RFC 9110 `tchar`, plus the characters a token68 may hold.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~/:".contains(c)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_table_of_challenges() {
        let c = bearer(r#"Bearer realm="mcp", error="invalid_token", error_description="The access token expired""#)
            .unwrap();
        assert_eq!(c.param("REALM"), Some("mcp"));
        assert_eq!(c.error(), Some("invalid_token"));
        assert_eq!(c.param("error_description"), Some("The access token expired"));

        let c = bearer(r#"bearer scope=read, resource_metadata="https://x/.well-known/oauth-protected-resource/mcp""#)
            .unwrap();
        assert_eq!(c.scope(), Some("read"));
        assert_eq!(c.resource_metadata(), Some("https://x/.well-known/oauth-protected-resource/mcp"));

        let c = bearer(r#"Bearer error="x", scope="a \"quoted\" b""#).unwrap();
        assert_eq!(c.scope(), Some(r#"a "quoted" b"#));

        let all = parse("Negotiate abc123==, Bearer");
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].token68.as_deref(), Some("abc123=="));
        assert!(all[1].is_bearer() && all[1].params.is_empty());

        assert!(bearer("Basic realm=\"x\"").is_none());
        assert!(parse("").is_empty());
        assert!(parse(",,, ,").is_empty());
        // Unterminated quote: the rest is the value.
        assert_eq!(bearer("Bearer scope=\"a b").unwrap().scope(), Some("a b"));
        // A repeated parameter keeps its first value.
        assert_eq!(bearer("Bearer scope=a, scope=b").unwrap().scope(), Some("a"));
    }

    proptest! {
        #[test]
        fn any_header_is_read_without_panic(header in ".{0,200}") {
            let _ = parse(&header);
        }

        #[test]
        fn quoted_values_come_back(value in "[ -~]{0,40}") {
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            let header = format!("Bearer scope=\"{escaped}\", error=x");
            let c = bearer(&header).unwrap();
            prop_assert_eq!(c.scope(), Some(value.as_str()));
            prop_assert_eq!(c.error(), Some("x"));
        }
    }
}
