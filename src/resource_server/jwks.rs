//! One trusted issuer's keys: where its JWKS is (its authorization server metadata, RFC 8414,
//! or its OpenID configuration), the keys last fetched, and when to fetch them again: at
//! start, once they are older than `MAX_AGE`, and when a token names a key they lack (a
//! rotation), at most once per `REFETCH_GAP` so that tokens naming made-up keys cannot make
//! toolshelf hammer the issuer.

use std::{
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use serde_json::Value;

use super::keys::PublicKey;
use crate::locks;

/// Keys older than this are fetched again before use (a key the issuer withdrew stops
/// verifying within this time).
const MAX_AGE: Duration = Duration::from_secs(15 * 60);
/// The least time between two fetches for a key the last one lacked.
const REFETCH_GAP: Duration = Duration::from_secs(1);
/// How long one request to the issuer may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) struct IssuerKeys {
    pub(super) issuer: String,
    keys: RwLock<Fetched>,
    /// Held while fetching: one fetch at a time, and those waiting use its keys.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Fetched {
    keys: Arc<Vec<PublicKey>>,
    jwks_uri: Option<String>,
    /// When the last fetch ended, whether it got keys or not.
    at: Option<Instant>,
    /// When the keys were got.
    got: Option<Instant>,
}

impl IssuerKeys {
    pub(super) fn new(issuer: String) -> IssuerKeys {
        IssuerKeys {
            issuer,
            keys: RwLock::new(Fetched::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The key that checks a token whose header names `kid` and `alg`: from the keys held,
    /// else from the issuer's JWKS fetched anew. `Err` when the issuer cannot be reached and
    /// no key is held.
    pub(super) async fn find(
        &self,
        kid: Option<&str>,
        alg: &str,
    ) -> Result<Option<Arc<Vec<PublicKey>>>, String> {
        let held = self.held();
        let fresh = held.got.is_some_and(|got| got.elapsed() < MAX_AGE);
        if fresh && held.keys.iter().any(|key| key.fits(kid, alg)) {
            return Ok(Some(held.keys));
        }
        let _one = self.fetching.lock().await;
        let held = self.held();
        let fresh = held.got.is_some_and(|got| got.elapsed() < MAX_AGE);
        let found = held.keys.iter().any(|key| key.fits(kid, alg));
        let recently = held.at.is_some_and(|at| at.elapsed() < REFETCH_GAP);
        if fresh && found {
            return Ok(Some(held.keys));
        }
        // A fetch just ended: its keys are all there is, and if it failed, the issuer is not
        // asked again at once (a request each would wait out its timeout in turn).
        if recently {
            return match held.got {
                Some(_) => Ok(found.then_some(held.keys)),
                None => Err("the last fetch of the issuer's keys failed just now".to_owned()),
            };
        }
        match self.fetch().await {
            Ok(keys) => {
                let found = keys.iter().any(|key| key.fits(kid, alg));
                Ok(found.then_some(keys))
            }
            // Keys that are merely old still verify while the issuer is away.
            Err(_) if found => Ok(Some(held.keys)),
            Err(problem) => Err(problem),
        }
    }

    /// Fetches the keys now (at start, to find a wrong issuer before the first agent does).
    pub(super) async fn fetch(&self) -> Result<Arc<Vec<PublicKey>>, String> {
        let jwks_uri = match self.held().jwks_uri {
            Some(uri) => Ok(uri),
            None => self.discover().await,
        };
        let fetched = match jwks_uri {
            Ok(uri) => get_json(&uri)
                .await
                .map(|jwks| (uri, Arc::new(PublicKey::set_of(&jwks)))),
            Err(problem) => Err(problem),
        };
        let mut held = locks::write(&self.keys);
        held.at = Some(Instant::now());
        match fetched {
            Ok((uri, keys)) => {
                tracing::debug!(issuer = %self.issuer, keys = keys.len(), "fetched the issuer's keys");
                held.keys = keys.clone();
                held.jwks_uri = Some(uri);
                held.got = held.at;
                Ok(keys)
            }
            Err(problem) => {
                tracing::warn!(issuer = %self.issuer, %problem, "cannot fetch the issuer's keys");
                Err(problem)
            }
        }
    }

    fn held(&self) -> Fetched {
        let held = locks::read(&self.keys);
        Fetched {
            keys: held.keys.clone(),
            jwks_uri: held.jwks_uri.clone(),
            at: held.at,
            got: held.got,
        }
    }

    /// The issuer's `jwks_uri`, from its metadata (RFC 8414's place first, then OpenID
    /// Connect's), which must name the same issuer.
    async fn discover(&self) -> Result<String, String> {
        let issuer = self.issuer.trim_end_matches('/');
        let (origin, path) = match issuer.find("://").map(|at| at + 3) {
            Some(start) => match issuer[start..].find('/') {
                Some(slash) => issuer.split_at(start + slash),
                None => (issuer, ""),
            },
            None => (issuer, ""),
        };
        let places = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut tried = Vec::new();
        for place in places {
            match get_json(&place).await {
                Ok(metadata) => {
                    let named = metadata.get("issuer").and_then(Value::as_str);
                    if named != Some(self.issuer.as_str()) {
                        return Err(format!(
                            "{place} names the issuer {named:?}, not {:?}: give --oauth-issuer exactly as the authorization server names itself",
                            self.issuer
                        ));
                    }
                    return match metadata.get("jwks_uri").and_then(Value::as_str) {
                        Some(uri) => Ok(uri.to_owned()),
                        None => Err(format!(
                            "{place} names no jwks_uri, so toolshelf cannot check the issuer's tokens"
                        )),
                    };
                }
                Err(problem) => tried.push(problem),
            }
        }
        Err(format!(
            "found no authorization server metadata for {}: {}",
            self.issuer,
            tried.join("; ")
        ))
    }
}

async fn get_json(url: &str) -> Result<Value, String> {
    let client = crate::http_client::shared()?;
    let response = client
        .get(url)
        .header("accept", "application/json")
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|error| format!("GET {url}: {error}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("GET {url}: {status}"));
    }
    let body = response
        .bytes()
        .await
        .map_err(|error| format!("GET {url}: {error}"))?;
    serde_json::from_slice(&body).map_err(|error| format!("GET {url}: not JSON ({error})"))
}
