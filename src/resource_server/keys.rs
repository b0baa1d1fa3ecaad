//! An issuer's public keys, from its JWKS, and the signatures they check. Only asymmetric
//! algorithms are accepted: a key checks only the algorithms of its type (and only its own
//! `alg` where the JWK names one), so `none` and HS* (a public key taken for a shared secret)
//! never verify anything.

use base64::Engine;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::Value;

/// One public key of an issuer's JWKS.
#[derive(Debug)]
pub(super) struct PublicKey {
    kid: Option<String>,
    /// The JWK's own `alg`, where it names one: the only algorithm it checks.
    alg: Option<String>,
    material: Material,
}

#[derive(Debug)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed point (0x04 ‖ x ‖ y) on P-256 or P-384.
    Ec {
        curve: Curve,
        point: Vec<u8>,
    },
    Ed25519 {
        x: Vec<u8>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Curve {
    P256,
    P384,
}

/// The algorithms toolshelf checks, in the words tokens name them with.
pub(super) const ACCEPTED: &str = "RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA";

impl PublicKey {
    /// The usable signing keys of a JWKS document; keys of other types, curves or uses are
    /// skipped.
    pub(super) fn set_of(jwks: &Value) -> Vec<PublicKey> {
        let keys = jwks.get("keys").and_then(Value::as_array);
        keys.into_iter()
            .flatten()
            .filter(|jwk| {
                jwk.get("use")
                    .and_then(Value::as_str)
                    .is_none_or(|u| u == "sig")
            })
            .filter_map(PublicKey::of)
            .collect()
    }

    fn of(jwk: &Value) -> Option<PublicKey> {
        let field = |name: &str| {
            let text = jwk.get(name)?.as_str()?;
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(text.trim_end_matches('='))
                .ok()
        };
        let material = match jwk.get("kty")?.as_str()? {
            "RSA" => Material::Rsa {
                n: field("n")?,
                e: field("e")?,
            },
            "EC" => {
                let curve = match jwk.get("crv")?.as_str()? {
                    "P-256" => Curve::P256,
                    "P-384" => Curve::P384,
                    _ => return None,
                };
                let mut point = vec![4];
                point.extend(field("x")?);
                point.extend(field("y")?);
                Material::Ec { curve, point }
            }
            "OKP" if jwk.get("crv")?.as_str()? == "Ed25519" => Material::Ed25519 { x: field("x")? },
            _ => return None,
        };
        Some(PublicKey {
            kid: jwk.get("kid").and_then(Value::as_str).map(str::to_owned),
            alg: jwk.get("alg").and_then(Value::as_str).map(str::to_owned),
            material,
        })
    }

    /// True when this key is the one a token's header names: its `kid` (any key, where the
    /// header names none) and a key able to check `alg`.
    pub(super) fn fits(&self, kid: Option<&str>, alg: &str) -> bool {
        kid.is_none_or(|kid| self.kid.as_deref() == Some(kid)) && self.algorithm(alg).is_some()
    }

    /// True when `signature` is this key's, by `alg`, over `message`.
    pub(super) fn verifies(&self, alg: &str, message: &[u8], signature: &[u8]) -> bool {
        let Some(algorithm) = self.algorithm(alg) else {
            return false;
        };
        let checked = match (&self.material, algorithm) {
            (Material::Rsa { n, e }, Algorithm::Rsa(parameters)) => {
                RsaPublicKeyComponents { n, e }.verify(parameters, message, signature)
            }
            (Material::Ec { point, .. }, Algorithm::Other(algorithm))
            | (Material::Ed25519 { x: point }, Algorithm::Other(algorithm)) => {
                UnparsedPublicKey::new(algorithm, point).verify(message, signature)
            }
            _ => return false,
        };
        checked.is_ok()
    }

    /// How this key checks `alg`, if it may.
    fn algorithm(&self, alg: &str) -> Option<Algorithm> {
        if self.alg.as_deref().is_some_and(|own| own != alg) {
            return None;
        }
        let algorithm = match (&self.material, alg) {
            (Material::Rsa { .. }, "RS256") => {
                Algorithm::Rsa(&signature::RSA_PKCS1_2048_8192_SHA256)
            }
            (Material::Rsa { .. }, "RS384") => {
                Algorithm::Rsa(&signature::RSA_PKCS1_2048_8192_SHA384)
            }
            (Material::Rsa { .. }, "RS512") => {
                Algorithm::Rsa(&signature::RSA_PKCS1_2048_8192_SHA512)
            }
            (Material::Rsa { .. }, "PS256") => Algorithm::Rsa(&signature::RSA_PSS_2048_8192_SHA256),
            (Material::Rsa { .. }, "PS384") => Algorithm::Rsa(&signature::RSA_PSS_2048_8192_SHA384),
            (Material::Rsa { .. }, "PS512") => Algorithm::Rsa(&signature::RSA_PSS_2048_8192_SHA512),
            (
                Material::Ec {
                    curve: Curve::P256, ..
                },
                "ES256",
            ) => Algorithm::Other(&signature::ECDSA_P256_SHA256_FIXED),
            (
                Material::Ec {
                    curve: Curve::P384, ..
                },
                "ES384",
            ) => Algorithm::Other(&signature::ECDSA_P384_SHA384_FIXED),
            (Material::Ed25519 { .. }, "EdDSA" | "Ed25519") => {
                Algorithm::Other(&signature::ED25519)
            }
            _ => return None,
        };
        Some(algorithm)
    }
}

enum Algorithm {
    Rsa(&'static signature::RsaParameters),
    Other(&'static dyn signature::VerificationAlgorithm),
}

#[cfg(test)]
mod tests {
    use ring::{
        rand::SystemRandom,
        signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _},
    };
    use serde_json::json;

    use super::*;

    fn encode(bytes: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    #[test]
    fn ec_and_ed25519_keys_check_their_own_algorithm_and_no_other() {
        let random = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).expect("key");
        let ec =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .expect("key");
        let point = ec.public_key().as_ref();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&random).expect("key");
        let ed = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("key");
        let jwks = json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "ec", "x": encode(&point[1..33]), "y": encode(&point[33..])},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": encode(ed.public_key().as_ref())},
            {"kty": "oct", "kid": "secret", "k": encode(b"shared")},
            {"kty": "EC", "crv": "P-256", "kid": "enc", "use": "enc", "x": encode(&point[1..33]), "y": encode(&point[33..])}
        ]});
        let keys = PublicKey::set_of(&jwks);
        assert_eq!(
            keys.len(),
            2,
            "the symmetric key and the encryption key are skipped"
        );
        let message = b"header.payload";
        let signed = ec.sign(&random, message).expect("sign");
        let ec_key = keys
            .iter()
            .find(|key| key.fits(Some("ec"), "ES256"))
            .expect("fits");
        assert!(ec_key.verifies("ES256", message, signed.as_ref()));
        assert!(!ec_key.verifies("ES256", b"header.altered", signed.as_ref()));
        for alg in ["RS256", "HS256", "ES384", "none", "EdDSA"] {
            assert!(!ec_key.fits(Some("ec"), alg), "{alg}");
            assert!(!ec_key.verifies(alg, message, signed.as_ref()), "{alg}");
        }
        let ed_key = keys
            .iter()
            .find(|key| key.fits(Some("ed"), "EdDSA"))
            .expect("fits");
        assert!(ed_key.verifies("EdDSA", message, ed.sign(message).as_ref()));
        assert!(!ed_key.fits(Some("ec"), "EdDSA"), "another kid");
        assert!(
            ed_key.fits(None, "EdDSA"),
            "no kid: any key that can check alg"
        );
    }
}
