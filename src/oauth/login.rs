//! `toolshelf login` and `logout`. A login asks the server once without a token to learn, from
//! its `WWW-Authenticate` challenge and protected resource metadata, which authorization server
//! to use; registers toolshelf there (or uses the configured client); prints the authorization
//! URL (and opens a browser where there is one); receives the redirect on loopback; trades the
//! code for tokens and saves them.

use std::{io::Write, time::Duration};

use reqwest::{
    Method, StatusCode,
    header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE},
};
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationMetadataSource, OAuthClientConfig,
};

use super::{
    callback::Callback,
    revoke::{self, Revoked},
    store::{self, FileStore, Saved},
};
use crate::config::{Config, Endpoint, OAuthSettings, RemoteServer, RemoteTransport};

/// How long the login waits for the user to authorize in the browser.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the first, unauthenticated request may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Why `login` or `logout` did not happen.
#[derive(Debug)]
pub enum LoginError {
    /// The command line or the config is wrong (exit 2).
    Usage(String),
    /// The login itself failed (exit 1).
    Failed(String),
}

/// Logs in to `target` (`TOOLBOX/SERVER`), telling the user what to do on `say` (stderr).
pub async fn login(
    config: &Config,
    target: &str,
    open_browser: bool,
    say: &mut dyn Write,
) -> Result<(), LoginError> {
    let (server, settings) = find(config, target)?;
    let failed = |what: &str, error: &dyn std::fmt::Display| {
        LoginError::Failed(format!("{target}: {what}: {error}"))
    };
    crate::http_client::use_ring();
    let callback = Callback::bind(settings.callback_port)
        .await
        .map_err(LoginError::Failed)?;
    let challenge = challenge(server).await;
    let mut manager = AuthorizationManager::new(server.url.clone())
        .await
        .map_err(|error| failed("cannot set up OAuth", &error))?;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|error| {
            failed(
                "cannot find the server's authorization server (is it an OAuth server?)",
                &error,
            )
        })?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        let _ = writeln!(
            say,
            "note: the server publishes no OAuth metadata; using the default endpoints of protocol 2025-03-26 ({}/authorize, /token, /register)",
            origin(&server.url)
        );
    }
    let metadata = resolution.metadata;
    manager.set_metadata(metadata.clone());
    let path = store::file_of(server, settings).map_err(LoginError::Failed)?;
    let mut scopes = if settings.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        settings.scopes.clone()
    };
    // A login again keeps what the last one was granted, and adds what the server asked for
    // since (step-up authorization).
    for scope in store::earlier_scopes(&path) {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    let client = choose_client(
        &mut manager,
        &metadata,
        settings,
        &callback.redirect_uri,
        &scopes,
    )
    .await
    .map_err(|(what, error)| failed(what, &error))?;
    manager.set_credential_store(FileStore::new(
        path.clone(),
        Saved {
            server: target.to_owned(),
            url: server.shown_url(),
            metadata,
            client_id: client.client_id.clone(),
            client_secret: client.client_secret.clone(),
            redirect_uri: callback.redirect_uri.clone(),
            credentials: None,
            wanted_scopes: Vec::new(),
        },
    ));
    let scope_names: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let authorize = manager
        .get_authorization_url(&scope_names)
        .await
        .map_err(|error| failed("cannot make the authorization URL", &error))?;
    let _ = writeln!(
        say,
        "To log in to {target} ({}), open this URL in a browser:\n\n{authorize}\n\nWaiting for the redirect to {} (up to {} minutes)…",
        server.shown_url(),
        callback.redirect_uri,
        LOGIN_TIMEOUT.as_secs() / 60
    );
    if open_browser {
        crate::children::open_in_browser(&authorize);
    }
    let redirect = tokio::time::timeout(LOGIN_TIMEOUT, callback.wait())
        .await
        .map_err(|_| {
            LoginError::Failed(format!(
                "{target}: no redirect came within {} minutes; run the command again and open the URL",
                LOGIN_TIMEOUT.as_secs() / 60
            ))
        })?
        .map_err(|error| LoginError::Failed(format!("{target}: {error}")))?;
    let callback = AuthorizationCallback::from_redirect_url(&redirect)
        .map_err(|error| failed("the redirect is not usable", &error))?;
    manager
        .exchange_code_for_token_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(|error| failed("the authorization server did not give tokens", &error))?;
    let logout = settings.command("logout");
    let _ = writeln!(
        say,
        "Logged in to {target}. The tokens are in {} (readable by you only) and are renewed by themselves; `{logout}` removes them.",
        path.display()
    );
    Ok(())
}

/// The client toolshelf logs in as, configured in `manager`: the one registered beforehand
/// (`oauth.clientId`), else the client ID metadata document (`oauth.clientMetadataUrl`) where the
/// authorization server supports those, else one registered now (dynamic registration). On
/// failure, what failed and why.
async fn choose_client(
    manager: &mut AuthorizationManager,
    metadata: &AuthorizationMetadata,
    settings: &OAuthSettings,
    redirect_uri: &str,
    scopes: &[String],
) -> Result<OAuthClientConfig, (&'static str, AuthError)> {
    let documents_supported = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let client_id = match (&settings.client_id, &settings.client_metadata_url) {
        (Some(client_id), _) => client_id.clone(),
        (None, Some(document)) if documents_supported => document.to_string(),
        _ => {
            let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
            return manager
                .register_client("toolshelf", redirect_uri, &scopes)
                .await
                .map_err(|error| {
                    (
                        "cannot register with the authorization server (set `oauth.clientId` to a client registered there beforehand)",
                        error,
                    )
                });
        }
    };
    let mut client = OAuthClientConfig::new(client_id, redirect_uri).with_scopes(scopes.to_vec());
    if let Some(secret) = &settings.client_secret {
        client = client.with_client_secret(secret.clone());
    }
    manager
        .configure_client(client.clone())
        .map_err(|error| ("cannot use the configured client", error))?;
    Ok(client)
}

/// Removes the saved login of `target`.
pub async fn logout(config: &Config, target: &str, say: &mut dyn Write) -> Result<(), LoginError> {
    let (server, settings) = find(config, target)?;
    let path = store::file_of(server, settings).map_err(LoginError::Failed)?;
    // Revoked first, so that a failure leaves the tokens where the user can try again; the
    // file goes in any case: logging out is what the user asked for.
    let revoked = match store::saved(&path) {
        Ok(Some(saved)) => Some(revoke::revoke(&saved).await),
        _ => None,
    };
    if store::remove(&path).map_err(LoginError::Failed)? {
        let at_server = match revoked {
            Some(Revoked::Done) => "revoked the tokens at the authorization server and ",
            Some(Revoked::NotOffered) => {
                "the authorization server offers no revocation (RFC 7009), so its tokens stay valid there until they expire; "
            }
            Some(Revoked::Failed(why)) => {
                let _ = writeln!(
                    say,
                    "warning: {why}; the tokens may stay valid at the server until they expire (revoke them there if you can)."
                );
                ""
            }
            Some(Revoked::NoTokens) | None => "",
        };
        let _ = writeln!(
            say,
            "Logged out of {target}: {at_server}removed {}.",
            path.display()
        );
    } else {
        let _ = writeln!(say, "{target} was not logged in; nothing to remove.");
    }
    Ok(())
}

/// The remote server `TOOLBOX/SERVER` of the config, with its OAuth settings.
fn find<'a>(
    config: &'a Config,
    target: &str,
) -> Result<(&'a RemoteServer, &'a OAuthSettings), LoginError> {
    let with_oauth: Vec<&str> = config
        .toolboxes
        .values()
        .flat_map(|toolbox| &toolbox.servers)
        .filter_map(|server| match &server.endpoint {
            Endpoint::Remote(RemoteServer {
                oauth: Some(settings),
                ..
            }) => Some(settings.target.as_str()),
            _ => None,
        })
        .collect();
    let known = if with_oauth.is_empty() {
        "no server of the config has `\"auth\": \"oauth\"`".to_owned()
    } else {
        format!("servers with OAuth: {}", with_oauth.join(", "))
    };
    let server = target
        .split_once('/')
        .and_then(|(toolbox, server)| config.toolboxes.get(toolbox)?.server(server));
    let Some(server) = server else {
        return Err(LoginError::Usage(format!(
            "no server `{target}` in the config (name it as TOOLBOX/SERVER); {known}"
        )));
    };
    match &server.endpoint {
        Endpoint::Remote(
            remote @ RemoteServer {
                oauth: Some(settings),
                ..
            },
        ) => Ok((remote, settings)),
        _ => Err(LoginError::Usage(format!(
            "`{target}` does not log in with OAuth; if its server asks for a login, add `\"auth\": \"oauth\"` to it in the config ({known})"
        ))),
    }
}

/// The server's `WWW-Authenticate` challenge to a request without a token, which names its
/// protected resource metadata and the scopes it wants; `None` if it sends none.
async fn challenge(server: &RemoteServer) -> Option<String> {
    let http = crate::http_client::shared().ok()?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "toolshelf", "version": env!("CARGO_PKG_VERSION")}},
    });
    let mut request = match server.transport {
        RemoteTransport::StreamableHttp => http
            .request(Method::POST, server.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(initialize.to_string()),
        RemoteTransport::Sse => http.request(Method::GET, server.url.clone()),
    }
    .header(ACCEPT, "application/json, text/event-stream")
    .timeout(PROBE_TIMEOUT);
    for (name, value) in &server.headers {
        request = request.header(name, value);
    }
    let response = request.send().await.ok()?;
    if response.status() != StatusCode::UNAUTHORIZED {
        return None;
    }
    let challenge = response.headers().get(WWW_AUTHENTICATE)?;
    challenge.to_str().ok().map(str::to_owned)
}

fn origin(url: &reqwest::Url) -> String {
    url.origin().ascii_serialization()
}
