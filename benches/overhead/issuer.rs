//! A stand-in OAuth issuer for the gateway rows: its metadata and its JWKS (one ES256 key, made
//! anew each run) served on loopback, and access tokens signed with that key. The checks the
//! rows measure are toolshelf's; the issuer only has to publish a key and sign. (The tests run
//! toolshelf against a real authorization server: tests/it/resource_server.rs.)

use std::{convert::Infallible, sync::Arc};

use base64::Engine;
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use ring::{
    rand::SystemRandom,
    signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _},
};
use serde_json::{Value, json};

pub struct Issuer {
    pub url: String,
    key: Arc<EcdsaKeyPair>,
    random: SystemRandom,
    _server: tokio::task::JoinHandle<()>,
}

fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl Issuer {
    pub async fn start() -> anyhow::Result<Issuer> {
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .map_err(|_| anyhow::anyhow!("cannot make a key"))?;
        let key =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .map_err(|_| anyhow::anyhow!("cannot read the key"))?;
        let point = key.public_key().as_ref().to_vec();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}).to_string();
        let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "bench", "alg": "ES256",
            "x": encode(&point[1..33]), "y": encode(&point[33..])}]})
        .to_string();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (metadata, jwks) = (metadata.clone(), jwks.clone());
                let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                    let body = match request.uri().path() {
                        "/jwks" => jwks.clone(),
                        _ => metadata.clone(),
                    };
                    async move {
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from(body))))
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        Ok(Issuer {
            url,
            key: Arc::new(key),
            random,
            _server: server,
        })
    }

    /// A token for `audience` with `claims` besides `iss`, `aud`, `exp` and `jti` (`serial`).
    pub fn token(&self, audience: &str, claims: &Value, serial: u64) -> anyhow::Result<String> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
        let mut claims = claims.clone();
        claims["iss"] = json!(self.url);
        claims["aud"] = json!(audience);
        claims["exp"] = json!(now.as_secs() + 3600);
        claims["jti"] = json!(serial.to_string());
        let header = json!({"alg": "ES256", "kid": "bench", "typ": "at+jwt"});
        let signed = format!(
            "{}.{}",
            encode(header.to_string().as_bytes()),
            encode(claims.to_string().as_bytes())
        );
        let signature = self
            .key
            .sign(&self.random, signed.as_bytes())
            .map_err(|_| anyhow::anyhow!("cannot sign"))?;
        Ok(format!("{signed}.{}", encode(signature.as_ref())))
    }
}
