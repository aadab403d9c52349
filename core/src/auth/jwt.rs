//! JWT client assertions (RFC 7523 §2.2, `private_key_jwt`): the claims and the compact
//! serialization. Signing is the caller's: a [`JwtSigner`] turns the signing input into a
//! signature (the `talaria` crate has an ES256 one), so the core carries no cryptography.

use crate::alloc_prelude::*;
use core::fmt;

use serde::Serialize;

use super::encoding::base64url;

/// The assertion type a `private_key_jwt` client sends beside its assertion.
pub const JWT_BEARER_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Signs JWTs: the JWS `alg` it uses, and the signature of a signing input (for ES256, the
/// 64-byte `r || s`).
///
/// # Examples
///
/// ```
/// use talaria_core::auth::jwt::{client_assertion, JwtSigner};
///
/// struct Unsigned;
/// impl JwtSigner for Unsigned {
///     fn algorithm(&self) -> &str { "none" }
///     fn sign(&self, _input: &[u8]) -> Result<Vec<u8>, String> { Ok(Vec::new()) }
/// }
/// let jwt = client_assertion(&Unsigned, "client", "https://as.example.com", 1_700_000_000, "j1").unwrap();
/// assert_eq!(jwt.split('.').count(), 3);
/// ```
pub trait JwtSigner: Send + Sync {
    /// The JWS algorithm (`ES256`, `RS256`, ...).
    fn algorithm(&self) -> &str;
    /// The signature over `input`.
    ///
    /// # Errors
    ///
    /// A description of why it could not sign.
    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, String>;
}

impl fmt::Debug for dyn JwtSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JwtSigner({})", self.algorithm())
    }
}

/// The signer refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not sign the client assertion: {0}")]
pub struct SignError(pub String);

#[derive(Serialize)]
struct Header<'a> {
    alg: &'a str,
    typ: &'a str,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: &'a str,
}

/// How long an assertion is good for, in seconds.
const LIFETIME: u64 = 300;

/// A client assertion for `client_id` (issuer and subject) addressed to `audience` (the
/// authorization server's issuer), issued at `now` (seconds since the epoch), good for five
/// minutes, with the one-time id `jti`.
///
/// # Errors
///
/// [`SignError`] if the signer fails.
pub fn client_assertion(
    signer: &dyn JwtSigner,
    client_id: &str,
    audience: &str,
    now: u64,
    jti: &str,
) -> Result<String, SignError> {
    let claims = Claims { iss: client_id, sub: client_id, aud: audience, iat: now, exp: now + LIFETIME, jti };
    sign(signer, &claims)
}

/// Serializes `claims` as a compact JWS signed by `signer`.
fn sign(signer: &dyn JwtSigner, claims: &impl Serialize) -> Result<String, SignError> {
    let header = Header { alg: signer.algorithm(), typ: "JWT" };
    // Plain structs of strings and integers: serializing them cannot fail.
    let header = serde_json::to_vec(&header).unwrap_or_default();
    let claims = serde_json::to_vec(claims).unwrap_or_default();
    let input = format!("{}.{}", base64url(&header), base64url(&claims));
    let signature = signer.sign(input.as_bytes()).map_err(SignError)?;
    Ok(format!("{input}.{}", base64url(&signature)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::auth::encoding::base64url;

    struct Fixed;
    impl JwtSigner for Fixed {
        fn algorithm(&self) -> &str {
            "ES256"
        }
        fn sign(&self, input: &[u8]) -> Result<Vec<u8>, String> {
            Ok(input.len().to_be_bytes().to_vec())
        }
    }

    struct Broken;
    impl JwtSigner for Broken {
        fn algorithm(&self) -> &str {
            "ES256"
        }
        fn sign(&self, _: &[u8]) -> Result<Vec<u8>, String> {
            Err("no key".into())
        }
    }

    #[test]
    fn an_assertion_carries_the_claims_rfc_7523_asks_for() {
        let jwt = client_assertion(&Fixed, "c", "https://as.example", 100, "j").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts[0], base64url(br#"{"alg":"ES256","typ":"JWT"}"#));
        assert_eq!(
            parts[1],
            base64url(br#"{"iss":"c","sub":"c","aud":"https://as.example","iat":100,"exp":400,"jti":"j"}"#)
        );
        let signed = parts[0].len() + 1 + parts[1].len();
        assert_eq!(parts[2], base64url(&signed.to_be_bytes()));
        assert_eq!(client_assertion(&Broken, "c", "a", 0, "j"), Err(SignError("no key".into())));
    }
}
