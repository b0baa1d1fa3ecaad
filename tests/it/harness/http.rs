//! `toolshelf serve --http` for the tests: started on a free loopback port and ready, an HTTP
//! client, and the Python clients that speak to it.

use std::{path::Path, process::Stdio};

use serde_json::{Value, json};

use crate::harness::{DEADLINE, config, fixture, free_port, launch, write_config};

/// `toolshelf serve --http` on a free loopback port with `TOOLSHELF_TOKEN=token` (none when
/// empty), ready.
pub(crate) async fn serve(config_path: &Path, token: &str) -> (tokio::process::Child, u16) {
    serve_with(config_path, token, &[]).await
}

/// As `serve`, with more arguments for `serve`.
pub(crate) async fn serve_with(
    config_path: &Path,
    token: &str,
    more: &[&str],
) -> (tokio::process::Child, u16) {
    serve_logged(config_path, token, more, Stdio::null()).await
}

/// As `serve_with`, toolshelf's log going to `log`.
pub(crate) async fn serve_logged(
    config_path: &Path,
    token: &str,
    more: &[&str],
    log: Stdio,
) -> (tokio::process::Child, u16) {
    let port = free_port();
    let token = Some(token).filter(|token| !token.is_empty());
    let process = launch::serve_http(crate::harness::toolshelf(), config_path, port, token, more)
        .env("RUST_LOG", "warn")
        .stderr(log)
        .spawn()
        .expect("spawn toolshelf");
    wait_healthy(port).await;
    (process, port)
}

/// Waits until `GET /healthz` on `port` answers 200.
pub(crate) async fn wait_healthy(port: u16) {
    assert!(
        launch::until_healthy(&http(), port, DEADLINE).await,
        "/healthz on port {port} did not answer 200 in time"
    );
}

pub(crate) fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// The text of `GET /metrics` on `port`, asked with `token`.
pub(crate) async fn metrics(port: u16, token: &str) -> String {
    http()
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .bearer_auth(token)
        .send()
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("a body")
}

/// HAProxy from the project's cache folder, fetched there by `scripts/fetch-haproxy.sh` on
/// first use (Debian's package unpacked, never installed); `HAPROXY` names another.
pub(crate) fn haproxy() -> std::path::PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-haproxy.sh");
    let output = std::process::Command::new("bash")
        .arg(script)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/fetch-haproxy.sh");
    assert!(
        output.status.success(),
        "scripts/fetch-haproxy.sh failed: see its message above"
    );
    std::path::PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// The body of an `initialize` request on 2025-11-25.
pub(crate) fn initialize() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"}}})
    .to_string()
    .into_bytes()
}

/// A 2025-era session spoken to with plain HTTP requests, to see how each is answered.
pub(crate) struct RawSession {
    pub(crate) url: String,
    pub(crate) id: String,
    /// The bearer token each request carries, if any.
    pub(crate) token: Option<String>,
}

/// An answer: its status, `Content-Type` and body.
pub(crate) struct Answered {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: String,
}

impl RawSession {
    pub(crate) async fn open(port: u16) -> Self {
        Self::open_with(port, None).await
    }

    /// A session whose requests carry `token`.
    pub(crate) async fn open_with(port: u16, token: Option<&str>) -> Self {
        let mut session = Self {
            url: format!("http://127.0.0.1:{port}/mcp"),
            id: String::new(),
            token: token.map(str::to_owned),
        };
        let response = session
            .send(String::from_utf8(initialize()).expect("utf-8"))
            .await;
        session.id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|id| id.to_str().ok())
            .expect("a session id")
            .to_owned();
        let initialized = session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(initialized.status, 202);
        session
    }

    pub(crate) async fn post_to(url: &str, session: Option<&str>, body: &str) -> reqwest::Response {
        let mut request = http()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.expect("POST")
    }

    async fn send(&self, body: String) -> reqwest::Response {
        let mut request = http()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if !self.id.is_empty() {
            request = request.header("mcp-session-id", &self.id);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request.send().await.expect("POST")
    }

    pub(crate) async fn post(&self, message: Value) -> Answered {
        self.post_text(message.to_string()).await
    }

    /// Posts `body` as written.
    pub(crate) async fn post_text(&self, body: String) -> Answered {
        let response = self.send(body).await;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = response.text().await.expect("a body");
        Answered {
            status,
            content_type,
            body,
        }
    }
}

pub(crate) fn use_tool_request(
    id: u64,
    name: &str,
    arguments: Value,
    meta: Option<Value>,
) -> Value {
    let mut params = json!({"name": "use_tool", "arguments": {
        "tool": {"toolbox": "dev", "server": "fixture", "name": name}, "arguments": arguments}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// What keeps a `fixture_session`'s toolshelf running.
pub(crate) struct Served {
    pub(crate) port: u16,
    _dir: tempfile::TempDir,
    _config_dir: tempfile::TempDir,
    _process: tokio::process::Child,
}

/// `serve --http` with toolbox `dev` (the fixture, its events in the returned file) and
/// `sessionIdleTimeout` of `idle_seconds`; a raw session with `dev` open.
pub(crate) async fn fixture_session(idle_seconds: u64) -> (Served, std::path::PathBuf, RawSession) {
    fixture_session_in(json!({ "sessionIdleTimeout": idle_seconds })).await
}

/// As `fixture_session`, with the config's `http` section `http`.
pub(crate) async fn fixture_session_in(http: Value) -> (Served, std::path::PathBuf, RawSession) {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events.log");
    let events_arg = events.to_str().expect("utf-8 path");
    let mut file = config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&["--events", events_arg]) }),
    )]);
    file["http"] = http;
    let (config_dir, path) = write_config(&file);
    let (process, port) = serve(&path, "").await;
    let session = RawSession::open(port).await;
    let opened = session
        .post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "open_toolbox", "arguments": {"toolbox": "dev"}}}))
        .await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let served = Served {
        port,
        _dir: dir,
        _config_dir: config_dir,
        _process: process,
    };
    (served, events, session)
}

/// Toolbox `dev` with the fixture, written to a fresh folder.
pub(crate) fn fixture_config() -> (tempfile::TempDir, std::path::PathBuf) {
    write_config(&config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&[]) }),
    )]))
}

/// A POST of `body` to `/mcp` with `headers`; the status.
pub(crate) async fn post_status(port: u16, headers: &[(&str, &str)], body: Vec<u8>) -> u16 {
    let mut request = http()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("POST").status().as_u16()
}
