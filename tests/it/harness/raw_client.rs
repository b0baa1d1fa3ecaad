//! A hand-driven JSON-RPC client, for what an SDK client would not send or would hide.

use std::process::Stdio;

use serde_json::{Value, json};

use super::{DEADLINE, write_config};

/// A hand-driven JSON-RPC client on toolshelf's stdio (or a server's), for what an SDK client
/// hides: the exact order and bytes of messages on the wire, and input that is not JSON at all.
pub struct RawClient {
    _process: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _dir: Option<tempfile::TempDir>,
}

impl RawClient {
    /// Starts `toolshelf serve` on `config` and completes initialization (protocol 2025-06-18).
    pub async fn start(config: &Value) -> Self {
        Self::start_on(config, "2025-06-18").await
    }

    /// Starts `toolshelf serve` on `config` and initializes on protocol `version`.
    pub async fn start_on(config: &Value, version: &str) -> Self {
        Self::start_declaring(config, version, &[], json!({})).await
    }

    /// Starts `toolshelf serve ARGS…` on `config` and initializes on protocol `version`,
    /// declaring `capabilities`.
    pub async fn start_declaring(
        config: &Value,
        version: &str,
        args: &[&str],
        capabilities: Value,
    ) -> Self {
        let (dir, path) = write_config(config);
        let mut command = crate::harness::toolshelf();
        command
            .args(["serve", "--config"])
            .arg(&path)
            .args(args)
            .env("RUST_LOG", "warn");
        Self::spawn_declaring(command, Some(dir), version, Stdio::null(), capabilities).await
    }

    /// Starts `command` as an MCP server on stdio and initializes on protocol `version`.
    pub async fn spawn(
        command: tokio::process::Command,
        dir: Option<tempfile::TempDir>,
        version: &str,
    ) -> Self {
        Self::spawn_logged(command, dir, version, Stdio::null()).await
    }

    /// As `spawn`, with the server's stderr going to `log`.
    pub async fn spawn_logged(
        command: tokio::process::Command,
        dir: Option<tempfile::TempDir>,
        version: &str,
        log: Stdio,
    ) -> Self {
        Self::spawn_declaring(command, dir, version, log, json!({})).await
    }

    /// As `spawn_logged`, the client declaring `capabilities`.
    pub async fn spawn_declaring(
        mut command: tokio::process::Command,
        dir: Option<tempfile::TempDir>,
        version: &str,
        log: Stdio,
        capabilities: Value,
    ) -> Self {
        use tokio::io::AsyncBufReadExt;
        let mut process = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the server");
        let stdin = process.stdin.take().expect("stdin");
        let stdout = process.stdout.take().expect("stdout");
        let mut client = Self {
            _process: process,
            stdin: Some(stdin),
            lines: tokio::io::BufReader::new(stdout).lines(),
            _dir: dir,
        };
        let init = json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}});
        client.request(0, "initialize", init).await;
        client
            .send_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
            )
            .await;
        client
    }

    pub async fn send_line(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self._process.id().expect("the server is running")
    }

    /// Closes the server's stdin: the end of the client's input.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Closes the server's stdin and waits for it to exit, as a client that leaves does (dropped,
    /// it is killed instead, perhaps in the middle of writing a file).
    pub async fn end(mut self) -> std::process::ExitStatus {
        self.close_stdin();
        tokio::time::timeout(DEADLINE, self._process.wait())
            .await
            .expect("the server exits once its input ends")
            .expect("exit status")
    }

    /// The next line the server writes, as written.
    pub async fn next_line(&mut self) -> String {
        tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await
            .expect("a message in time")
            .expect("read")
            .expect("the server closed stdout")
    }

    /// The next message the server writes.
    pub async fn next(&mut self) -> Value {
        serde_json::from_str(&self.next_line().await).expect("the server wrote JSON")
    }

    /// Sends a request and returns (everything the server wrote before the answer, the answer's
    /// line as written).
    pub async fn request_raw(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
    ) -> (Vec<Value>, String) {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&request.to_string()).await;
        let mut before = Vec::new();
        loop {
            let line = self.next_line().await;
            let message: Value = serde_json::from_str(&line).expect("the server wrote JSON");
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return (before, line);
            }
            before.push(message);
        }
    }

    /// Opens `toolbox` with request `id` and returns the answer.
    pub async fn open(&mut self, id: u64, toolbox: &str) -> Value {
        let params = json!({"name": "open_toolbox", "arguments": {"toolbox": toolbox}});
        self.request(id, "tools/call", params).await.1
    }

    /// Sends a request and returns (everything the server wrote before the answer, the answer).
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> (Vec<Value>, Value) {
        let (before, line) = self.request_raw(id, method, params).await;
        (
            before,
            serde_json::from_str(&line).expect("the server wrote JSON"),
        )
    }
}
