//! The commands that write toolshelf's own config file: `init` (a starter file, or one imported
//! from a client's config), `add` (a server into a toolbox) and `remove` (a server out of one).
//! `add` and `remove` edit the file in place (`json_edit`: the rest of it stays as written) and
//! write nothing that does not load: a change that adds a problem to the config is refused with
//! the problems, as `toolshelf check` words them.

use std::{io::Write, path::Path};

use serde_json::{Map, Value, json};

use crate::{
    config::{self, ConfigSource},
    json_edit,
    shell::CommandEnd,
};

/// A first config: one toolbox, its server pinned, every key one a user edits.
const STARTER: &str = r#"{
  "toolboxes": {
    "memory": {
      "description": "A knowledge graph that persists between sessions",
      "mcpServers": {
        "memory": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31"],
          "env": { "MEMORY_FILE_PATH": "${HOME}/.toolshelf-memory.jsonl" }
        }
      }
    }
  }
}
"#;

/// Writes the starter config to `path` (refusing to replace a file unless `force`).
pub fn init(path: &Path, force: bool, out: &mut dyn Write) -> std::io::Result<CommandEnd> {
    if path.exists() && !force {
        writeln!(
            out,
            "error: {} exists; edit it (`toolshelf add` adds a server), or pass --force to replace it",
            path.display()
        )?;
        return Ok(CommandEnd::Usage);
    }
    if let Err(error) = std::fs::write(path, STARTER) {
        writeln!(out, "error: cannot write {}: {error}", path.display())?;
        return Ok(CommandEnd::Failed);
    }
    let shown = path.display();
    writeln!(
        out,
        "wrote {shown}: one toolbox, `memory`, with the MCP reference memory server (run by npx).\n\
         Next: `toolshelf add TOOLBOX NAME -- COMMAND ARGS…` adds a server (`--url URL` a remote one),\n\
         `toolshelf check --config {shown}` starts each server once,\n\
         `toolshelf install --client NAME --config {shown}` puts toolshelf into your MCP client."
    )?;
    Ok(CommandEnd::Done)
}

/// What `add` adds.
pub struct NewServer<'a> {
    pub toolbox: &'a str,
    pub name: &'a str,
    /// The toolbox's description, if `add` makes the toolbox.
    pub description: Option<&'a str>,
    pub url: Option<&'a str>,
    /// COMMAND ARGS…
    pub command: &'a [String],
    /// KEY=VALUE pairs.
    pub env: &'a [String],
}

/// Adds a server to a toolbox of the config at `path` (made, with the file, when missing).
pub fn add(
    path: &Path,
    source: ConfigSource,
    server: &NewServer<'_>,
    out: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let entry = match entry(server) {
        Ok(entry) => entry,
        Err(message) => {
            writeln!(out, "error: {message}")?;
            return Ok(CommandEnd::Usage);
        }
    };
    let before = match read(path, source, true) {
        Ok(text) => text,
        Err(message) => {
            writeln!(out, "error: {message}")?;
            return Ok(CommandEnd::Usage);
        }
    };
    let document = json_edit::parse(if before.trim().is_empty() {
        "{}"
    } else {
        &before
    });
    let toolbox = document
        .as_ref()
        .ok()
        .and_then(|document| document.pointer(&format!("/toolboxes/{}", pointer(server.toolbox))));
    if toolbox
        .and_then(|toolbox| toolbox.pointer(&format!("/mcpServers/{}", pointer(server.name))))
        .is_some()
    {
        writeln!(
            out,
            "error: toolbox `{}` already has a server `{}`; `toolshelf remove {} {}` first to replace it",
            server.toolbox, server.name, server.toolbox, server.name
        )?;
        return Ok(CommandEnd::Usage);
    }
    if toolbox.is_none() && server.description.is_none_or(|text| text.trim().is_empty()) {
        writeln!(
            out,
            "error: toolbox `{}` is new, and an agent chooses a toolbox by its description: add --description \"what its tools are for\" (e.g. --description \"Read and write the project's notes\"); nothing was changed",
            server.toolbox
        )?;
        return Ok(CommandEnd::Usage);
    }
    let server_path = ["toolboxes", server.toolbox, "mcpServers", server.name];
    // A new toolbox's description comes first, where people write it.
    let edited = match (toolbox, server.description) {
        (None, Some(description)) => json_edit::set(
            &before,
            &["toolboxes", server.toolbox, "description"],
            &json!(description),
        )
        .and_then(|text| json_edit::set(&text, &server_path, &entry)),
        _ => json_edit::set(&before, &server_path, &entry),
    };
    let made = match toolbox {
        Some(_) => String::new(),
        None => " (a new toolbox)".to_owned(),
    };
    let done = format!(
        "added `{}` to toolbox `{}`{made} in {}",
        server.name,
        server.toolbox,
        path.display()
    );
    finish(path, &before, edited, &done, out)
}

/// Takes a server out of a toolbox; the toolbox goes too when it was its last server.
pub fn remove(
    path: &Path,
    source: ConfigSource,
    toolbox: &str,
    name: &str,
    out: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let before = match read(path, source, false) {
        Ok(text) => text,
        Err(message) => {
            writeln!(out, "error: {message}")?;
            return Ok(CommandEnd::Usage);
        }
    };
    let servers: Vec<String> = json_edit::parse(&before)
        .ok()
        .and_then(|document| {
            let servers =
                document.pointer(&format!("/toolboxes/{}/mcpServers", pointer(toolbox)))?;
            Some(servers.as_object()?.keys().cloned().collect())
        })
        .unwrap_or_default();
    if !servers.iter().any(|server| server == name) {
        let known = match servers.is_empty() {
            true => "it is not a toolbox of the config".to_owned(),
            false => format!("its servers: {}", servers.join(", ")),
        };
        writeln!(
            out,
            "error: toolbox `{toolbox}` has no server `{name}` in {} ({known})",
            path.display()
        )?;
        return Ok(CommandEnd::Usage);
    }
    let (edited, done) = if servers.len() == 1 {
        (
            json_edit::remove(&before, &["toolboxes", toolbox], 0),
            format!(
                "removed `{name}` and its toolbox `{toolbox}`, which had no other server, from {}",
                path.display()
            ),
        )
    } else {
        (
            json_edit::remove(&before, &["toolboxes", toolbox, "mcpServers", name], 0),
            format!(
                "removed `{name}` from toolbox `{toolbox}` in {}",
                path.display()
            ),
        )
    };
    let edited = edited.and_then(|text| text.ok_or_else(|| "the server is not there".to_owned()));
    finish(path, &before, edited, &done, out)
}

/// The config's text; a missing file is an empty config when `may_be_new`.
fn read(path: &Path, source: ConfigSource, may_be_new: bool) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(error) if may_be_new && error.kind() == std::io::ErrorKind::NotFound => {
            Ok("{\n  \"toolboxes\": {}\n}\n".into())
        }
        Err(_) => Err(config::load_from(path, source).err().map_or_else(
            || format!("cannot read {}", path.display()),
            |error| error.to_string(),
        )),
    }
}

/// Writes `edited` unless it adds a problem to the config.
fn finish(
    path: &Path,
    before: &str,
    edited: Result<String, String>,
    done: &str,
    out: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let after = match edited {
        Ok(after) => after,
        Err(problem) => {
            writeln!(out, "error: cannot edit {}: {problem}", path.display())?;
            return Ok(CommandEnd::Usage);
        }
    };
    let base = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let problems = |text: &str| -> Vec<String> {
        match config::parse(text, base, &|name| std::env::var(name).ok()) {
            Ok(_) => Vec::new(),
            Err(problems) => problems
                .iter()
                .map(|problem| format!("  - {problem}"))
                .collect(),
        }
    };
    let had = problems(before);
    let added: Vec<String> = problems(&after)
        .into_iter()
        .filter(|problem| !had.contains(problem))
        .collect();
    if !added.is_empty() {
        writeln!(
            out,
            "error: {} not changed: the change would make these problems:",
            path.display()
        )?;
        for problem in added {
            writeln!(out, "{problem}")?;
        }
        return Ok(CommandEnd::Usage);
    }
    if let Err(error) = std::fs::write(path, after) {
        writeln!(out, "error: cannot write {}: {error}", path.display())?;
        return Ok(CommandEnd::Failed);
    }
    writeln!(out, "{done}")?;
    Ok(CommandEnd::Done)
}

/// A server's entry: a command with its arguments, or a URL; `env` from KEY=VALUE pairs.
fn entry(server: &NewServer<'_>) -> Result<Value, String> {
    let mut entry = Map::new();
    match (server.url, server.command.split_first()) {
        (Some(url), None) => {
            entry.insert("url".into(), json!(url));
        }
        (None, Some((command, args))) => {
            entry.insert("command".into(), json!(command));
            if !args.is_empty() {
                entry.insert("args".into(), json!(args));
            }
        }
        (Some(_), Some(_)) => {
            return Err("give either --url URL or -- COMMAND ARGS…, not both".into());
        }
        (None, None) => {
            return Err("say how to reach the server: `-- COMMAND ARGS…` (a local one) or --url URL (a remote one)".into());
        }
    }
    if !server.env.is_empty() {
        let mut env = Map::new();
        for pair in server.env {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("--env {pair}: write it as KEY=VALUE"))?;
            env.insert(key.to_owned(), json!(value));
        }
        entry.insert("env".into(), Value::Object(env));
    }
    Ok(Value::Object(entry))
}

/// `key` as one step of a JSON pointer.
fn pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
