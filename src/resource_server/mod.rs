//! toolshelf as an OAuth 2.1 resource server (`serve --http --oauth-issuer`), as the MCP
//! authorization spec asks: it names its authorization servers in its Protected Resource
//! Metadata (RFC 9728, `metadata`), and admits a request whose bearer token is a JWT access
//! token (RFC 9068) signed by one of their keys (`jwks`, `keys`), issued by one of them, for
//! this resource (`aud`, RFC 8707), within its time (`exp`, `nbf`, give or take `LEEWAY`),
//! with the scopes every request needs. What it proves is the caller's identity: its subject,
//! groups and scopes, which the config's access rules name.
//!
//! A token checked once is remembered (by its SHA-256) until it expires, so that each call of
//! a session does not verify a signature again.

mod claims;
mod jwks;
mod keys;
mod metadata;

use std::{sync::Arc, time::Duration};

use dashmap::DashMap;
use sha2::Digest;

pub use claims::Verified;
use jwks::IssuerKeys;

/// How far a token's `exp` and `nbf` may be off the clock.
const LEEWAY: Duration = Duration::from_secs(30);
/// At most this many checked tokens are remembered; past it, the memory starts anew.
const REMEMBERED: usize = 10_000;

/// The flags of `serve --http` that make toolshelf a resource server.
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    /// The trusted authorization servers, by issuer identifier.
    pub issuers: Vec<String>,
    /// This server's canonical URI: what tokens' `aud` must name.
    pub resource: String,
    /// The scopes every request's token needs.
    pub scopes: Vec<String>,
    /// The claim that lists a token's groups.
    pub groups_claim: String,
}

impl OAuthOptions {
    /// The options of `serve --http`'s flags, every problem at once.
    pub fn from_flags(
        issuers: Vec<String>,
        resource: Option<String>,
        scopes: Vec<String>,
        groups_claim: String,
        address: std::net::SocketAddr,
    ) -> Result<OAuthOptions, String> {
        let mut problems = Vec::new();
        for issuer in &issuers {
            if let Some(problem) = url_problem(issuer) {
                problems.push(format!("--oauth-issuer {issuer}: {problem}"));
            }
        }
        let resource = match resource {
            Some(resource) => {
                if let Some(problem) = url_problem(&resource) {
                    problems.push(format!("--oauth-resource {resource}: {problem}"));
                }
                resource
            }
            None if address.ip().is_loopback() => format!("http://{address}/mcp"),
            None => {
                problems.push(format!("--oauth-issuer on {address}, which is not a loopback address, needs --oauth-resource URL: the URL agents reach toolshelf's /mcp by, which their tokens' aud must name"));
                String::new()
            }
        };
        if groups_claim.trim().is_empty() {
            problems.push("--oauth-groups-claim is empty: name the claim that lists a token's groups (groups, roles, …)".to_owned());
        }
        match problems.is_empty() {
            true => Ok(OAuthOptions {
                issuers,
                resource,
                scopes,
                groups_claim,
            }),
            false => Err(problems.join("\n")),
        }
    }
}

/// What is wrong with `url` as an issuer or a resource: OAuth wants https, but for loopback.
fn url_problem(url: &str) -> Option<&'static str> {
    let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
        .iter()
        .any(|prefix| {
            url.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/']))
        });
    match (url.starts_with("https://"), loopback) {
        (true, _) | (_, true) => None,
        _ => Some("give an https:// URL (http:// only on a loopback address)"),
    }
}

/// Why a request's token is not admitted.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// 401 `invalid_token`.
    Invalid(String),
    /// 403 `insufficient_scope`: the scopes needed.
    Scope(String),
    /// 503: the issuer's keys cannot be fetched.
    Unavailable(String),
}

pub struct ResourceServer {
    options: OAuthOptions,
    issuers: Vec<IssuerKeys>,
    /// Tokens checked, by their SHA-256, with what they proved.
    checked: DashMap<[u8; 32], Arc<Verified>>,
}

impl ResourceServer {
    pub fn new(options: OAuthOptions) -> ResourceServer {
        let issuers = options
            .issuers
            .iter()
            .cloned()
            .map(IssuerKeys::new)
            .collect();
        ResourceServer {
            options,
            issuers,
            checked: DashMap::new(),
        }
    }

    /// Fetches every issuer's keys, and says which cannot be reached (serving goes on: their
    /// keys are fetched again at the first token).
    pub async fn warm_up(&self) {
        for issuer in &self.issuers {
            if let Err(problem) = issuer.fetch().await {
                tracing::warn!(issuer = %issuer.issuer, %problem, "toolshelf cannot check this issuer's tokens until its keys can be fetched");
            }
        }
    }

    /// Who `token` proves the caller is, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<Arc<Verified>, Refusal> {
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let now = claims::now();
        if let Some(known) = self.checked.get(&digest)
            && known.expires_at + LEEWAY.as_secs() >= now
        {
            return self.scoped(known.clone());
        }
        let verified = Arc::new(claims::check(token, &self.issuers, &self.options, now).await?);
        if self.checked.len() >= REMEMBERED {
            self.checked.clear();
        }
        self.checked.insert(digest, verified.clone());
        self.scoped(verified)
    }

    fn scoped(&self, verified: Arc<Verified>) -> Result<Arc<Verified>, Refusal> {
        let missing: Vec<&str> = self
            .options
            .scopes
            .iter()
            .filter(|scope| !verified.scopes.contains(scope))
            .map(String::as_str)
            .collect();
        match missing.is_empty() {
            true => Ok(verified),
            false => Err(Refusal::Scope(self.options.scopes.join(" "))),
        }
    }

    /// The Protected Resource Metadata document (RFC 9728).
    pub fn metadata(&self) -> String {
        metadata::document(&self.options)
    }

    /// Where the metadata is, as `WWW-Authenticate` names it.
    pub fn metadata_url(&self) -> String {
        metadata::url(&self.options.resource)
    }

    /// The paths the metadata is served at: RFC 9728's (the resource's path after the
    /// well-known name) and the bare one older clients ask for.
    pub fn metadata_paths(&self) -> [String; 2] {
        metadata::paths(&self.options.resource)
    }
}
