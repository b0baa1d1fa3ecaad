//! `toolshelf consolidate --client NAME`: a client's servers moved into toolshelf in one step.
//! The servers go into the toolbox config (a toolbox each, or all in `--toolbox`), toolshelf's
//! entry takes their place in the client's file, and each literal secret of theirs goes to an
//! envFile of the server's own beside the config (mode 0600: one file per server, since an
//! envFile's variables all reach its child). Every file is planned before any is written; a
//! plan with a problem writes nothing. What was done is recorded (`moved::Record`), so
//! `--undo` gives every file back byte for byte.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use serde_json::{Map, Value, json};

use super::{
    ENTRY_NAME, edit, moved,
    planned::{Planned, secrets_of},
};
use crate::{
    clients::{Client, Scope},
    json_edit,
    shell::CommandEnd,
};

/// What `consolidate` was asked.
pub struct ConsolidateRequest<'a> {
    pub client: Client,
    pub scope: Scope,
    /// The client's config file, when not where the client keeps it.
    pub file: Option<&'a Path>,
    /// The toolbox config the servers go into (made when missing).
    pub config: Option<PathBuf>,
    /// All servers into this toolbox; `None`: a toolbox per server.
    pub toolbox: Option<&'a str>,
    pub dry_run: bool,
}

/// Moves the client's servers into the toolbox config and toolshelf into the client.
pub fn consolidate(
    request: &ConsolidateRequest<'_>,
    out: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let client_file = match moved::client_file(request.client, request.scope, request.file) {
        Ok(file) => file,
        Err(message) => return refuse(out, &message),
    };
    let (config, _) = crate::config::locate(request.config.clone());
    let config = std::path::absolute(&config).unwrap_or(config);
    let plan = match plan(request, &client_file, &config) {
        Ok(plan) => plan,
        Err(message) => return refuse(out, &message),
    };
    for note in &plan.notes {
        writeln!(out, "note: {note}")?;
    }
    if request.dry_run {
        let secrets = secrets_of(&plan.files);
        for file in &plan.files {
            write!(out, "{}", file.shown_diff(&secrets))?;
        }
        writeln!(out, "dry run: nothing changed")?;
        return Ok(CommandEnd::Done);
    }
    if let Err(message) = moved::apply(&plan.files, request.client, &client_file) {
        return refuse_failed(out, &message);
    }
    let name = request.client.name();
    writeln!(
        out,
        "moved {} from {} ({name}) into {}: {}",
        plural(plan.moved.len(), "server"),
        client_file.display(),
        config.display(),
        plan.moved.join(", ")
    )?;
    for file in plan.files.iter().filter(|file| file.secret) {
        writeln!(
            out,
            "wrote {} (mode 0600): the secrets its server had in {name}'s file",
            file.path.display()
        )?;
    }
    let flags = moved::client_flags(request.client, request.scope, request.file);
    writeln!(
        out,
        "{name} now starts toolshelf in their place; each file changed is kept as FILE.toolshelf-backup. Undo it all with `toolshelf consolidate --undo {flags}`. Restart {name} (or reload its MCP servers) for the change to apply."
    )?;
    Ok(CommandEnd::Done)
}

/// Gives back every file a consolidate changed, as it was.
pub fn undo_consolidate(
    request: &ConsolidateRequest<'_>,
    out: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    match moved::client_file(request.client, request.scope, request.file)
        .and_then(|file| moved::undo(&file, request.dry_run, out))
    {
        Ok(end) => Ok(end),
        Err(message) => refuse(out, &message),
    }
}

fn refuse(out: &mut dyn Write, message: &str) -> std::io::Result<CommandEnd> {
    writeln!(out, "error: {message}")?;
    Ok(CommandEnd::Usage)
}

fn refuse_failed(out: &mut dyn Write, message: &str) -> std::io::Result<CommandEnd> {
    writeln!(out, "error: {message}")?;
    Ok(CommandEnd::Failed)
}

fn plural(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}

struct Plan {
    files: Vec<Planned>,
    /// `toolbox/server` of each server moved.
    moved: Vec<String>,
    notes: Vec<String>,
}

/// Every file's new content, or why the move cannot be made.
fn plan(
    request: &ConsolidateRequest<'_>,
    client_file: &Path,
    config: &Path,
) -> Result<Plan, String> {
    let client = request.client;
    let client_text = std::fs::read_to_string(client_file).map_err(|error| {
        format!(
            "cannot read {} ({}'s config): {error}; give its file with --file",
            client_file.display(),
            client.name()
        )
    })?;
    if let Some(record) = moved::recorded(client_file) {
        return Err(format!(
            "{} was consolidated already ({} records it): undo that first with `toolshelf consolidate --undo {}`",
            client_file.display(),
            record.display(),
            moved::client_flags(client, request.scope, request.file)
        ));
    }
    let document = match client.format() {
        crate::clients::Format::Json => json_edit::parse(&client_text),
        crate::clients::Format::Toml => {
            toml_edit::de::from_str::<Value>(&client_text).map_err(|error| error.to_string())
        }
    }
    .map_err(|error| format!("cannot read {}: {error}", client_file.display()))?;
    let key = client.servers_key();
    let servers = document
        .get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut notes = Vec::new();
    let movable: Vec<(&String, &Value)> = servers
        .iter()
        .filter(|(name, server)| {
            let disabled = server.get("disabled") == Some(&Value::Bool(true));
            if disabled {
                notes.push(format!("{name}: disabled in {}; left there", client.name()));
            }
            name.as_str() != ENTRY_NAME && !disabled
        })
        .collect();
    if movable.is_empty() {
        return Err(format!(
            "{} has no server to move under `{key}` (toolshelf's own entry and disabled servers stay)",
            client_file.display()
        ));
    }
    let config_before = match std::fs::read_to_string(config) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(format!("cannot read {}: {error}", config.display())),
    };
    let folder = config.parent().unwrap_or(Path::new("."));
    let mut config_text = config_before.clone().unwrap_or_default();
    let existing = match config_text.trim().is_empty() {
        true => Value::Object(Map::new()),
        false => json_edit::parse(&config_text)
            .map_err(|error| format!("cannot read {}: {error}", config.display()))?,
    };
    let mut files = Vec::new();
    let mut moved = Vec::new();
    let mut described: Vec<String> = Vec::new();
    for (name, server) in &movable {
        let server_name = crate::import::toolbox_name(name);
        let toolbox = request.toolbox.unwrap_or(&server_name);
        let mut secrets = Vec::new();
        let mut entry =
            crate::import::server_entry(&server_name, server, &mut notes, Some(&mut secrets));
        if moved.contains(&format!("{toolbox}/{server_name}")) {
            return Err(format!(
                "two of the client's servers become `{server_name}` in toolbox `{toolbox}` (names keep letters, digits, '_' and '-'): rename one of them in {}, then run consolidate again; nothing was changed",
                client_file.display()
            ));
        }
        if existing
            .pointer(&format!("/toolboxes/{toolbox}/mcpServers/{server_name}"))
            .is_some()
        {
            return Err(format!(
                "toolbox `{toolbox}` of {} has a server `{server_name}` already: remove it (`toolshelf remove {toolbox} {server_name}`) or move into another toolbox with --toolbox; nothing was changed",
                config.display()
            ));
        }
        if !secrets.is_empty() {
            let env_file = secrets_file(config, &server_name);
            if env_file.exists() {
                return Err(format!(
                    "{} exists already: move it away, then run consolidate again; nothing was changed",
                    env_file.display()
                ));
            }
            if let Some(members) = entry.as_object_mut() {
                let relative = env_file.file_name().unwrap_or_default();
                members.insert("envFile".into(), json!(relative.to_string_lossy()));
            }
            files.push(Planned {
                after: env_file_text(client, &secrets),
                path: env_file,
                before: None,
                secret: true,
            });
        }
        let new_toolbox = existing.pointer(&format!("/toolboxes/{toolbox}")).is_none()
            && !moved
                .iter()
                .any(|done: &String| done.starts_with(&format!("{toolbox}/")));
        if new_toolbox {
            let description = match request.toolbox {
                Some(_) => format!("Servers moved from {}", client.name()),
                None => format!("The {server_name} server (moved from {})", client.name()),
            };
            config_text = set(
                &config_text,
                &["toolboxes", toolbox, "description"],
                &json!(description),
            )?;
            described.push(toolbox.to_owned());
        }
        let path = ["toolboxes", toolbox, "mcpServers", server_name.as_str()];
        config_text = set(&config_text, &path, &entry)?;
        moved.push(format!("{toolbox}/{server_name}"));
    }
    if !described.is_empty() {
        notes.push(format!(
            "an agent chooses a toolbox by its description: say what the tools of {} are for in their `description`",
            described.join(", ")
        ));
    }
    // What toolshelf will read; a variable the envFiles set counts as set.
    if let Err(problems) = crate::config::parse(&config_text, folder, &|_| Some("set".into())) {
        let listed: Vec<String> = problems
            .iter()
            .map(|problem| format!("  - {problem}"))
            .collect();
        return Err(format!(
            "the moved servers would not load in {}; nothing was changed:\n{}",
            config.display(),
            listed.join("\n")
        ));
    }
    let format = client.format();
    let mut client_after = client_text.clone();
    for (name, _) in &movable {
        client_after = edit::remove(format, &client_after, key, name)
            .map_err(|error| format!("cannot edit {}: {error}", client_file.display()))?
            .unwrap_or(client_after);
    }
    let entry = super::toolshelf_entry(client, config, &Map::new());
    client_after = edit::set(format, &client_after, key, ENTRY_NAME, &entry)
        .map_err(|error| format!("cannot edit {}: {error}", client_file.display()))?;
    files.push(Planned {
        path: config.to_owned(),
        before: config_before,
        after: config_text,
        secret: false,
    });
    files.push(Planned {
        path: client_file.to_owned(),
        before: Some(client_text),
        after: client_after,
        secret: false,
    });
    Ok(Plan {
        files,
        moved,
        notes,
    })
}

fn set(text: &str, path: &[&str], value: &Value) -> Result<String, String> {
    json_edit::set(text, path, value).map_err(|error| format!("cannot edit the config: {error}"))
}

/// `SERVER`'s envFile: `toolboxes.SERVER.env` beside `toolboxes.json`.
fn secrets_file(config: &Path, server: &str) -> PathBuf {
    let stem = config
        .file_stem()
        .map_or("toolboxes".into(), |stem| stem.to_string_lossy());
    config.with_file_name(format!("{stem}.{server}.env"))
}

/// The envFile's lines: each value in double quotes, escaped as the envFile reader reads them.
fn env_file_text(client: Client, secrets: &[(String, String)]) -> String {
    let mut text = format!(
        "# Moved from {}'s config by `toolshelf consolidate`: this server's secrets.\n",
        client.name()
    );
    for (name, value) in secrets {
        let escaped = value
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        text.push_str(&format!("{name}=\"{escaped}\"\n"));
    }
    text
}
