//! The MCP clients `toolshelf import` reads: where each keeps its config, and where in that file
//! the servers are.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// A client whose MCP config can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
}

impl Client {
    pub(super) const ALL: [Client; 5] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::Vscode,
        Client::Windsurf,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Windsurf => "Windsurf",
        }
    }

    /// Where the client keeps its MCP config, most specific first: a project's file in the
    /// current folder before the user's.
    pub(super) fn locations(self, home: &Path, config_dir: &Path, here: &Path) -> Vec<PathBuf> {
        match self {
            Client::ClaudeDesktop => vec![config_dir.join("Claude/claude_desktop_config.json")],
            Client::ClaudeCode => vec![here.join(".mcp.json"), home.join(".claude.json")],
            Client::Cursor => vec![here.join(".cursor/mcp.json"), home.join(".cursor/mcp.json")],
            Client::Vscode => vec![here.join(".vscode/mcp.json")],
            Client::Windsurf => vec![home.join(".codeium/windsurf/mcp_config.json")],
        }
    }

    /// The client a file's shape says wrote it, when none is named: VS Code's `servers`, else
    /// the `mcpServers` most clients write.
    pub(super) fn guess(file: &Value) -> Client {
        match file.get("servers").is_some() && file.get("mcpServers").is_none() {
            true => Client::Vscode,
            false => Client::ClaudeDesktop,
        }
    }

    /// The servers of `file` by name. Claude Code's user file (`~/.claude.json`) also holds
    /// servers per project: those of the project in `here` come after the user's.
    pub(super) fn servers(self, file: &Value, here: &Path) -> Result<Map<String, Value>, String> {
        let key = match self {
            Client::Vscode => "servers",
            _ => "mcpServers",
        };
        let mut servers = match file.get(key) {
            Some(Value::Object(servers)) => servers.clone(),
            Some(_) => return Err(format!("its `{key}` is not an object")),
            None => Map::new(),
        };
        if self == Client::ClaudeCode
            && let Some(Value::Object(project)) = file
                .get("projects")
                .and_then(|projects| projects.get(here.to_string_lossy().as_ref()))
                .and_then(|project| project.get("mcpServers"))
        {
            servers.extend(project.clone());
        }
        if servers.is_empty() && file.get(key).is_none() {
            return Err(format!(
                "it has no `{key}`: is it {}'s MCP config?",
                self.name()
            ));
        }
        Ok(servers)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claude_code_s_user_file_adds_the_current_project_s_servers() {
        let file = json!({
            "mcpServers": {"user": {"command": "a"}},
            "projects": {
                "/work/here": {"mcpServers": {"project": {"command": "b"}}},
                "/work/elsewhere": {"mcpServers": {"other": {"command": "c"}}}
            }
        });
        let servers = Client::ClaudeCode
            .servers(&file, Path::new("/work/here"))
            .expect("servers");
        let names: Vec<&String> = servers.keys().collect();
        assert_eq!(names, ["user", "project"]);
        assert_eq!(Client::guess(&json!({"servers": {}})), Client::Vscode);
        assert!(
            Client::Cursor
                .servers(&json!({"theme": 1}), Path::new("/"))
                .is_err()
        );
    }
}
