//! The streamable-HTTP row of the benchmark: server-everything's `echo`, served over HTTP on
//! loopback, called directly with an HTTP client and through toolshelf (the server as its remote
//! child), in alternating blocks like every other comparison.

use std::{
    path::Path,
    process::Stdio,
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use anyhow::{Context as _, bail};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};

use super::launch;

/// A minimal MCP client over streamable HTTP: one session. The same
/// client measures a server directly and through `toolshelf serve --http`.
pub struct DirectHttp {
    http: reqwest::Client,
    url: String,
    bearer: Option<HeaderValue>,
    session: HeaderValue,
    next_id: AtomicU64,
}

impl DirectHttp {
    /// Initializes a session at `url` over a connection of its own, sending `bearer` as the
    /// token when there is one.
    pub async fn connect(url: &str, bearer: Option<&str>) -> anyhow::Result<Self> {
        Self::connect_with(http_client()?, url, bearer).await
    }

    /// As `connect`, over `http`'s connections (sessions may share them).
    pub async fn connect_with(
        http: reqwest::Client,
        url: &str,
        bearer: Option<&str>,
    ) -> anyhow::Result<Self> {
        let bearer = bearer
            .map(|token| HeaderValue::from_str(&format!("Bearer {token}")))
            .transpose()?;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}});
        let response = post(&http, url, bearer.as_ref(), None, &init).await?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .cloned()
            .context("the server set no session")?;
        answer(response).await?;
        let client = Self {
            http,
            url: url.to_owned(),
            bearer,
            session,
            next_id: AtomicU64::new(1),
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        client.send(&initialized).await?;
        Ok(client)
    }

    /// Sends `token` from the next request on (a new access token of the same caller).
    pub fn set_bearer(&mut self, token: &str) -> anyhow::Result<()> {
        self.bearer = Some(HeaderValue::from_str(&format!("Bearer {token}"))?);
        Ok(())
    }

    /// `tools/call` of `tool`, returning its result; a result with `isError` is an error.
    pub async fn call(&self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let message = answer(self.send(&request).await?).await?;
        let result = message
            .get("result")
            .cloned()
            .with_context(|| format!("no result: {message}"))?;
        if result["isError"] == json!(true) {
            bail!("{tool} failed: {result}");
        }
        Ok(result)
    }

    /// Ends the session (DELETE), as a well-behaved client does.
    pub async fn close(self) -> anyhow::Result<()> {
        let mut request = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", self.session.clone());
        if let Some(bearer) = &self.bearer {
            request = request.header(AUTHORIZATION, bearer.clone());
        }
        request.send().await?;
        Ok(())
    }

    async fn send(&self, message: &Value) -> anyhow::Result<reqwest::Response> {
        post(
            &self.http,
            &self.url,
            self.bearer.as_ref(),
            Some(&self.session),
            message,
        )
        .await
    }
}

/// An HTTP client with Nagle off, as toolshelf's own client has it: the comparison is of the
/// two paths, not of socket options. It drops a connection idle for 4 s: the servers close
/// theirs after 5 s (Node's `keepAliveTimeout`: server-everything's), 30 s (hyper's header
/// timeout, the fixture's) or 60 s (toolshelf's `connectionIdleTimeout`), and a request sent on
/// a connection as its server closes it is reset (seen once in CI, on server-everything's). On a
/// loaded machine a session waits that long between two rounds of the benchmark.
pub fn http_client() -> anyhow::Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_idle_timeout(std::time::Duration::from_secs(4));
    Ok(client.build()?)
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    bearer: Option<&HeaderValue>,
    session: Option<&HeaderValue>,
    message: &Value,
) -> anyhow::Result<reqwest::Response> {
    let mut request = http
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(serde_json::to_vec(message)?);
    if let Some(bearer) = bearer {
        request = request.header(AUTHORIZATION, bearer.clone());
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session.clone());
    }
    let response = request.send().await?;
    if !response.status().is_success() {
        bail!("HTTP {}", response.status());
    }
    Ok(response)
}

/// The JSON-RPC message of a response: its JSON body, or the last `data` of its event stream.
async fn answer(response: reqwest::Response) -> anyhow::Result<Value> {
    let text = response.text().await?;
    let body = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|data| !data.is_empty())
        .unwrap_or(&text);
    Ok(serde_json::from_str(body)?)
}

/// An MCP server serving streamable HTTP on a free loopback port, stopped when dropped.
pub struct HttpServer {
    _process: tokio::process::Child,
    pub url: String,
}

impl HttpServer {
    /// server-everything in streamable-HTTP mode.
    pub async fn start(bin: &Path) -> anyhow::Result<Self> {
        let mut command = tokio::process::Command::new(bin.join("mcp-server-everything"));
        command.arg("streamableHttp");
        Self::spawn(command, |command, port| {
            command.env("PORT", port.to_string());
        })
        .await
    }

    /// The fixture in its HTTP mode (rmcp's streamable HTTP server).
    pub async fn fixture(fixture: &Path) -> anyhow::Result<Self> {
        Self::spawn(tokio::process::Command::new(fixture), |command, port| {
            command.arg("--http").arg(port.to_string());
        })
        .await
    }

    /// The fixture over stdio behind the HTTP floor (`toolshelf-floor http`).
    pub async fn floor(floor: &Path, fixture: &Path) -> anyhow::Result<Self> {
        Self::spawn(tokio::process::Command::new(floor), |command, port| {
            command
                .arg("http")
                .arg(format!("127.0.0.1:{port}"))
                .arg("--")
                .arg(fixture);
        })
        .await
    }

    pub fn pid(&self) -> Option<u32> {
        self._process.id()
    }

    async fn spawn(
        mut command: tokio::process::Command,
        listen_on: impl FnOnce(&mut tokio::process::Command, u16),
    ) -> anyhow::Result<Self> {
        let port = launch::free_port();
        listen_on(&mut command, port);
        let process = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        if !launch::until_listening(port, Duration::from_secs(30)).await {
            anyhow::bail!("the HTTP server did not listen within 30 s");
        }
        Ok(Self {
            _process: process,
            url: format!("http://127.0.0.1:{port}/mcp"),
        })
    }
}
