//! Where in a client's config file the servers are, for `toolshelf import`.

use std::path::Path;

use serde_json::{Map, Value};

pub use crate::clients::Client;

impl Client {
    /// The client a file's shape says wrote it, when none is named: VS Code's `servers`,
    /// Codex's `mcp_servers`, else the `mcpServers` most clients write.
    pub(super) fn guess(file: &Value) -> Client {
        if file.get("mcpServers").is_some() {
            Client::ClaudeDesktop
        } else if file.get("servers").is_some() {
            Client::Vscode
        } else if file.get("mcp_servers").is_some() {
            Client::Codex
        } else {
            Client::ClaudeDesktop
        }
    }

    /// The servers of `file` by name. Claude Code's user file (`~/.claude.json`) also holds
    /// servers per project: those of the project in `here` come after the user's.
    pub(super) fn servers(self, file: &Value, here: &Path) -> Result<Map<String, Value>, String> {
        let key = self.servers_key();
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
