//! An ES256 (ECDSA P-256 with SHA-256) [`JwtSigner`] for `private_key_jwt` client
//! authentication, from a PKCS#8 private key (PEM or DER), signing with `ring`.

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use talaria_core::auth::encoding::base64_decode;
use talaria_core::auth::jwt::JwtSigner;

/// Why a key could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Not a PEM `PRIVATE KEY` block.
    #[error("not a PEM-encoded PKCS#8 private key")]
    NotPem,
    /// Not a P-256 PKCS#8 key (with its public key, as `OpenSSL` and `WebCrypto` write them).
    #[error("not a P-256 PKCS#8 private key: {0}")]
    Rejected(String),
}

/// Signs client assertions with an ECDSA P-256 key.
///
/// # Examples
///
/// ```
/// use talaria::auth::Es256Signer;
///
/// assert!(Es256Signer::from_pem("not a key").is_err());
/// ```
pub struct Es256Signer {
    key: EcdsaKeyPair,
    random: SystemRandom,
}

impl std::fmt::Debug for Es256Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Es256Signer")
    }
}

impl Es256Signer {
    /// The key in a PEM `-----BEGIN PRIVATE KEY-----` block.
    ///
    /// # Errors
    ///
    /// [`KeyError`].
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        let body = pem
            .split("-----BEGIN PRIVATE KEY-----")
            .nth(1)
            .and_then(|rest| rest.split("-----END PRIVATE KEY-----").next())
            .ok_or(KeyError::NotPem)?;
        Self::from_pkcs8(&base64_decode(body).ok_or(KeyError::NotPem)?)
    }

    /// The key as PKCS#8 DER.
    ///
    /// # Errors
    ///
    /// [`KeyError::Rejected`].
    pub fn from_pkcs8(der: &[u8]) -> Result<Self, KeyError> {
        let random = SystemRandom::new();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &random)
            .map_err(|e| KeyError::Rejected(e.to_string()))?;
        Ok(Self { key, random })
    }
}

impl JwtSigner for Es256Signer {
    fn algorithm(&self) -> &str {
        "ES256"
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, String> {
        self.key.sign(&self.random, input).map(|s| s.as_ref().to_vec()).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use ring::signature::{KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};
    use talaria_core::auth::encoding::base64;

    use super::*;

    #[test]
    fn signs_what_the_public_key_verifies() {
        let random = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", base64(der.as_ref()));
        let signer = Es256Signer::from_pem(&pem).unwrap();
        let signature = signer.sign(b"header.claims").unwrap();
        assert_eq!(signature.len(), 64, "JWS wants r || s");
        let public = signer.key.public_key().as_ref().to_vec();
        assert!(UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public).verify(b"header.claims", &signature).is_ok());
        assert_eq!(
            Es256Signer::from_pem("-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----").unwrap_err(),
            KeyError::NotPem
        );
        assert!(matches!(Es256Signer::from_pkcs8(b"junk"), Err(KeyError::Rejected(_))));
    }
}
