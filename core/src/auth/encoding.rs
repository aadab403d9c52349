//! The encodings OAuth requests use: `application/x-www-form-urlencoded` (query strings and
//! token request bodies), base64url without padding (PKCE), and standard base64 (HTTP Basic).

use crate::alloc_prelude::*;
/// Percent-encodes `text` for a form or query value: unreserved characters stay, space
/// becomes `+`, everything else `%XX` (UTF-8 bytes).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::encoding::form_encode;
///
/// assert_eq!(form_encode("https://mcp.example.com/a b"), "https%3A%2F%2Fmcp.example.com%2Fa+b");
/// ```
#[must_use]
pub fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(char::from(byte)),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// `name=value&...`, each part form-encoded.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::encoding::form;
///
/// assert_eq!(form(&[("a", "1 2"), ("b", "&")]), "a=1+2&b=%26");
/// ```
#[must_use]
pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| format!("{}={}", form_encode(name), form_encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes a form-encoded part (`+` is a space, `%XX` a byte); malformed escapes are kept as
/// they are, and bytes that are not UTF-8 are replaced.
#[must_use]
pub fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|h| core::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `name=value` pairs of a query string or form body, decoded, in order.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::encoding::parse_form;
///
/// assert_eq!(parse_form("code=a%2Fb&state=x+y&flag"), [("code".into(), "a/b".into()), ("state".into(), "x y".into()), ("flag".into(), String::new())]);
/// ```
#[must_use]
pub fn parse_form(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (name, value) = part.split_once('=').unwrap_or((part, ""));
            (form_decode(name), form_decode(value))
        })
        .collect()
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64_with(alphabet: &[u8; 64], bytes: &[u8], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Base64url without padding (RFC 4648 §5), as PKCE and JWTs use it.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::encoding::base64url;
///
/// assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
/// ```
#[must_use]
pub fn base64url(bytes: &[u8]) -> String {
    base64_with(URL_SAFE, bytes, false)
}

/// Standard base64 with padding (RFC 4648 §4), as HTTP Basic uses it.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::encoding::base64;
///
/// assert_eq!(base64(b"client:secret"), "Y2xpZW50OnNlY3JldA==");
/// ```
#[must_use]
pub fn base64(bytes: &[u8]) -> String {
    base64_with(STANDARD, bytes, true)
}

/// Decodes base64, standard or URL-safe, padded or not, ignoring ASCII whitespace (as in PEM
/// bodies); `None` for anything else.
///
/// # Examples
///
/// ```
/// use talaria_core::auth::encoding::base64_decode;
///
/// assert_eq!(base64_decode("Y2xp\nZW50").unwrap(), b"client");
/// assert_eq!(base64_decode("-_8").unwrap(), [0xfb, 0xff]);
/// assert!(base64_decode("a*b").is_none());
/// ```
#[must_use]
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(
            match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' | b'-' => 62,
                b'/' | b'_' => 63,
                _ => return None,
            }
            .into(),
        )
    };
    let digits: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let digits = digits.strip_suffix(b"==").or_else(|| digits.strip_suffix(b"=")).unwrap_or(&digits);
    if digits.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() / 4 * 3 + 2);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn rfc4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64(plain.as_bytes()), encoded);
            assert_eq!(base64url(plain.as_bytes()), encoded.trim_end_matches('='));
        }
    }

    #[test]
    fn malformed_escapes_are_kept() {
        assert_eq!(form_decode("100%"), "100%");
        assert_eq!(form_decode("%zz"), "%zz");
        assert_eq!(form_decode("%4"), "%4");
        assert_eq!(form_decode("%41"), "A");
        assert_eq!(form_decode("%+1"), "% 1", "not an escape: kept, and + is a space");
    }

    proptest! {
        #[test]
        fn form_encoding_round_trips(text in ".{0,64}") {
            prop_assert_eq!(form_decode(&form_encode(&text)), text);
        }

        #[test]
        fn base64_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(base64_decode(&base64(&bytes)), Some(bytes.clone()));
            prop_assert_eq!(base64_decode(&base64url(&bytes)), Some(bytes));
        }

        #[test]
        fn base64_decoding_never_panics(text in ".{0,64}") {
            let _ = base64_decode(&text);
        }
    }
}
