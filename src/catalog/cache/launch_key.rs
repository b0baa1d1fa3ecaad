//! The name of a server's catalog file: a hash of everything that decides which program (or
//! remote server) answers, and so which tools it lists: the command, its arguments, working
//! folder and variables, or the URL and headers. Secret values go in only as their own hashes.
//! Overrides, filters and timeouts are not part of it: the file keeps the list as the server
//! gave it, and they apply after.

use sha2::{Digest, Sha256};

use crate::config::{Endpoint, RemoteTransport, ServerSpec};

/// Bumped when what the key covers changes, so old files miss instead of matching wrongly.
const KEY_VERSION: &[u8] = b"toolshelf-catalog-2";

/// 32 hex digits naming `spec`'s catalog file.
pub(super) fn of(spec: &ServerSpec) -> String {
    let mut key = Key(Sha256::new());
    key.field(KEY_VERSION);
    match &spec.endpoint {
        Endpoint::Local(local) => {
            key.field(b"local");
            key.field(local.command.as_bytes());
            key.list(local.args.iter().map(String::as_bytes));
            let cwd = local.cwd.as_ref().map(|cwd| cwd.to_string_lossy());
            key.field(cwd.as_deref().unwrap_or_default().as_bytes());
            key.secrets(&local.env);
            key.list(local.env_passthrough.iter().map(String::as_bytes));
            key.field(if local.inherit_env {
                b"inherit"
            } else {
                b"clean"
            });
        }
        Endpoint::Remote(remote) => {
            key.field(match remote.transport {
                RemoteTransport::StreamableHttp => b"http",
                RemoteTransport::Sse => b"sse",
            });
            key.field(remote.url.as_str().as_bytes());
            key.secrets(&remote.headers);
            let client = remote
                .oauth
                .as_ref()
                .map(|oauth| oauth.client_id.as_deref().unwrap_or("registered"));
            key.field(client.unwrap_or_default().as_bytes());
        }
    }
    let digest = key.0.finalize();
    digest[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

struct Key(Sha256);

impl Key {
    /// Length-prefixed, so no two different specs feed the same bytes.
    fn field(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn list<'a>(&mut self, items: impl ExactSizeIterator<Item = &'a [u8]>) {
        self.0.update((items.len() as u64).to_le_bytes());
        for item in items {
            self.field(item);
        }
    }

    /// Names as they are, values as their hashes.
    fn secrets(&mut self, pairs: &[(String, String)]) {
        self.0.update((pairs.len() as u64).to_le_bytes());
        for (name, value) in pairs {
            self.field(name.as_bytes());
            self.field(&Sha256::digest(value.as_bytes()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(server: serde_json::Value) -> std::sync::Arc<ServerSpec> {
        let file = serde_json::json!({"toolboxes": {"t": {"mcpServers": {"s": server}}}});
        let config = crate::config::parse(&file.to_string(), std::path::Path::new("/"), &|_| None)
            .expect("a valid config");
        config.toolboxes["t"].servers[0].clone()
    }

    #[test]
    fn the_key_follows_the_launch_spec_and_nothing_else() {
        let base = of(&spec(
            serde_json::json!({"command": "srv", "args": ["a"], "env": {"TOKEN": "one"}}),
        ));
        assert_eq!(base.len(), 32);
        let same = of(&spec(serde_json::json!({
            "command": "srv", "args": ["a"], "env": {"TOKEN": "one"},
            "callTimeout": 5, "tags": ["xy"], "tools": {"t": {"alias": "tt"}}
        })));
        assert_eq!(base, same, "overrides and timeouts do not change the key");
        for changed in [
            serde_json::json!({"command": "srv", "args": ["b"], "env": {"TOKEN": "one"}}),
            serde_json::json!({"command": "srv", "args": ["a", ""], "env": {"TOKEN": "one"}}),
            serde_json::json!({"command": "srv", "args": ["a"], "env": {"TOKEN": "two"}}),
            serde_json::json!({"command": "srv", "args": ["a"], "env": {"OTHER": "one"}}),
            serde_json::json!({"command": "srv2", "args": ["a"], "env": {"TOKEN": "one"}}),
            serde_json::json!({"command": "srv", "args": ["a"], "env": {"TOKEN": "one"}, "cwd": "/tmp"}),
        ] {
            assert_ne!(base, of(&spec(changed.clone())), "{changed}");
        }
        let remote = of(&spec(
            serde_json::json!({"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer a"}}),
        ));
        let other = of(&spec(
            serde_json::json!({"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer b"}}),
        ));
        assert_ne!(remote, other);
    }
}
