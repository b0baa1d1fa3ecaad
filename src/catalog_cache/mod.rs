//! The persisted catalog: after a server has started and listed its tools, what it listed (with
//! its `serverInfo`, capabilities and protocol version, and when) is kept in a file of the
//! user's cache folder, so a later run opens its toolbox at once from the file. A file is named
//! by a hash of the server's launch spec (`launch_key`): a changed command, argument, variable
//! or URL misses by construction. Files are owner-only and replaced whole; one that does not
//! read is ignored with a warning and written again after the next start.

mod launch_key;

use std::{
    path::{Path, PathBuf},
    sync::{Arc, atomic::AtomicBool},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    children::ListedTool,
    config::{CatalogSettings, ServerSpec},
};

/// The version of the files' layout; a file of another version is not read.
const FORMAT: u32 = 1;

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
            Ok(folder) => Some(Arc::new(CatalogCache { folder })),
            Err(error) => {
                if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    tracing::warn!(%error, "the catalog is not persisted: every open starts its servers");
                }
                None
            }
        }
    }

    /// The file of `spec`'s catalog.
    pub(crate) fn file(&self, spec: &ServerSpec) -> CacheFile {
        CacheFile {
            path: self.folder.join(format!("{}.json", launch_key::of(spec))),
        }
    }
}

/// One server's catalog file.
#[derive(Debug)]
pub(crate) struct CacheFile {
    path: PathBuf,
}

/// A server's tools as it last listed them, read back.
#[derive(Debug)]
pub(crate) struct Remembered {
    pub tools: Vec<ListedTool>,
    /// What the server declared (prompts, resources, completions…), to know without starting
    /// it whether to ask it for those.
    pub capabilities: Option<rmcp::model::ServerCapabilities>,
    pub listed_at: SystemTime,
}

/// What the server said about itself at its start.
#[derive(Default)]
pub(crate) struct Identity<'a> {
    pub server_info: Option<&'a rmcp::model::Implementation>,
    pub capabilities: Option<&'a rmcp::model::ServerCapabilities>,
    pub protocol_version: Option<&'a str>,
}

impl<'a> Identity<'a> {
    /// From the server's answer to `initialize` (or `server/discover`), if the session has it.
    pub(crate) fn of(answer: Option<&'a rmcp::model::ServerPeerInfo>) -> Self {
        match answer {
            Some(answer) => Identity {
                server_info: answer.server_info.as_ref(),
                capabilities: Some(&answer.capabilities),
                protocol_version: Some(answer.protocol_version.as_str()),
            },
            None => Identity::default(),
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
    pub(crate) fn read(&self, server: &str) -> Option<Remembered> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                self.unusable(server, &error.to_string());
                return None;
            }
        };
        match decode(&text) {
            Ok(remembered) => Some(remembered),
            Err(error) => {
                self.unusable(server, &error);
                None
            }
        }
    }

    fn unusable(&self, server: &str, error: &str) {
        tracing::warn!(%server, file = %self.path.display(), %error, "the remembered catalog does not read; ignored (it is written again when the server starts; `toolshelf cache clear` removes every catalog file)");
    }

    /// Keeps `tools`, as `server` listed them now.
    pub(crate) fn write(&self, server: &str, identity: &Identity<'_>, tools: &[ListedTool]) {
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
        if let Err(error) = crate::private_file::write(&self.path, &text) {
            tracing::warn!(%server, %error, "the catalog was not persisted");
        }
    }
}

fn decode(text: &[u8]) -> Result<Remembered, String> {
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
        capabilities,
        listed_at: UNIX_EPOCH + Duration::from_secs(written.listed_at),
    })
}

/// Removes every file toolshelf wrote in the catalog folder (and the folder, once empty); how
/// many files went.
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
mod tests {
    use super::*;

    fn tool(name: &str) -> ListedTool {
        let raw = serde_json::value::to_raw_value(&serde_json::json!({
            "name": name,
            "description": "d",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
            "execution": {"taskSupport": "optional"}
        }))
        .expect("raw");
        ListedTool::read(&raw).expect("a tool")
    }

    #[test]
    fn a_written_catalog_reads_back_with_execution_and_capabilities() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = CacheFile {
            path: dir.path().join("k.json"),
        };
        let capabilities = rmcp::model::ServerCapabilities::builder()
            .enable_prompts()
            .build();
        let identity = Identity {
            server_info: None,
            capabilities: Some(&capabilities),
            protocol_version: Some("2025-11-25"),
        };
        file.write("fs", &identity, &[tool("a"), tool("b")]);
        let read = file.read("fs").expect("remembered");
        let names: Vec<&str> = read.tools.iter().map(|tool| &*tool.tool.name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            read.tools[0].execution.as_deref().map(|raw| raw.get()),
            Some(r#"{"taskSupport":"optional"}"#)
        );
        assert!(read.capabilities.expect("capabilities").prompts.is_some());
        assert!(read.listed_at.elapsed().expect("in the past") < Duration::from_secs(60));
    }

    #[test]
    fn a_file_that_does_not_read_is_absent_and_clear_removes_only_catalog_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let folder = dir.path().join("catalog");
        std::fs::create_dir(&folder).expect("folder");
        let file = CacheFile {
            path: folder.join("k.json"),
        };
        std::fs::write(&file.path, b"{\"format\": 1, \"tools\": [").expect("write");
        assert!(file.read("fs").is_none());
        std::fs::write(
            &file.path,
            br#"{"format": 9, "server": "fs", "listedAt": 0, "tools": []}"#,
        )
        .expect("write");
        assert!(file.read("fs").is_none(), "another format is not read");
        std::fs::write(folder.join("notes.txt"), b"mine").expect("write");
        assert_eq!(clear_folder(&folder).expect("cleared"), 1);
        assert!(folder.join("notes.txt").exists(), "not toolshelf's: kept");
        assert_eq!(clear_folder(&dir.path().join("none")).expect("nothing"), 0);
    }
}
