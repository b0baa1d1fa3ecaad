//! OAuth for remote servers with `"auth": "oauth"`: `toolshelf login` runs the
//! authorization-code flow with PKCE once (`login`, with the redirect received by `callback`)
//! and keeps the tokens (`store`); a `Grant` then gives the bridge a bearer token for every
//! request, refreshed by itself. The flow's protocol (discovery from the server's protected
//! resource metadata, registration, resource indicators) is rmcp's.

mod callback;
mod login;
mod revoke;
mod store;

use crate::locks;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, OAuthClientConfig, WWWAuthenticateParams,
};
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{Mutex, RwLock};

pub use login::{LoginError, login, logout};
use store::FileStore;

use crate::config::{OAuthSettings, RemoteServer};

/// A server's saved login in use: bearer tokens for its requests.
pub(crate) struct Grant {
    /// Written only when a new login (another process) brought a new client.
    manager: RwLock<AuthorizationManager>,
    /// The login generation of the store the manager's client comes from.
    configured: AtomicU64,
    /// Held while a refused token is renewed, so concurrent refusals renew it once.
    renewing: Mutex<()>,
    /// The last token handed out, kept out of every message.
    last_token: std::sync::Mutex<String>,
    /// Scopes the server said a request needs beyond the login's.
    wanted: std::sync::Mutex<Option<String>>,
    store: FileStore,
    login_command: String,
}

/// The saved login of a server, read before anything connects: a server nobody has logged in
/// to fails at once with what the user must do.
pub(crate) struct SavedLogin {
    store: FileStore,
    login_command: String,
}

impl SavedLogin {
    pub(crate) fn read(
        server: &RemoteServer,
        settings: &OAuthSettings,
    ) -> Result<SavedLogin, String> {
        let login_command = settings.command("login");
        let missing = || {
            format!(
                "this server needs an OAuth login, and nobody has logged in yet: ask the user to run `{login_command}` in a terminal, then call again"
            )
        };
        let path = store::file_of(server, settings)?;
        match FileStore::open(path) {
            Ok(Some(store)) => Ok(SavedLogin {
                store,
                login_command,
            }),
            Ok(None) => Err(missing()),
            Err(error) => Err(format!(
                "{error}: ask the user to run `{login_command}` in a terminal, then call again"
            )),
        }
    }
}

impl Grant {
    pub(crate) async fn new(url: reqwest::Url, saved: SavedLogin) -> Result<Grant, String> {
        crate::http_client::use_ring();
        let SavedLogin {
            store,
            login_command,
        } = saved;
        let broken = |error: AuthError| {
            format!(
                "the saved OAuth login in {} cannot be used ({error}); ask the user to run `{login_command}` again",
                store.path().display()
            )
        };
        let mut manager = AuthorizationManager::new(url).await.map_err(broken)?;
        let generation = configure(&mut manager, &store).map_err(broken)?;
        manager.set_credential_store(store.clone());
        Ok(Grant {
            manager: RwLock::new(manager),
            configured: AtomicU64::new(generation),
            renewing: Mutex::new(()),
            last_token: std::sync::Mutex::default(),
            wanted: std::sync::Mutex::default(),
            store,
            login_command,
        })
    }

    /// The access token, renewed first when it is about to expire.
    pub(crate) async fn token(&self) -> Result<String, String> {
        let generation = self.store.with(|_, generation| generation);
        if generation != self.configured.load(Ordering::Relaxed) {
            // The user logged in again while toolshelf ran: the new login may have a new client.
            let mut manager = self.manager.write().await;
            let generation =
                configure(&mut manager, &self.store).map_err(|error| self.expired(error))?;
            self.configured.store(generation, Ordering::Relaxed);
        }
        let token = self
            .manager
            .read()
            .await
            .get_access_token()
            .await
            .map_err(|error| self.expired(error))?;
        let mut last = locks::lock(&self.last_token);
        if *last != token {
            last.clone_from(&token);
        }
        Ok(token)
    }

    /// `text` without the access token.
    pub(crate) fn redact(&self, text: &str) -> String {
        let last = locks::lock(&self.last_token);
        if last.len() < 4 {
            return text.to_owned();
        }
        text.replace(last.as_str(), "[redacted]")
    }

    /// The server refused `refused`: renews the token unless another request already has.
    /// True when there is a new token to try.
    pub(crate) async fn renew(&self, refused: &str) -> bool {
        let _one_at_a_time = self.renewing.lock().await;
        if self.token().await.is_ok_and(|current| current != refused) {
            return true;
        }
        match self.manager.read().await.refresh_token().await {
            Ok(_) => true,
            Err(error) => {
                tracing::warn!(%error, "the OAuth token was refused and cannot be renewed");
                false
            }
        }
    }

    /// Reads a refusal's `WWW-Authenticate` challenge: scopes the request needs beyond the
    /// login's are saved for the next login (step-up authorization), and named in `advice`.
    pub(crate) fn refused(&self, response: &reqwest::Response) {
        let Some(challenge) = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
        else {
            return;
        };
        let params = WWWAuthenticateParams::parse(challenge, response.url());
        if let (true, Some(scope)) = (params.is_insufficient_scope(), params.scope) {
            self.store.want(&scope);
            *locks::lock(&self.wanted) = Some(scope);
        }
    }

    /// What to tell the agent when the server refuses the login.
    pub(crate) fn advice(&self) -> String {
        let wanted = locks::lock(&self.wanted);
        match &*wanted {
            Some(scope) => format!(
                "; the request needs the scopes `{scope}`, more than the user's login grants: ask the user to run `{}` again (it asks for them)",
                self.login_command
            ),
            None => format!(
                "; the OAuth login was refused: ask the user to run `{}` again",
                self.login_command
            ),
        }
    }

    fn expired(&self, error: AuthError) -> String {
        let why = match error {
            AuthError::AuthorizationRequired => "it has expired and cannot be renewed".to_owned(),
            other => format!("renewing it failed: {other}"),
        };
        format!(
            "the OAuth login for this server is no longer valid ({why}): ask the user to run `{}`, then call again",
            self.login_command
        )
    }
}

/// Gives `manager` the authorization server and client of the login in `store`; the login's
/// generation.
fn configure(manager: &mut AuthorizationManager, store: &FileStore) -> Result<u64, AuthError> {
    let (metadata, client, generation) = store.with(|saved, generation| {
        let mut client =
            OAuthClientConfig::new(saved.client_id.clone(), saved.redirect_uri.clone());
        if let Some(secret) = &saved.client_secret {
            client = client.with_client_secret(secret.clone());
        }
        (saved.metadata.clone(), client, generation)
    });
    manager.set_metadata(metadata);
    manager.configure_client(client)?;
    Ok(generation)
}
