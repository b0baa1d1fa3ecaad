//! The streamable-HTTP row of the benchmark: server-everything's `echo`, served over HTTP on
//! loopback, called directly with an HTTP client and through toolshelf (the server as its remote
//! child), in alternating blocks like every other comparison.

use std::{path::Path, process::Stdio, time::Duration};

use anyhow::{Context as _, bail};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};

/// A minimal MCP client over streamable HTTP: one session, one request at a time.
pub struct DirectHttp {
    http: reqwest::Client,
    url: String,
    session: HeaderValue,
    next_id: u64,
}

impl DirectHttp {
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        // Nagle off, as toolshelf's own client has it: the comparison is of the two paths.
        let http = reqwest::Client::builder().tcp_nodelay(true).build()?;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}});
        let response = post(&http, url, None, &init).await?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .cloned()
            .context("the server set no session")?;
        answer(response).await?;
        let mut client = Self {
            http,
            url: url.to_owned(),
            session,
            next_id: 1,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post(
            &client.http,
            &client.url,
            Some(&client.session),
            &initialized,
        )
        .await?;
        client.next_id = 1;
        Ok(client)
    }

    /// `tools/call` of `tool`, returning its result.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let response = post(&self.http, &self.url, Some(&self.session), &request).await?;
        let message = answer(response).await?;
        message
            .get("result")
            .cloned()
            .with_context(|| format!("no result: {message}"))
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&HeaderValue>,
    message: &Value,
) -> anyhow::Result<reqwest::Response> {
    let mut request = http
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(serde_json::to_vec(message)?);
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

/// server-everything in streamable-HTTP mode on a free loopback port, stopped when dropped.
pub struct HttpServer {
    _process: tokio::process::Child,
    pub url: String,
}

impl HttpServer {
    pub async fn start(bin: &Path) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let process = tokio::process::Command::new(bin.join("mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let address = format!("127.0.0.1:{port}");
        tokio::time::timeout(Duration::from_secs(30), async {
            while tokio::net::TcpStream::connect(&address).await.is_err() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .context("server-everything did not listen within 30 s")?;
        Ok(Self {
            _process: process,
            url: format!("http://{address}/mcp"),
        })
    }
}
