//! Files only their owner may read (OAuth logins, the persisted catalog, the audit log); whole
//! files are written whole or not at all: a reader sees the old file or the new one, never half
//! of either. The one place that knows how each system keeps a file to its owner: mode 0600 (a
//! folder 0700) on Unix; on Windows a new file takes the access list of its folder, and the
//! folders toolshelf keeps such files in (`%LOCALAPPDATA%`, `%APPDATA%`) are the user's own.

use std::{
    fs,
    io::Write,
    path::Path,
    sync::atomic::{AtomicU64, Ordering},
    time::SystemTime,
};

/// Writes `text` to `path` (mode 0600, its folder created 0700), through a temporary file
/// renamed over it; the time it was written.
pub(crate) fn write(path: &Path, text: &[u8]) -> Result<Option<SystemTime>, String> {
    // Two writers of one path in this process (two sessions' starts of one server) must not
    // share a temporary file.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let folder = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    owner_only_folder(fs::DirBuilder::new().recursive(true))
        .create(folder)
        .map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
    let temporary = path.with_extension(format!(
        "json.{}-{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let written = owner_only(
        fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
    )
    .open(&temporary)
    .and_then(|mut file| {
        file.write_all(text)?;
        file.sync_all()?;
        Ok(file.metadata()?.modified().ok())
    })
    .and_then(|modified| fs::rename(&temporary, path).map(|()| modified));
    written.map_err(|error| {
        let _ = fs::remove_file(&temporary);
        format!("cannot write {}: {error}", path.display())
    })
}

/// `path` opened to append to (created 0600 if missing: the audit log).
pub(crate) fn append(path: &Path) -> std::io::Result<fs::File> {
    owner_only(fs::OpenOptions::new().append(true).create(true)).open(path)
}

/// `options` making a file only its owner may read (Unix: mode 0600).
pub(crate) fn owner_only(options: &mut fs::OpenOptions) -> &mut fs::OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options
}

/// `builder` making folders only their owner may enter (Unix: mode 0700).
fn owner_only_folder(builder: &mut fs::DirBuilder) -> &mut fs::DirBuilder {
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(builder, 0o700);
    builder
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_written_file_and_its_folder_are_the_owner_s_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("inner").join("a.json");
        write(&path, b"{}").expect("written");
        write(&path, b"{\"a\":1}").expect("rewritten");
        assert_eq!(fs::read(&path).expect("read"), b"{\"a\":1}");
        let mode = |path: &Path| fs::metadata(path).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().expect("folder")), 0o700);
        let left: Vec<_> = fs::read_dir(path.parent().expect("folder"))
            .expect("list")
            .collect();
        assert_eq!(left.len(), 1, "no temporary file is left");
    }
}
