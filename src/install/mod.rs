//! `toolshelf install --client NAME` and `toolshelf uninstall --client NAME`: toolshelf's entry
//! in an MCP client's own config file, set or taken out in place. Everything else in the file
//! stays as it was, byte for byte; a second install changes nothing and says so; the file as it
//! was is kept beside it (`FILE.toolshelf-backup`) before each change, and removed by an
//! uninstall that gives the file back as it was; `--dry-run` prints the change as a diff and
//! writes nothing. `consolidate` moves a client's servers into toolshelf in one step.

mod consolidate;
mod edit;
mod launch;
mod moved;
mod planned;

pub use consolidate::{ConsolidateRequest, consolidate, undo_consolidate};

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use crate::{
    clients::{Client, Places, Scope},
    shell::CommandEnd,
};

/// The name of toolshelf's entry among the client's servers.
pub const ENTRY_NAME: &str = "toolshelf";

/// What `install` and `uninstall` were asked.
pub struct InstallRequest<'a> {
    pub client: Client,
    pub scope: Scope,
    /// The toolbox config the entry serves (install only).
    pub config: Option<PathBuf>,
    pub dry_run: bool,
    /// The client's config file, when not where the client keeps it.
    pub file: Option<&'a Path>,
    /// `KEY=VALUE` pairs for the entry's `env` (install only).
    pub env: &'a [String],
}

/// Whether a change puts toolshelf's entry in or takes it out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Install,
    Uninstall,
}

/// Sets toolshelf's entry in the client's config.
pub fn install(request: &InstallRequest<'_>, out: &mut dyn Write) -> std::io::Result<CommandEnd> {
    if request.file.is_none()
        && let Err(message) = client_file(request.client, request.scope)
    {
        writeln!(out, "error: {message}")?;
        return Ok(CommandEnd::Usage);
    }
    let (config, source) = crate::config::locate(request.config.clone());
    if let Err(error) = crate::config::load_from(&config, source) {
        writeln!(out, "error: {error}")?;
        return Ok(CommandEnd::Usage);
    }
    let env = match env_pairs(request.env) {
        Ok(env) => env,
        Err(message) => {
            writeln!(out, "error: {message}")?;
            return Ok(CommandEnd::Usage);
        }
    };
    let config = crate::children::process_tree::path_for_clients(&config).unwrap_or(config);
    let entry = toolshelf_entry(request.client, &config, &env);
    change(request, Kind::Install, out, |format, text, key, _file| {
        edit::set(format, text, key, ENTRY_NAME, &entry).map(Some)
    })
}

/// The entry that starts this toolshelf on `config`, as `client` writes a stdio server, with
/// `env` (none: no `env` key).
pub(crate) fn toolshelf_entry(
    client: Client,
    config: &Path,
    env: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let launch = launch::ClientLaunch::of_this_program();
    let (command, args) = launch.entry(config);
    let mut entry = client.stdio_entry(&command, &args);
    if !env.is_empty()
        && let Some(members) = entry.as_object_mut()
    {
        members.insert("env".into(), serde_json::Value::Object(env.clone()));
    }
    entry
}

/// `--env`'s `KEY=VALUE` pairs as the entry's `env`; Err names the one that is not a pair.
fn env_pairs(given: &[String]) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut env = serde_json::Map::new();
    for pair in given {
        let named = pair.split_once('=').filter(|(key, _)| {
            key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        let Some((key, value)) = named else {
            let key = pair.split_once('=').map_or(pair.as_str(), |(key, _)| key);
            return Err(format!(
                "--env {key}…: not KEY=VALUE with KEY of letters, digits and '_' (e.g. --env GITHUB_TOKEN=…); nothing was changed"
            ));
        };
        env.insert(key.to_owned(), value.into());
    }
    Ok(env)
}

/// Takes toolshelf's entry out of the client's config.
pub fn uninstall(request: &InstallRequest<'_>, out: &mut dyn Write) -> std::io::Result<CommandEnd> {
    change(request, Kind::Uninstall, out, |format, text, key, file| {
        // The file as it was before install, when only install's entry was added since: given
        // back as it was, whatever install's edit did to its layout.
        if let Ok(before) = std::fs::read_to_string(backup_of(file))
            && edit::entry(format, &before, key, ENTRY_NAME)?.is_none()
            && let Some(entry) = edit::entry(format, text, key, ENTRY_NAME)?
            && edit::set(format, &before, key, ENTRY_NAME, &entry)? == text
        {
            return Ok(Some(before));
        }
        edit::remove(format, text, key, ENTRY_NAME)
    })
}

/// Where the file as it was before the last change is kept.
pub(crate) fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".toolshelf-backup");
    PathBuf::from(name)
}

fn change(
    request: &InstallRequest<'_>,
    kind: Kind,
    out: &mut dyn Write,
    edit: impl Fn(crate::clients::Format, &str, &str, &Path) -> Result<Option<String>, String>,
) -> std::io::Result<CommandEnd> {
    let client = request.client;
    let file = match request.file {
        Some(file) => file.to_owned(),
        None => match client_file(client, request.scope) {
            Ok(file) => file,
            Err(message) => {
                writeln!(out, "error: {message}")?;
                return Ok(CommandEnd::Usage);
            }
        },
    };
    let before = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            writeln!(
                out,
                "error: cannot read {}: {error}. Check its permissions, or give another file with --file.",
                file.display()
            )?;
            return Ok(CommandEnd::Failed);
        }
    };
    let old = before.as_deref().unwrap_or("");
    let after = match edit(client.format(), old, client.servers_key(), &file) {
        Ok(Some(after)) => after,
        Ok(None) => {
            writeln!(
                out,
                "{} has no `{ENTRY_NAME}` entry ({}); nothing changed",
                file.display(),
                client.name()
            )?;
            return Ok(CommandEnd::Done);
        }
        Err(problem) => {
            writeln!(
                out,
                "error: cannot edit {} ({}'s config): {problem}. Fix the file, or give another with --file.",
                file.display(),
                client.name()
            )?;
            return Ok(CommandEnd::Usage);
        }
    };
    if after == old && before.is_some() {
        writeln!(
            out,
            "{} already has this `{ENTRY_NAME}` entry ({}); nothing changed",
            file.display(),
            client.name()
        )?;
        return Ok(CommandEnd::Done);
    }
    if request.dry_run {
        write!(out, "{}", diff(&file, old, &after))?;
        writeln!(out, "dry run: {} not changed", file.display())?;
        return Ok(CommandEnd::Done);
    }
    // What is left of a file install made, once its entry is out: nothing.
    let emptied = matches!(after.trim(), "" | "{}");
    // Back as it was before install: install's backup has nothing more to give.
    let restored = kind == Kind::Uninstall
        && (emptied || std::fs::read_to_string(backup_of(&file)).is_ok_and(|kept| kept == after));
    let written = match restored {
        true => write_restored(&file, &after, emptied).map(|()| None),
        false => write_with_backup(&file, before.as_deref(), &after, emptied),
    };
    match written {
        Ok(backup) => {
            let kept = match (backup, restored) {
                (Some(backup), _) => format!("; the file as it was is in {}", backup.display()),
                (None, true) if emptied => {
                    ", and the file, which held nothing else (install made it)".to_owned()
                }
                (None, true) => {
                    ": the file is as it was before install, so its backup is removed too"
                        .to_owned()
                }
                (None, false) => String::new(),
            };
            let done = match kind {
                Kind::Install => format!("wrote {}", file.display()),
                Kind::Uninstall => {
                    format!("removed toolshelf's entry from {}", file.display())
                }
            };
            writeln!(
                out,
                "{done} ({}){kept}. Restart {} (or reload its MCP servers) for the change to apply.",
                client.name(),
                client.name()
            )?;
            Ok(CommandEnd::Done)
        }
        Err(error) => {
            writeln!(
                out,
                "error: cannot write {}: {error}. Check that its folder is writable, or give another file with --file.",
                file.display()
            )?;
            Ok(CommandEnd::Failed)
        }
    }
}

/// Where `client` keeps its config of `scope` on this machine.
pub(crate) fn client_file(client: Client, scope: Scope) -> Result<PathBuf, String> {
    let home = dirs::home_dir().ok_or("cannot find the home folder; give the file with --file")?;
    let config_dir = dirs::config_dir().unwrap_or_else(|| home.join(".config"));
    let here = std::env::current_dir().map_err(|error| format!("no current folder: {error}"))?;
    let codex_home = std::env::var_os("CODEX_HOME").map(PathBuf::from);
    let places = Places {
        home: &home,
        config_dir: &config_dir,
        here: &here,
        codex_home: codex_home.as_deref(),
    };
    client
        .file(scope, &places)
        .ok_or_else(|| format!("{} has no project config; use --scope user", client.name()))
}

/// Gives `file` back as it was before install (`after`; none at all when `emptied`) and
/// removes install's backup of it.
fn write_restored(file: &Path, after: &str, emptied: bool) -> std::io::Result<()> {
    match emptied {
        true => std::fs::remove_file(file)?,
        false => replace(file, after)?,
    }
    match std::fs::remove_file(backup_of(file)) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// Writes `after` to `file` through a temporary file beside it, keeping `before` (if the file
/// existed) in `FILE.toolshelf-backup` first; the file keeps its permissions.
fn write_with_backup(
    file: &Path,
    before: Option<&str>,
    after: &str,
    emptied: bool,
) -> std::io::Result<Option<PathBuf>> {
    let backup = before.map(|before| keep_backup(file, before)).transpose()?;
    if emptied {
        std::fs::remove_file(file)?;
        return Ok(backup);
    }
    replace(file, after)?;
    Ok(backup)
}

/// Keeps `before`, the content of `file` now, in `FILE.toolshelf-backup`, with the file's
/// permissions (it may hold secrets the file holds).
pub(crate) fn keep_backup(file: &Path, before: &str) -> std::io::Result<PathBuf> {
    let backup = backup_of(file);
    std::fs::write(&backup, before)?;
    if let Ok(metadata) = std::fs::metadata(file) {
        std::fs::set_permissions(&backup, metadata.permissions())?;
    }
    Ok(backup)
}

/// Writes `text` to `file` whole or not at all (a temporary file beside it, renamed), keeping
/// the file's permissions.
pub(crate) fn replace(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut temporary = file.as_os_str().to_owned();
    temporary.push(".toolshelf-new");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text)?;
    if let Ok(metadata) = std::fs::metadata(file) {
        std::fs::set_permissions(&temporary, metadata.permissions())?;
    }
    std::fs::rename(&temporary, file)
}

/// The change as a unified diff.
pub(crate) fn diff(file: &Path, before: &str, after: &str) -> String {
    let name = file.display().to_string();
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&name, &name)
        .to_string()
}
