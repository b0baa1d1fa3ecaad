//! The MCP clients toolshelf reads (`import`) and writes itself into (`install`): where each
//! keeps its MCP config, per scope, and how its servers are written there.

use std::path::{Path, PathBuf};

/// An MCP client, by the name `--client` and `--from` take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    ClaudeCode,
    ClaudeDesktop,
    Vscode,
    Cursor,
    Codex,
    Gemini,
    Windsurf,
}

/// Whose config: the user's (every project), or the current folder's project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Scope {
    #[default]
    User,
    Project,
}

/// The file format a client's config is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON; VS Code's files may hold comments and trailing commas.
    Json,
    Toml,
}

/// The folders a client's config path is made of.
pub struct Places<'a> {
    pub home: &'a Path,
    /// The user's config folder: `~/.config` on Linux, `~/Library/Application Support` on macOS,
    /// `%APPDATA%` on Windows.
    pub config_dir: &'a Path,
    /// The project's folder: the current one.
    pub here: &'a Path,
    /// `$CODEX_HOME`, where Codex keeps its config instead of `~/.codex`.
    pub codex_home: Option<&'a Path>,
}

impl Client {
    pub const ALL: [Client; 7] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::Vscode,
        Client::Cursor,
        Client::Codex,
        Client::Gemini,
        Client::Windsurf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::ClaudeDesktop => "Claude Desktop",
            Client::Vscode => "VS Code",
            Client::Cursor => "Cursor",
            Client::Codex => "Codex CLI",
            Client::Gemini => "Gemini CLI",
            Client::Windsurf => "Windsurf",
        }
    }

    /// The config file of `scope`; `None` when the client has no such scope.
    pub fn file(self, scope: Scope, places: &Places<'_>) -> Option<PathBuf> {
        let Places {
            home,
            config_dir,
            here,
            codex_home,
        } = places;
        let path = match (self, scope) {
            (Client::ClaudeCode, Scope::User) => home.join(".claude.json"),
            (Client::ClaudeCode, Scope::Project) => here.join(".mcp.json"),
            (Client::ClaudeDesktop, Scope::User) => {
                config_dir.join("Claude/claude_desktop_config.json")
            }
            (Client::Vscode, Scope::User) => config_dir.join("Code/User/mcp.json"),
            (Client::Vscode, Scope::Project) => here.join(".vscode/mcp.json"),
            (Client::Cursor, Scope::User) => home.join(".cursor/mcp.json"),
            (Client::Cursor, Scope::Project) => here.join(".cursor/mcp.json"),
            (Client::Codex, Scope::User) => match codex_home {
                Some(codex_home) => codex_home.join("config.toml"),
                None => home.join(".codex/config.toml"),
            },
            (Client::Codex, Scope::Project) => here.join(".codex/config.toml"),
            (Client::Gemini, Scope::User) => home.join(".gemini/settings.json"),
            (Client::Gemini, Scope::Project) => here.join(".gemini/settings.json"),
            (Client::Windsurf, Scope::User) => home.join(".codeium/windsurf/mcp_config.json"),
            (Client::ClaudeDesktop | Client::Windsurf, Scope::Project) => return None,
        };
        Some(path)
    }

    /// Where the client keeps its MCP config, most specific first: a project's file in the
    /// current folder before the user's.
    pub fn locations(self, places: &Places<'_>) -> Vec<PathBuf> {
        [Scope::Project, Scope::User]
            .into_iter()
            .filter_map(|scope| self.file(scope, places))
            .collect()
    }

    pub fn format(self) -> Format {
        match self {
            Client::Codex => Format::Toml,
            _ => Format::Json,
        }
    }

    /// The key (a table, in TOML) whose members are the servers, by name.
    pub fn servers_key(self) -> &'static str {
        match self {
            Client::Vscode => "servers",
            Client::Codex => "mcp_servers",
            _ => "mcpServers",
        }
    }

    /// A stdio server's entry as this client writes it.
    pub fn stdio_entry(self, command: &str, args: &[String]) -> serde_json::Value {
        match self {
            // What `claude mcp add` and VS Code's own "Add Server" write.
            Client::ClaudeCode | Client::Vscode => {
                serde_json::json!({ "type": "stdio", "command": command, "args": args })
            }
            _ => serde_json::json!({ "command": command, "args": args }),
        }
    }
}
