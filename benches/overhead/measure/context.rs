//! Bytes the agent reads: toolshelf's `tools/list` and `open_toolbox` text against the children's
//! own `tools/list`.

use std::{path::Path, process::Stdio};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::*;

impl Bench<'_> {
    /// 7. Bytes the agent reads: toolshelf's tools/list with 10 toolboxes, and open_toolbox
    ///    against the child's own tools/list.
    pub(super) async fn context(&self) -> anyhow::Result<Value> {
        let toolboxes: serde_json::Map<String, Value> = (0..10)
            .map(|index| {
                let toolbox = json!({
                    "description": format!("Toolbox number {index}: what its servers are for, in one line"),
                    "mcpServers": {"main": self.fixture_server(&[]), "extra": self.fixture_server(&[])},
                });
                (format!("toolbox-{index}"), toolbox)
            })
            .collect();
        let config = self.config("context", Value::Object(toolboxes))?;
        let (client, _) = self.toolshelf(&config).await?;
        let listed = client.list_tools(None).await?;
        let tools_list = serde_json::to_vec(&listed)?.len();
        let opened = call(&client, "open_toolbox", json!({"toolbox": "toolbox-0"})).await?;
        let open_text = opened
            .content
            .first()
            .and_then(|block| block.as_text())
            .map(|text| text.text.len())
            .unwrap_or(0);
        let open_result = serde_json::to_vec(&opened)?.len();
        close(client).await;
        let child_list = raw_tools_list_bytes(&self.options.fixture, &[]).await?;
        let mut figures = json!({
            "tools_list_bytes_10_toolboxes": tools_list,
            "tools_list_tokens_estimate": tools_list / 4,
            "open_toolbox_text_bytes": open_text,
            "open_toolbox_result_bytes": open_result,
            "children_tools_list_bytes": 2 * child_list,
        });
        if let Some(bin) = &self.options.npm_bin {
            figures["real_servers"] = self.real_servers(bin).await?;
        }
        Ok(figures)
    }

    /// open_toolbox text against the servers' own tools/list, for the npm servers.
    pub(super) async fn real_servers(&self, bin: &Path) -> anyhow::Result<Value> {
        let (mut ours, mut theirs) = (0usize, 0usize);
        let mut each = serde_json::Map::new();
        let root = self.dir.to_str().context("temp dir is not UTF-8")?;
        for (name, program, args) in [
            ("filesystem", "mcp-server-filesystem", vec![root]),
            ("memory", "mcp-server-memory", vec![]),
            ("everything", "mcp-server-everything", vec![]),
        ] {
            let listed = raw_tools_list_bytes(&bin.join(program), &args).await?;
            let server = json!({ "command": bin.join(program), "args": args });
            let config =
                self.config(name, json!({ "real": { "mcpServers": { name: server } } }))?;
            let (client, _) = self.toolshelf(&config).await?;
            let opened = call(&client, "open_toolbox", json!({"toolbox": "real"})).await?;
            close(client).await;
            let text = opened
                .content
                .first()
                .and_then(|block| block.as_text())
                .map(|text| text.text.len())
                .unwrap_or(0);
            each.insert(
                name.into(),
                json!({ "tools_list_bytes": listed, "open_toolbox_text_bytes": text }),
            );
            ours += text;
            theirs += listed;
        }
        Ok(json!({
            "servers": each,
            "open_toolbox_text_bytes": ours,
            "children_tools_list_bytes": theirs,
            "ratio": round3(ours as f64 / theirs as f64),
        }))
    }
}

/// Bytes of a server's own `tools/list` result as it writes it (compact JSON, every field kept:
/// an SDK client would drop the fields it does not model and undercount).
pub(super) async fn raw_tools_list_bytes(program: &Path, args: &[&str]) -> anyhow::Result<usize> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().context("no stdout")?).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for message in messages {
        stdin.write_all(format!("{message}\n").as_bytes()).await?;
    }
    stdin.flush().await?;
    while let Some(line) = lines.next_line().await? {
        let message: Value = serde_json::from_str(&line)?;
        if message["id"] == json!(2) {
            return Ok(serde_json::to_vec(&message["result"])?.len());
        }
    }
    bail!("{} ended before answering tools/list", program.display())
}
