//! `toolshelf logout` asks the authorization server to revoke the tokens it is about to delete
//! (RFC 7009), where the server's metadata names a `revocation_endpoint`: deleting the file
//! alone leaves a refresh token valid at the server for as long as it lives. The refresh token
//! goes first (revoking it revokes the tokens issued from it at most servers), then the access
//! token. Tokens are never logged or printed.

use serde_json::Value;

use super::store::Saved;

/// What the authorization server did with the tokens.
pub(super) enum Revoked {
    /// It names no revocation endpoint: the tokens stay valid there until they expire.
    NotOffered,
    /// There were no tokens to revoke.
    NoTokens,
    Done,
    /// The request failed (why, without any token).
    Failed(String),
}

pub(super) async fn revoke(saved: &Saved) -> Revoked {
    let Some(endpoint) = saved
        .metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(serde_json::Value::as_str)
    else {
        return Revoked::NotOffered;
    };
    // As the token endpoint wrote them (oauth2's typed accessors are a trait of a crate
    // toolshelf does not depend on).
    let tokens = saved
        .credentials
        .as_ref()
        .and_then(|credentials| credentials.token_response.as_ref())
        .and_then(|tokens| serde_json::to_value(tokens).ok())
        .unwrap_or_default();
    let secret = |key: &str| tokens.get(key).and_then(Value::as_str).map(str::to_owned);
    let revoked: Vec<(String, &str)> = [
        ("refresh_token", "refresh_token"),
        ("access_token", "access_token"),
    ]
    .into_iter()
    .filter_map(|(key, hint)| Some((secret(key)?, hint)))
    .collect();
    if revoked.is_empty() {
        return Revoked::NoTokens;
    }
    let client = match crate::http_client::shared() {
        Ok(client) => client,
        Err(error) => return Revoked::Failed(error),
    };
    for (token, hint) in revoked {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("token", &token)
            .append_pair("token_type_hint", hint);
        // A public client names itself; a confidential one authenticates (RFC 7009 2.1).
        let request = match &saved.client_secret {
            Some(secret) => client
                .post(endpoint)
                .basic_auth(&saved.client_id, Some(secret)),
            None => {
                form.append_pair("client_id", &saved.client_id);
                client.post(endpoint)
            }
        };
        let sent = request
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.finish())
            .send()
            .await;
        match sent {
            Ok(response) if response.status().is_success() => {}
            Ok(response) => {
                return Revoked::Failed(format!(
                    "the authorization server answered {} to the revocation of the {}",
                    response.status(),
                    hint.replace('_', " ")
                ));
            }
            Err(error) => {
                return Revoked::Failed(format!(
                    "the revocation request to {endpoint} failed ({})",
                    error.without_url()
                ));
            }
        }
    }
    Revoked::Done
}
