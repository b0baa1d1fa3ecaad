//! What a `consolidate` did, kept so that `consolidate --undo` gives every file back byte for
//! byte: each file's content before (or that it did not exist) and a hash of what the move
//! wrote, in `FILE.toolshelf-consolidated` beside the client's file (mode 0600: the files it
//! holds had secrets). An undo that would lose a change made since is refused.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{
    backup_of,
    planned::{Planned, secrets_of},
};
use crate::{
    clients::{Client, Scope},
    shell::CommandEnd,
};

/// The layout of the record; a record of another is not read.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct MoveRecord {
    format: u32,
    /// The client, for a person reading the file.
    client: String,
    files: Vec<RecordedFile>,
}

#[derive(Serialize, Deserialize)]
struct RecordedFile {
    path: PathBuf,
    /// Its content before the move; `None`: the move made it.
    before: Option<String>,
    /// SHA-256 of what the move wrote, to see a change made since.
    after: String,
    secret: bool,
}

/// The record of a move out of `client_file`.
fn record_of(client_file: &Path) -> PathBuf {
    let mut name = client_file.as_os_str().to_owned();
    name.push(".toolshelf-consolidated");
    PathBuf::from(name)
}

/// The record of an earlier move out of `client_file`, if there is one.
pub(super) fn recorded(client_file: &Path) -> Option<PathBuf> {
    Some(record_of(client_file)).filter(|record| record.exists())
}

/// The client's file: the one given, else where the client keeps it.
pub(super) fn client_file(
    client: Client,
    scope: Scope,
    file: Option<&Path>,
) -> Result<PathBuf, String> {
    match file {
        Some(file) => Ok(std::path::absolute(file).unwrap_or_else(|_| file.to_owned())),
        None => super::client_file(client, scope),
    }
}

/// The flags that name the same client file again, for the advice the commands print.
pub(super) fn client_flags(client: Client, scope: Scope, file: Option<&Path>) -> String {
    let name = clap::ValueEnum::to_possible_value(&client)
        .map(|value| value.get_name().to_owned())
        .unwrap_or_default();
    let mut flags = format!("--client {name}");
    if scope == Scope::Project {
        flags.push_str(" --scope project");
    }
    if let Some(file) = file {
        flags.push_str(&format!(" --file {}", file.display()));
    }
    flags
}

fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Writes every planned file (a backup beside each that existed, secrets owner-only), then the
/// record; if any write fails, the files written are given back and nothing is recorded.
pub(super) fn apply(files: &[Planned], client: Client, client_file: &Path) -> Result<(), String> {
    for (done, file) in files.iter().enumerate() {
        if let Err(error) = write_planned(file) {
            restore_all(&files[..done]);
            return Err(format!(
                "cannot write {}: {error}; every file is as it was",
                file.path.display()
            ));
        }
    }
    let record = MoveRecord {
        format: FORMAT,
        client: client.name().to_owned(),
        files: files
            .iter()
            .map(|file| RecordedFile {
                path: file.path.clone(),
                before: file.before.clone(),
                after: hash(&file.after),
                secret: file.secret,
            })
            .collect(),
    };
    let text = serde_json::to_vec_pretty(&record).map_err(|error| error.to_string())?;
    if let Err(error) = crate::private_file::write(&record_of(client_file), &text) {
        restore_all(files);
        return Err(format!("{error}; every file is as it was"));
    }
    Ok(())
}

fn write_planned(file: &Planned) -> Result<(), String> {
    if let Some(before) = &file.before {
        super::keep_backup(&file.path, before).map_err(|error| error.to_string())?;
    }
    match file.secret {
        true => crate::private_file::write(&file.path, file.after.as_bytes()).map(|_| ()),
        false => super::replace(&file.path, &file.after).map_err(|error| error.to_string()),
    }
}

/// Puts `files` back as they were before (best effort: used when a later write failed).
fn restore_all(files: &[Planned]) {
    for file in files {
        let _ = restore(&file.path, file.before.as_deref());
    }
}

/// Gives `path` the content `before` (none: removes it), and removes the backup of it that
/// holds just that.
fn restore(path: &Path, before: Option<&str>) -> std::io::Result<()> {
    match before {
        Some(before) => super::replace(path, before)?,
        None => match std::fs::remove_file(path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            _ => {}
        },
    }
    let backup = backup_of(path);
    if before
        .is_some_and(|before| std::fs::read_to_string(&backup).is_ok_and(|kept| kept == before))
    {
        std::fs::remove_file(backup)?;
    }
    Ok(())
}

/// `consolidate --undo`: every file the move out of `client_file` changed, as it was.
pub(super) fn undo(
    client_file: &Path,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<CommandEnd, String> {
    let path = record_of(client_file);
    let text = std::fs::read(&path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => format!(
            "no consolidate of {} is recorded (it would be in {}): nothing to undo",
            client_file.display(),
            path.display()
        ),
        _ => format!("cannot read {}: {error}", path.display()),
    })?;
    let record: MoveRecord = serde_json::from_slice(&text)
        .ok()
        .filter(|record: &MoveRecord| record.format == FORMAT)
        .ok_or_else(|| {
            format!(
                "{} does not read as a record of toolshelf consolidate; the backups beside each file (FILE.toolshelf-backup) hold them as they were",
                path.display()
            )
        })?;
    let mut changed = Vec::new();
    let mut now = Vec::new();
    for file in &record.files {
        let current = std::fs::read_to_string(&file.path).ok();
        // Given back already (an undo cut short before) counts as unchanged.
        let as_moved = current.as_deref().map(hash).as_deref() == Some(file.after.as_str());
        if !as_moved && current != file.before {
            changed.push(file.path.display().to_string());
        }
        now.push(current);
    }
    if !changed.is_empty() {
        return Err(format!(
            "changed since consolidate, so an undo would lose that change: {}; nothing was changed. Put those changes back by hand, or take the files from their backups (FILE.toolshelf-backup) and delete {}",
            changed.join(", "),
            path.display()
        ));
    }
    if dry_run {
        let planned: Vec<Planned> = record
            .files
            .iter()
            .zip(&now)
            .map(|(file, current)| Planned {
                path: file.path.clone(),
                before: current.clone(),
                after: file.before.clone().unwrap_or_default(),
                secret: file.secret,
            })
            .collect();
        let secrets = secrets_of(&planned);
        for file in &planned {
            write!(out, "{}", file.shown_diff(&secrets)).map_err(|error| error.to_string())?;
        }
        writeln!(out, "dry run: nothing changed").map_err(|error| error.to_string())?;
        return Ok(CommandEnd::Done);
    }
    // The client's file (written last) goes back first: toolshelf's entry leaves it before the
    // servers leave toolshelf's config.
    for file in record.files.iter().rev() {
        if let Err(error) = restore(&file.path, file.before.as_deref()) {
            let said = format!(
                "error: cannot write {}: {error}; the files restored before it are as they were, and {} is kept: make the file writable, then run the undo again",
                file.path.display(),
                path.display()
            );
            writeln!(out, "{said}").map_err(|error| error.to_string())?;
            return Ok(CommandEnd::Failed);
        }
    }
    if let Err(error) = std::fs::remove_file(&path) {
        let said = format!(
            "error: every file is given back, but {} cannot be removed ({error}): remove it by hand",
            path.display()
        );
        writeln!(out, "{said}").map_err(|error| error.to_string())?;
        return Ok(CommandEnd::Failed);
    }
    let listed: Vec<String> = record
        .files
        .iter()
        .map(|file| match file.before {
            Some(_) => format!("{} (as it was)", file.path.display()),
            None => format!("{} (removed: consolidate made it)", file.path.display()),
        })
        .collect();
    writeln!(
        out,
        "undid the consolidate: {}; their backups and the record are removed. Restart {} (or reload its MCP servers) for the change to apply.",
        listed.join(", "),
        record.client
    )
    .map_err(|error| error.to_string())?;
    Ok(CommandEnd::Done)
}
