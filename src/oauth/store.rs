//! Where an OAuth login is kept: one file per server (by URL and client) in the user's data
//! folder, owner-only, written whole and atomically. It holds what a refresh needs without any
//! discovery: the authorization server's metadata, the client, and the tokens.

use crate::locks;
use std::{
    fs,
    io::Read,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime},
};

use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{OAuthSettings, RemoteServer};

/// One server's login, as written to its file.
#[derive(Serialize, Deserialize)]
pub(crate) struct Saved {
    /// `TOOLBOX/SERVER` and where the server is, for a person reading the folder.
    pub server: String,
    pub url: String,
    pub metadata: AuthorizationMetadata,
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    pub redirect_uri: String,
    #[serde(default)]
    pub credentials: Option<StoredCredentials>,
    /// Scopes the server asked for beyond the login's (a 403 `insufficient_scope`), which the
    /// next login asks for too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wanted_scopes: Vec<String>,
}

/// The login file of one server, written through on every change and read again when another
/// process (a new `toolshelf login`) has replaced it; rmcp's authorization manager reads and
/// saves the tokens through it.
#[derive(Clone)]
pub(crate) struct FileStore {
    path: Arc<PathBuf>,
    state: Arc<Mutex<State>>,
    /// Held through a refresh, with the lock file that other processes using the same login
    /// (two MCP clients each running toolshelf) hold: renewals happen one after the other,
    /// each with the refresh token the last one saved (a server may accept each only once).
    refreshing: Arc<tokio::sync::Mutex<()>>,
}

struct State {
    saved: Saved,
    /// When the file was last read or written by this process.
    modified: Option<SystemTime>,
    /// Counts the logins read from the file: a new one may have a new client.
    generation: u64,
}

impl FileStore {
    pub(crate) fn new(path: PathBuf, saved: Saved) -> FileStore {
        FileStore {
            path: Arc::new(path),
            state: Arc::new(Mutex::new(State {
                saved,
                modified: None,
                generation: 0,
            })),
            refreshing: Arc::default(),
        }
    }

    /// The saved login at `path`; `None` when there is none (or it has no tokens).
    pub(crate) fn open(path: PathBuf) -> Result<Option<FileStore>, String> {
        let Some((saved, modified)) = read(&path)? else {
            return Ok(None);
        };
        if saved.credentials.is_none() {
            return Ok(None);
        }
        let store = FileStore::new(path, saved);
        store.lock().modified = modified;
        Ok(Some(store))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the saved login under the lock, first from the file again if it has changed.
    pub(crate) fn with<T>(&self, read: impl FnOnce(&Saved, u64) -> T) -> T {
        let mut state = self.lock();
        self.reload(&mut state);
        read(&state.saved, state.generation)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        locks::lock(&self.state)
    }

    /// Takes a login another process wrote since this one last read or wrote the file.
    fn reload(&self, state: &mut State) {
        let modified = fs::metadata(&*self.path)
            .and_then(|meta| meta.modified())
            .ok();
        if modified.is_none() || modified == state.modified {
            return;
        }
        match read(&self.path) {
            Ok(Some((saved, modified))) => {
                state.saved = saved;
                state.modified = modified;
                state.generation += 1;
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "the login file changed and cannot be read"),
        }
    }

    /// Remembers scopes the server asked for, for the next login.
    pub(crate) fn want(&self, scopes: &str) {
        let added = self.update(|saved| {
            for scope in scopes.split_whitespace() {
                if !saved.wanted_scopes.iter().any(|known| known == scope) {
                    saved.wanted_scopes.push(scope.to_owned());
                }
            }
        });
        if let Err(error) = added {
            tracing::warn!(%error, "cannot note the scopes the server asked for");
        }
    }

    fn update(&self, change: impl FnOnce(&mut Saved)) -> Result<(), AuthError> {
        let mut state = self.lock();
        self.reload(&mut state);
        change(&mut state.saved);
        let text = serde_json::to_vec_pretty(&state.saved)
            .map_err(|error| AuthError::CredentialStoreError(error.to_string()))?;
        state.modified = crate::private_file::write(&self.path, &text)
            .map_err(AuthError::CredentialStoreError)?;
        Ok(())
    }
}

/// How long a refresh waits for another process's.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// The lock file at `path`, locked; the lock ends when the file is dropped. Polled: the one
/// runtime thread must not block on another process.
async fn lock_file(path: &Path) -> Result<fs::File, String> {
    let mut options = fs::OpenOptions::new();
    let file = crate::private_file::owner_only(options.write(true).create(true).truncate(false))
        .open(path)
        .map_err(|error| format!("cannot open {}: {error}", path.display()))?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(format!(
                    "another process has held {} for {} s while renewing the same login",
                    path.display(),
                    LOCK_WAIT.as_secs()
                ));
            }
            Err(fs::TryLockError::Error(error)) => {
                return Err(format!("cannot lock {}: {error}", path.display()));
            }
        }
    }
}

/// The login in the file at `path`, if there is one.
pub(crate) fn saved(path: &Path) -> Result<Option<Saved>, String> {
    Ok(read(path)?.map(|(saved, _)| saved))
}

/// The login in the file at `path` and when the file was written; `None` if there is none.
fn read(path: &Path) -> Result<Option<(Saved, Option<SystemTime>)>, String> {
    let mut file = match fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    // The time of the file read, not of one that replaced it since.
    let modified = file.metadata().and_then(|meta| meta.modified()).ok();
    let mut text = Vec::new();
    file.read_to_end(&mut text)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let saved = serde_json::from_slice(&text).map_err(|error| {
        format!(
            "{} is not a login toolshelf wrote ({error}); log in again",
            path.display()
        )
    })?;
    Ok(Some((saved, modified)))
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.with(|saved, _| saved.credentials.clone()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.update(|saved| saved.credentials = Some(credentials))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|saved| saved.credentials = None)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let in_process = self.refreshing.clone().lock_owned().await;
        let between_processes = lock_file(&lock_path(&self.path))
            .await
            .map_err(AuthError::CredentialStoreError)?;
        Ok(Some(CredentialRefreshGuard::new((
            in_process,
            between_processes,
        ))))
    }
}

/// The lock file beside the login file at `path`.
fn lock_path(path: &Path) -> PathBuf {
    path.with_extension("lock")
}

/// Removes the login at `path` and its lock file; false when there was no login.
pub(crate) fn remove(path: &Path) -> Result<bool, String> {
    let _ = fs::remove_file(lock_path(path));
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(format!(
            "cannot remove {}: {error}; remove it by hand",
            path.display()
        )),
    }
}

/// The scopes an earlier login at `path` was granted and those the server asked for since.
pub(crate) fn earlier_scopes(path: &Path) -> Vec<String> {
    let Ok(Some((saved, _))) = read(path) else {
        return Vec::new();
    };
    let granted = saved
        .credentials
        .map(|credentials| credentials.granted_scopes)
        .unwrap_or_default();
    granted.into_iter().chain(saved.wanted_scopes).collect()
}

/// The folder of login files: `oauth` in toolshelf's folder of the user's data folder
/// (`$XDG_DATA_HOME/toolshelf/oauth` on Linux).
pub(crate) fn folder() -> Result<PathBuf, String> {
    let data = dirs::data_dir().ok_or(
        "cannot find the user's data folder (set HOME, or XDG_DATA_HOME) to keep OAuth logins in",
    )?;
    Ok(data.join("toolshelf").join("oauth"))
}

/// The login file of a server: named by a hash of its URL and client, so one login serves every
/// toolbox that names the same server, and a changed URL or client needs a new one.
pub(crate) fn file_of(server: &RemoteServer, settings: &OAuthSettings) -> Result<PathBuf, String> {
    let mut hash = Sha256::new();
    hash.update(server.url.as_str().as_bytes());
    hash.update(b"\n");
    hash.update(settings.client_id.as_deref().unwrap_or_default().as_bytes());
    let digest = hash.finalize();
    let name: String = digest[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Ok(folder()?.join(format!("{name}.json")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refresh_waits_for_another_holder_of_the_login_s_lock() {
        let folder = tempfile::tempdir().expect("temp dir");
        let path = folder.path().join("login.lock");
        // A second open of the file stands for another process: the lock is per open file.
        let held = lock_file(&path).await.expect("locked");
        let waiting = tokio::spawn({
            let path = path.clone();
            async move { lock_file(&path).await.map(|_| Instant::now()) }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiting.is_finished(), "the lock was taken twice");
        let released = Instant::now();
        drop(held);
        let taken = waiting.await.expect("task").expect("locked after release");
        assert!(taken >= released);
    }
}
