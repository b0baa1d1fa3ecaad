//! `toolshelf import`: an MCP client's config (Claude Desktop, Claude Code, Cursor, VS Code,
//! Windsurf) turned into a toolshelf config, one toolbox per server or all in one. Literal
//! secrets never reach the new file: each becomes a `${VAR}` reference, and the user is told
//! which variables to set. Notes go to stderr, the config (pure JSON) to stdout or `--write`.

mod clients;
mod secrets;

use std::{io::Write, path::Path};

use serde_json::{Map, Value, json};

pub use clients::Client;

use crate::shell::CommandEnd;

/// What `import` was asked.
pub struct ImportRequest<'a> {
    pub from: Option<Client>,
    pub file: Option<&'a Path>,
    /// All servers into this one toolbox; `None`: a toolbox per server.
    pub toolbox: Option<&'a str>,
    pub write: Option<&'a Path>,
    pub force: bool,
}

/// Keys of clients' own features that toolshelf has no use for, dropped with a note.
const DROPPED: &[&str] = &[
    "autoApprove",
    "alwaysAllow",
    "timeout",
    "disabledTools",
    "trust",
    "description",
    "gallery",
    "version",
];

/// Reads the client's config and writes the toolshelf config to `out` (or the `--write` file);
/// notes to `err`.
pub fn import(
    request: &ImportRequest<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let here = std::env::current_dir().unwrap_or_default();
    let (path, client) = match find(request, &here) {
        Ok(found) => found,
        Err(message) => {
            writeln!(err, "error: {message}")?;
            return Ok(CommandEnd::Failed);
        }
    };
    let file = match std::fs::read_to_string(&path)
        .map_err(|error| error.to_string())
        .and_then(|text| parse_config(&text, &path, client))
    {
        Ok(file) => file,
        Err(error) => {
            writeln!(err, "error: cannot read {}: {error}", path.display())?;
            return Ok(CommandEnd::Usage);
        }
    };
    let client = client.unwrap_or_else(|| Client::guess(&file));
    writeln!(err, "read {} ({})", path.display(), client.name())?;
    let servers = match client.servers(&file, &here) {
        Ok(servers) => servers,
        Err(problem) => {
            writeln!(err, "error: {}: {problem}", path.display())?;
            return Ok(CommandEnd::Usage);
        }
    };
    let mut notes = Vec::new();
    let mut converted = Map::new();
    for (name, server) in &servers {
        if server.get("disabled") == Some(&Value::Bool(true)) {
            notes.push(format!("{name}: disabled in {}; left out", client.name()));
            continue;
        }
        let own = toolbox_name(name);
        if own != *name {
            notes.push(format!(
                "{name}: renamed {own} (names are letters, digits, '_' and '-')"
            ));
        }
        converted.insert(own.clone(), server_entry(&own, server, &mut notes, None));
    }
    if converted.is_empty() {
        writeln!(err, "error: {} holds no server to import", path.display())?;
        return Ok(CommandEnd::Failed);
    }
    let config = match request.toolbox {
        Some(toolbox) => json!({"toolboxes": {toolbox: {
            "description": format!("Servers imported from {}: {}", client.name(), names(&converted)),
            "mcpServers": converted,
        }}}),
        None => {
            let boxes: Map<String, Value> = converted
                .into_iter()
                .map(|(name, server)| {
                    let description =
                        format!("The {name} server (imported from {})", client.name());
                    let toolbox =
                        json!({"description": description, "mcpServers": {name.clone(): server}});
                    (name, toolbox)
                })
                .collect();
            notes.push(
                "each toolbox's description is what an agent chooses by: say what its tools are for"
                    .into(),
            );
            json!({ "toolboxes": boxes })
        }
    };
    let text = serde_json::to_string_pretty(&config).unwrap_or_default() + "\n";
    // What toolshelf will read; `${VAR}` references count as set.
    if let Err(problems) = crate::config::parse(&text, &here, &|_| Some("set".into())) {
        for problem in problems {
            writeln!(err, "error: the imported config would not load: {problem}")?;
        }
        return Ok(CommandEnd::Failed);
    }
    for note in &notes {
        writeln!(err, "note: {note}")?;
    }
    match request.write {
        None => out.write_all(text.as_bytes())?,
        Some(target) if target.exists() && !request.force => {
            writeln!(
                err,
                "error: {} exists; pass --force to replace it, or --write another file",
                target.display()
            )?;
            return Ok(CommandEnd::Usage);
        }
        Some(target) => {
            if let Err(error) = std::fs::write(target, &text) {
                writeln!(err, "error: cannot write {}: {error}", target.display())?;
                return Ok(CommandEnd::Failed);
            }
            writeln!(
                err,
                "wrote {}; try it with `toolshelf check --config {}`",
                target.display(),
                target.display()
            )?;
        }
    }
    Ok(CommandEnd::Done)
}

/// A client's config file as JSON: Codex's is TOML (`--from codex`, or a `.toml` file).
fn parse_config(text: &str, path: &Path, client: Option<Client>) -> Result<Value, String> {
    let toml = match client {
        Some(client) => client.format() == crate::clients::Format::Toml,
        None => path
            .extension()
            .is_some_and(|extension| extension == "toml"),
    };
    if toml {
        toml_edit::de::from_str::<Value>(text).map_err(|error| error.to_string())
    } else {
        serde_json::from_str::<Value>(text).map_err(|error| error.to_string())
    }
}

/// The file to read and the client it is from (`None`: to be guessed from its shape).
fn find(
    request: &ImportRequest<'_>,
    here: &Path,
) -> Result<(std::path::PathBuf, Option<Client>), String> {
    if let Some(file) = request.file {
        return Ok((file.to_owned(), request.from));
    }
    let home =
        dirs::home_dir().ok_or("cannot find the home folder; give the client's config FILE")?;
    let config_dir = dirs::config_dir().unwrap_or_else(|| home.join(".config"));
    let codex_home = std::env::var_os("CODEX_HOME").map(std::path::PathBuf::from);
    let places = crate::clients::Places {
        home: &home,
        config_dir: &config_dir,
        here,
        codex_home: codex_home.as_deref(),
    };
    let candidates: Vec<Client> = match request.from {
        Some(client) => vec![client],
        None => Client::ALL.to_vec(),
    };
    let found: Vec<(std::path::PathBuf, Client)> = candidates
        .iter()
        .filter_map(|client| {
            let path = client
                .locations(&places)
                .into_iter()
                .find(|path| path.is_file())?;
            Some((path, *client))
        })
        .collect();
    match found.as_slice() {
        [(path, client)] => Ok((path.clone(), Some(*client))),
        [] => {
            let looked: Vec<String> = candidates
                .iter()
                .flat_map(|client| client.locations(&places))
                .map(|path| path.display().to_string())
                .collect();
            Err(format!(
                "no MCP client config found (looked at {}); give its FILE",
                looked.join(", ")
            ))
        }
        several => {
            let listed: Vec<String> = several
                .iter()
                .map(|(path, client)| format!("{} ({})", path.display(), client.name()))
                .collect();
            Err(format!(
                "found the configs of several clients: {}; name one with --from",
                listed.join(", ")
            ))
        }
    }
}

/// One server in toolshelf's shape: its launch keys kept (variables in toolshelf's syntax,
/// secrets as references, their values into `secrets` when given), the rest dropped with a
/// note.
pub(crate) fn server_entry(
    name: &str,
    server: &Value,
    notes: &mut Vec<String>,
    mut secrets: Option<&mut Vec<(String, String)>>,
) -> Value {
    let Some(given) = server.as_object() else {
        notes.push(format!("{name}: not an object; copied as it is"));
        return server.clone();
    };
    let mut entry = Map::new();
    for (key, value) in given {
        match key.as_str() {
            "command" | "url" | "cwd" | "args" | "envFile" => {
                entry.insert(key.clone(), secrets::variables(name, value, notes));
            }
            "serverUrl" => {
                entry.insert("url".into(), secrets::variables(name, value, notes));
            }
            "type" | "transportType" => {
                let kind = match value.as_str().unwrap_or_default() {
                    "http" | "streamable-http" | "streamableHttp" | "streamable_http" => "http",
                    "sse" => "sse",
                    _ => "stdio",
                };
                entry.insert("type".into(), Value::String(kind.into()));
            }
            "env" | "headers" => {
                if let Value::Object(pairs) = value {
                    let kept = secrets::referenced(name, key, pairs, notes, secrets.as_deref_mut());
                    entry.insert(key.clone(), Value::Object(kept));
                }
            }
            "disabled" => {}
            dropped if DROPPED.contains(&dropped) => notes.push(format!(
                "{name}.{key}: a setting of the client that toolshelf does not use; left out"
            )),
            _ => notes.push(format!("{name}.{key}: not a toolshelf setting; left out")),
        }
    }
    Value::Object(entry)
}

/// `name` as a toolbox or server name (`^[A-Za-z0-9_-]{1,64}$`).
pub(crate) fn toolbox_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '-',
            },
        )
        .take(64)
        .collect();
    match cleaned.is_empty() {
        true => "server".into(),
        false => cleaned,
    }
}

fn names(servers: &Map<String, Value>) -> String {
    servers.keys().cloned().collect::<Vec<_>>().join(", ")
}
