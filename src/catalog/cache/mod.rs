//! The persisted catalog: after a server has started and listed its tools, what it listed (with
//! its `serverInfo`, capabilities and protocol version, and when) is kept in a file of the
//! user's cache folder, so a later run opens its toolbox at once from the file. A file is named
//! by a hash of the server's launch spec (`launch_key`): a changed command, argument, variable
//! or URL misses by construction. Files are owner-only and replaced whole; one that does not
//! read is ignored with a warning and written again after the next start.
//!
//! A server may list other tools to a client that offers sampling, elicitation or roots
//! (server-everything adds tools for the first two), so a list is kept per set of capabilities
//! toolshelf offered the server (`Offer`, a suffix of the file's name). An agent is answered
//! from the list a server gave to the same kind of client, else from the list of the nearest
//! kind that offered less (`toolshelf check` offers nothing, so its list serves every client):
//! a server lists no fewer tools to a client that offers more, and a tool it lists only to a
//! client offering something the agent lacks would fail when called. A change is drift only
//! between two lists of one kind.

mod launch_key;

use std::{
    path::{Path, PathBuf},
    sync::{Arc, atomic::AtomicBool},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    catalog::ListedTool,
    config::{CatalogSettings, ServerSpec},
};

/// The version of the files' layout; a file of another version is not read.
const FORMAT: u32 = 1;

/// A catalog file neither read nor written for this long is removed: toolshelf cannot know
/// which configs still name its server, and a server in use is read or written far more often.
pub const STALE_AFTER: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// The folder of catalog files (`$XDG_CACHE_HOME/toolshelf/catalog` on Linux,
/// `~/Library/Caches/toolshelf/catalog` on macOS).
pub fn folder() -> Result<PathBuf, String> {
    let cache = dirs::cache_dir().ok_or(
        "cannot find the user's cache folder (set HOME, or XDG_CACHE_HOME) to keep the catalog in",
    )?;
    Ok(cache.join("toolshelf").join("catalog"))
}

/// Where this process keeps catalog files, if it keeps any.
#[derive(Debug)]
pub(crate) struct CatalogCache {
    folder: PathBuf,
}

impl CatalogCache {
    /// The cache `settings` ask for: none when it is turned off, or when there is no cache
    /// folder (said once).
    pub(crate) fn new(settings: &CatalogSettings) -> Option<Arc<CatalogCache>> {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if !settings.cache {
            return None;
        }
        match folder() {
            Ok(folder) => {
                static SWEPT: AtomicBool = AtomicBool::new(false);
                if !SWEPT.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    // Once per process, off the runtime's one thread.
                    let stale = folder.clone();
                    std::thread::spawn(move || sweep(&stale, SystemTime::now()));
                }
                Some(Arc::new(CatalogCache { folder }))
            }
            Err(error) => {
                if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    tracing::warn!(%error, "the catalog is not persisted: every open starts its servers");
                }
                None
            }
        }
    }

    /// The files of `spec`'s catalog.
    pub(crate) fn file(&self, spec: &ServerSpec) -> CacheFile {
        CacheFile {
            stem: self.folder.join(launch_key::of(spec)),
        }
    }
}

/// The client capabilities toolshelf offered a server when it listed its tools.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Offer {
    sampling: bool,
    elicitation: bool,
    roots: bool,
}

impl Offer {
    pub(crate) fn of(offered: &rmcp::model::ClientCapabilities) -> Self {
        Self {
            sampling: offered.sampling.is_some(),
            elicitation: offered.elicitation.is_some(),
            roots: offered.roots.is_some(),
        }
    }

    /// Every offer there is, the empty one first.
    pub(crate) fn every() -> impl Iterator<Item = Offer> {
        (0..8u8).map(|bits| Offer {
            sampling: bits & 1 != 0,
            elicitation: bits & 2 != 0,
            roots: bits & 4 != 0,
        })
    }

    /// The offers whose lists can answer an agent of this offer, nearest first: this offer,
    /// then those offering less, the more they offer in common the sooner, the empty one last.
    pub(crate) fn nearest_first(self) -> impl Iterator<Item = Offer> {
        let mut offers: Vec<Offer> = Offer::every().filter(|offer| offer.within(self)).collect();
        offers.sort_by_key(|offer| std::cmp::Reverse(offer.count()));
        offers.into_iter()
    }

    /// True when everything this offer offers, `other` offers too.
    fn within(self, other: Offer) -> bool {
        (!self.sampling || other.sampling)
            && (!self.elicitation || other.elicitation)
            && (!self.roots || other.roots)
    }

    fn count(self) -> usize {
        [self.sampling, self.elicitation, self.roots]
            .into_iter()
            .filter(|offered| *offered)
            .count()
    }

    /// The file name's part for this offer: none for no capability, else `-` and a letter each.
    fn suffix(self) -> String {
        let letters: String = [
            (self.elicitation, 'e'),
            (self.roots, 'r'),
            (self.sampling, 's'),
        ]
        .into_iter()
        .filter_map(|(offered, letter)| offered.then_some(letter))
        .collect();
        match letters.is_empty() {
            true => letters,
            false => format!("-{letters}"),
        }
    }
}

/// One server's catalog files, one per `Offer`.
#[derive(Debug)]
pub(crate) struct CacheFile {
    /// The folder and the launch key; the offer's suffix and `.json` follow.
    stem: PathBuf,
}

/// A server's tools as it last listed them, read back.
#[derive(Debug)]
pub(crate) struct Remembered {
    pub tools: Vec<ListedTool>,
    /// What toolshelf had offered the server when it gave this list.
    pub offer: Offer,
    /// What the server declared (prompts, resources, completions…), to know without starting
    /// it whether to ask it for those.
    pub capabilities: Option<rmcp::model::ServerCapabilities>,
    pub listed_at: SystemTime,
}

/// What the server said about itself at its start.
#[derive(Default)]
pub(crate) struct ListIdentity<'a> {
    pub server_info: Option<&'a rmcp::model::Implementation>,
    pub capabilities: Option<&'a rmcp::model::ServerCapabilities>,
    pub protocol_version: Option<&'a str>,
    /// What toolshelf offered the server.
    pub offer: Offer,
}

impl<'a> ListIdentity<'a> {
    /// From the server's answer to `initialize` (or `server/discover`), if the session has it,
    /// to toolshelf's `offer`.
    pub(crate) fn of(answer: Option<&'a rmcp::model::ServerPeerInfo>, offer: Offer) -> Self {
        match answer {
            Some(answer) => ListIdentity {
                server_info: answer.server_info.as_ref(),
                capabilities: Some(&answer.capabilities),
                protocol_version: Some(answer.protocol_version.as_str()),
                offer,
            },
            None => ListIdentity {
                offer,
                ..ListIdentity::default()
            },
        }
    }
}

/// A catalog file as written.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Written {
    format: u32,
    /// The config's name of the server that wrote it last, for a person reading the folder.
    server: String,
    #[serde(default)]
    server_info: Option<Value>,
    #[serde(default)]
    capabilities: Option<Value>,
    #[serde(default)]
    protocol_version: Option<String>,
    /// Seconds since the Unix epoch.
    listed_at: u64,
    tools: Vec<Box<serde_json::value::RawValue>>,
}

impl CacheFile {
    /// The remembered catalog; `None` when there is none. A file that does not read is
    /// reported (with the fix) and treated as absent.
    fn path(&self, offer: Offer) -> PathBuf {
        let mut name = self.stem.file_name().unwrap_or_default().to_owned();
        name.push(format!("{}.json", offer.suffix()));
        self.stem.with_file_name(name)
    }

    /// The list the server gave to a client offering `offer`, else the one it gave the nearest
    /// kind that offered less (`Offer::nearest_first`), if one was kept.
    pub(crate) fn read_nearest(&self, server: &str, offer: Offer) -> Option<Remembered> {
        offer
            .nearest_first()
            .find_map(|nearest| self.read(server, nearest))
    }

    /// The list the server gave when offered `offer`, if it was kept.
    pub(crate) fn read(&self, server: &str, offer: Offer) -> Option<Remembered> {
        let path = self.path(offer);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                unusable(server, &path, &error.to_string());
                return None;
            }
        };
        match decode(&text, offer) {
            Ok(remembered) => {
                // Read counts as use: the sweep keeps what is read.
                let touched = std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|file| file.set_modified(SystemTime::now()));
                if let Err(error) = touched {
                    tracing::debug!(%server, %error, "the catalog file's time was not updated");
                }
                Some(remembered)
            }
            Err(error) => {
                unusable(server, &path, &error);
                None
            }
        }
    }
}

fn unusable(server: &str, path: &Path, error: &str) {
    tracing::warn!(%server, file = %path.display(), %error, "the remembered catalog does not read; ignored (it is written again when the server starts; `toolshelf cache clear` removes every catalog file)");
}

impl CacheFile {
    /// Keeps `tools`, as `server` listed them now.
    pub(crate) fn write(&self, server: &str, identity: &ListIdentity<'_>, tools: &[ListedTool]) {
        let listed_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let tools = tools
            .iter()
            .filter_map(|tool| serde_json::value::to_raw_value(&tool.to_json()).ok())
            .collect();
        let written = Written {
            format: FORMAT,
            server: server.to_owned(),
            server_info: identity
                .server_info
                .and_then(|info| serde_json::to_value(info).ok()),
            capabilities: identity
                .capabilities
                .and_then(|capabilities| serde_json::to_value(capabilities).ok()),
            protocol_version: identity.protocol_version.map(str::to_owned),
            listed_at,
            tools,
        };
        let text = match serde_json::to_vec(&written) {
            Ok(text) => text,
            Err(error) => {
                tracing::warn!(%server, %error, "the catalog was not persisted");
                return;
            }
        };
        if let Err(error) = crate::private_file::write(&self.path(identity.offer), &text) {
            tracing::warn!(%server, %error, "the catalog was not persisted");
        }
    }
}

fn decode(text: &[u8], offer: Offer) -> Result<Remembered, String> {
    let written: Written = serde_json::from_slice(text).map_err(|error| error.to_string())?;
    if written.format != FORMAT {
        return Err(format!(
            "it has format {}, this toolshelf reads {FORMAT}",
            written.format
        ));
    }
    let tools = written
        .tools
        .iter()
        .map(|raw| ListedTool::read(raw))
        .collect::<Result<Vec<_>, _>>()?;
    let capabilities = written
        .capabilities
        .map(serde_json::from_value)
        .transpose()
        .map_err(|error| format!("its capabilities do not read: {error}"))?;
    Ok(Remembered {
        tools,
        offer,
        capabilities,
        listed_at: UNIX_EPOCH + Duration::from_secs(written.listed_at),
    })
}

/// Removes every file toolshelf wrote in the catalog folder (and the folder, once empty); how
/// many files went.
/// Removes the catalog files of `folder` last read or written `STALE_AFTER` before `now`; how
/// many it removed.
fn sweep(folder: &Path, now: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let stale = path
            .extension()
            .is_some_and(|extension| extension == "json")
            && entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| modified + STALE_AFTER < now);
        if stale && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        tracing::debug!(removed, folder = %folder.display(), "stale catalog files removed");
    }
    removed
}

pub fn clear() -> Result<(PathBuf, usize), String> {
    let folder = folder()?;
    let removed = clear_folder(&folder)?;
    Ok((folder, removed))
}

fn clear_folder(folder: &Path) -> Result<usize, String> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(format!("cannot read {}: {error}", folder.display())),
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        // Catalog files and the temporary files of a write cut short; nothing else is ours.
        let ours = path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.ends_with(".json") || name.ends_with(".tmp"));
        if !ours {
            continue;
        }
        std::fs::remove_file(&path)
            .map_err(|error| format!("cannot remove {}: {error}", path.display()))?;
        removed += 1;
    }
    // Left in place if it holds something else.
    let _ = std::fs::remove_dir(folder);
    Ok(removed)
}

#[cfg(test)]
mod tests;
