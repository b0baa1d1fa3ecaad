//! One JWT access token, checked: its header (an algorithm toolshelf accepts), its issuer (a
//! trusted one), its signature (by a key of that issuer's JWKS), its audience (this resource)
//! and its time. The refusals say what is wrong and what to do, never what the token holds.

use base64::Engine;
use serde_json::Value;

use super::{LEEWAY, OAuthOptions, Refusal, jwks::IssuerKeys, keys::ACCEPTED};

/// Who a checked token says the caller is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Verified {
    pub issuer: String,
    pub subject: String,
    pub groups: Vec<String>,
    pub scopes: Vec<String>,
    /// Its `exp`, in seconds since the epoch.
    pub expires_at: u64,
}

pub(super) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs())
        .unwrap_or_default()
}

fn invalid(reason: &str) -> Refusal {
    Refusal::Invalid(reason.to_owned())
}

fn decode(part: &str) -> Option<Value> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

pub(super) async fn check(
    token: &str,
    issuers: &[IssuerKeys],
    options: &OAuthOptions,
    now: u64,
) -> Result<Verified, Refusal> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid(
            "the bearer token is not a JWT access token (header.payload.signature): get one from the authorization server that /.well-known/oauth-protected-resource names",
        ));
    };
    let unreadable = "the bearer token is not a readable JWT (its header or claims are not base64url JSON objects): get a new token from the authorization server";
    let (Some(head), Some(claims)) = (decode(header), decode(payload)) else {
        return Err(invalid(unreadable));
    };
    let alg = head.get("alg").and_then(Value::as_str).unwrap_or_default();
    if alg.eq_ignore_ascii_case("none") || alg.is_empty() {
        return Err(invalid(
            "the token is not signed (alg none): toolshelf admits only tokens signed by its authorization server",
        ));
    }
    if !ACCEPTED.split(", ").any(|accepted| accepted == alg) && alg != "Ed25519" {
        return Err(Refusal::Invalid(format!(
            "the token is signed with {alg}, which toolshelf does not accept: it checks signatures with the authorization server's public keys only ({ACCEPTED})"
        )));
    }
    if head.get("crit").is_some() {
        return Err(invalid(
            "the token's header has critical extensions (crit) toolshelf does not understand",
        ));
    }
    let issuer = claims.get("iss").and_then(Value::as_str);
    let Some(keys) = issuers
        .iter()
        .find(|keys| Some(keys.issuer.as_str()) == issuer)
    else {
        return Err(invalid(
            "the token's issuer is not an authorization server toolshelf trusts: get a token from one that /.well-known/oauth-protected-resource names",
        ));
    };
    let kid = head.get("kid").and_then(Value::as_str);
    let held = keys
        .find(kid, alg)
        .await
        .map_err(|_| {
            Refusal::Unavailable(
                "toolshelf cannot fetch its authorization server's keys to check the token: try again shortly".to_owned(),
            )
        })?
        .ok_or_else(|| {
            invalid("the token is signed with a key its issuer does not publish (its kid is not in the issuer's JWKS): get a new token")
        })?;
    let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|_| invalid(unreadable))?;
    let message = &token.as_bytes()[..header.len() + 1 + payload.len()];
    let signed = held
        .iter()
        .filter(|key| key.fits(kid, alg))
        .any(|key| key.verifies(alg, message, &signature));
    if !signed {
        return Err(invalid(
            "the token's signature does not verify with its issuer's key: it was altered, or not issued there; get a new token",
        ));
    }
    let audience = match claims.get("aud") {
        Some(Value::String(one)) => one == &options.resource,
        Some(Value::Array(many)) => many
            .iter()
            .any(|one| one.as_str() == Some(&options.resource)),
        _ => false,
    };
    if !audience {
        return Err(Refusal::Invalid(format!(
            "the token is not for this resource (its aud does not name {}): ask the authorization server for a token with resource={}",
            options.resource, options.resource
        )));
    }
    let leeway = LEEWAY.as_secs();
    let Some(expires_at) = claims.get("exp").and_then(Value::as_u64) else {
        return Err(invalid(
            "the token has no expiry (exp): toolshelf admits only tokens that expire",
        ));
    };
    if expires_at + leeway < now {
        return Err(invalid("the token expired: get a new one"));
    }
    let not_before = claims.get("nbf").and_then(Value::as_u64);
    if not_before.is_some_and(|nbf| nbf > now + leeway) {
        return Err(invalid(
            "the token is not valid yet (nbf): check the clocks of the authorization server and of toolshelf",
        ));
    }
    let Some(subject) = claims.get("sub").and_then(Value::as_str) else {
        return Err(invalid(
            "the token names no subject (sub): toolshelf cannot tell who is calling",
        ));
    };
    Ok(Verified {
        issuer: keys.issuer.clone(),
        subject: subject.to_owned(),
        groups: strings(claims.get(&options.groups_claim)),
        scopes: scopes(&claims),
        expires_at,
    })
}

/// A claim's strings: an array's, or a lone string.
fn strings(claim: Option<&Value>) -> Vec<String> {
    match claim {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The token's scopes: `scope` (RFC 9068, space-separated) or `scp` (a list, or a string).
fn scopes(claims: &Value) -> Vec<String> {
    match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(spaced)) => spaced.split_whitespace().map(str::to_owned).collect(),
        other => strings(other),
    }
}
