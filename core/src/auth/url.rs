//! Just enough of RFC 3986 for authorization: the parts of an `http`/`https` URL, the
//! canonical form of an MCP server's URI (RFC 8707 `resource`), and origins.

use crate::alloc_prelude::*;
use core::fmt;

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not `http://` or `https://`.
    #[error("not an http(s) URL: {0:?}")]
    Scheme(String),
    /// No host after the scheme.
    #[error("no host in {0:?}")]
    Host(String),
}

/// An `http` or `https` URL, split into its parts.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::url::HttpUrl;
///
/// let url = HttpUrl::parse("HTTPS://MCP.Example.com:8443/server/mcp?x=1#frag").unwrap();
/// assert_eq!(url.origin(), "https://mcp.example.com:8443");
/// assert_eq!(url.path(), "/server/mcp");
/// assert_eq!(url.canonical(), "https://mcp.example.com:8443/server/mcp");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    scheme: String,
    authority: String,
    path: String,
    query: Option<String>,
}

impl HttpUrl {
    /// Parses `text`: the scheme and host are lowercased, the fragment dropped.
    ///
    /// # Errors
    ///
    /// [`UrlError`] for anything but an absolute `http`/`https` URL with a host.
    pub fn parse(text: &str) -> Result<Self, UrlError> {
        let text = text.trim();
        let (scheme, rest) = text.split_once("://").ok_or_else(|| UrlError::Scheme(text.to_owned()))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(UrlError::Scheme(text.to_owned()));
        }
        let rest = rest.split('#').next().unwrap_or("");
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = rest[..authority_end].to_owned();
        // Userinfo is not allowed to hide the host (`https://good@evil`).
        let host = authority.rsplit('@').next().unwrap_or("");
        if host.is_empty() || authority.contains('@') {
            return Err(UrlError::Host(text.to_owned()));
        }
        let after = &rest[authority_end..];
        let (path, query) = match after.split_once('?') {
            Some((path, query)) => (path, Some(query.to_owned())),
            None => (after, None),
        };
        Ok(Self { scheme, authority: authority.to_ascii_lowercase(), path: path.to_owned(), query })
    }

    /// `http` or `https`.
    #[must_use]
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// `scheme://host[:port]`.
    #[must_use]
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// The path (possibly empty), without query or fragment.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The query, without `?`.
    #[must_use]
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// The host, without the port (`127.0.0.1`, `[::1]`, `example.com`).
    #[must_use]
    pub fn host(&self) -> &str {
        if self.authority.starts_with('[') {
            return self.authority.split_inclusive(']').next().unwrap_or(&self.authority);
        }
        self.authority.split(':').next().unwrap_or(&self.authority)
    }

    /// Whether the host is this machine (`localhost`, `127.0.0.0/8`, `[::1]`).
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::auth::url::HttpUrl;
    ///
    /// assert!(HttpUrl::parse("http://127.0.0.1:8080/cb").unwrap().is_loopback());
    /// assert!(HttpUrl::parse("http://localhost/cb").unwrap().is_loopback());
    /// assert!(!HttpUrl::parse("http://127.0.0.1.evil.com/").unwrap().is_loopback());
    /// ```
    #[must_use]
    pub fn is_loopback(&self) -> bool {
        let host = self.host();
        host == "localhost"
            || host == "[::1]"
            || host.strip_prefix("127.").is_some_and(|rest| {
                let parts: Vec<&str> = rest.split('.').collect();
                parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.parse::<u8>().is_ok())
            })
    }

    /// Whether credentials may travel to this URL: `https`, or `http` to this machine (OAuth
    /// 2.1 requires TLS for every endpoint but loopback ones).
    #[must_use]
    pub fn is_secure(&self) -> bool {
        self.scheme == "https" || self.is_loopback()
    }

    /// The canonical server URI (MCP authorization, RFC 8707): lowercase scheme and host, no
    /// query or fragment, no trailing slash.
    #[must_use]
    pub fn canonical(&self) -> String {
        format!("{}{}", self.origin(), self.path.trim_end_matches('/'))
    }

    /// Whether `self` (a protected resource's identifier) covers `server`: same origin, and
    /// the server's path is the resource's path or below it.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::auth::url::HttpUrl;
    ///
    /// let resource = HttpUrl::parse("https://api.example.com/mcp").unwrap();
    /// assert!(resource.covers(&HttpUrl::parse("https://api.example.com/mcp").unwrap()));
    /// assert!(resource.covers(&HttpUrl::parse("https://API.example.com/mcp/").unwrap()));
    /// assert!(!resource.covers(&HttpUrl::parse("https://api.example.com/mcpx").unwrap()));
    /// assert!(!resource.covers(&HttpUrl::parse("https://evil.example.com/mcp").unwrap()));
    /// ```
    #[must_use]
    pub fn covers(&self, server: &Self) -> bool {
        if self.origin() != server.origin() {
            return false;
        }
        let resource = self.path.trim_end_matches('/');
        let server = server.path.trim_end_matches('/');
        server == resource || server.strip_prefix(resource).is_some_and(|rest| rest.starts_with('/'))
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origin(), self.path)?;
        if let Some(query) = &self.query {
            write!(f, "?{query}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_urls() {
        let ok = [
            ("https://mcp.example.com", "https://mcp.example.com", ""),
            ("https://mcp.example.com/", "https://mcp.example.com", "/"),
            ("http://127.0.0.1:8080/mcp?x=y", "http://127.0.0.1:8080/mcp", "/mcp"),
            ("HTTPS://Example.COM/A/b#f", "https://example.com/A/b", "/A/b"),
            ("https://[::1]:9/mcp", "https://[::1]:9/mcp", "/mcp"),
        ];
        for (text, canonical, path) in ok {
            let url = HttpUrl::parse(text).unwrap();
            assert_eq!(url.canonical(), canonical, "{text}");
            assert_eq!(url.path(), path, "{text}");
        }
        for bad in ["mcp.example.com", "ftp://x/y", "https://", "https:///path", "https://user@evil.com/x", ""] {
            assert!(HttpUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
