//! The parts of the `toolshelf serve --http` rows: toolshelf serving streamable HTTP on
//! loopback, and agent sessions opened and driven by the same HTTP client that calls a server
//! directly.

use std::{
    path::Path,
    process::Stdio,
    time::{Duration, Instant},
};

use anyhow::Context as _;
use serde_json::Value;

use super::{
    http_child::{DirectHttp, http_client},
    launch,
};

/// The bearer token the benchmark's toolshelf requires: the figures include checking it.
pub const TOKEN: &str = "benchmark-token";

/// `toolshelf serve --http` on a free loopback port, stopped when dropped.
pub struct ServedHttp {
    _process: tokio::process::Child,
    pub url: String,
    pub pid: u32,
}

impl ServedHttp {
    pub async fn start(toolshelf: &Path, config: &Path) -> anyhow::Result<Self> {
        Self::start_with(toolshelf, config, &[]).await
    }

    /// As `start`, with `more` arguments after `--no-cache`.
    pub async fn start_with(
        toolshelf: &Path,
        config: &Path,
        more: &[&str],
    ) -> anyhow::Result<Self> {
        let port = launch::free_port();
        let command = tokio::process::Command::new(toolshelf);
        let args = [&["--no-cache"], more].concat();
        let process = launch::serve_http(command, config, port, Some(TOKEN), &args)
            .env("RUST_LOG", "error")
            .stderr(Stdio::null())
            .spawn()?;
        let pid = process.id().context("toolshelf has no pid")?;
        if !launch::until_healthy(&http_client()?, port, Duration::from_secs(30)).await {
            anyhow::bail!("toolshelf serve --http was not healthy within 30 s");
        }
        Ok(Self {
            _process: process,
            url: format!("http://127.0.0.1:{port}/mcp"),
            pid,
        })
    }
}

/// Opens `count` sessions one after another, each over a connection of its own (agents in
/// parallel), or all over one pool of connections (`shared`: the sessions' own cost, without
/// the connections'); returns them and how long opening took.
pub async fn open_sessions(
    url: &str,
    bearer: Option<&str>,
    count: usize,
    shared: bool,
) -> anyhow::Result<(Vec<DirectHttp>, Duration)> {
    let pool = http_client()?;
    let mut sessions = Vec::with_capacity(count);
    let began = Instant::now();
    for _ in 0..count {
        let http = if shared { pool.clone() } else { http_client()? };
        sessions.push(DirectHttp::connect_with(http, url, bearer).await?);
    }
    Ok((sessions, began.elapsed()))
}

/// Ends every session.
pub async fn close_all(sessions: Vec<DirectHttp>) {
    futures::future::join_all(sessions.into_iter().map(DirectHttp::close)).await;
}

/// Calls per second of `sessions` agents working at once, each calling `tool` `per_session`
/// times one call after another (an agent waits for a result before its next call).
pub async fn sessions_rate(
    sessions: &[DirectHttp],
    per_session: usize,
    tool: &str,
    arguments: &Value,
) -> anyhow::Result<f64> {
    let began = Instant::now();
    futures::future::try_join_all(sessions.iter().map(|session| async move {
        for _ in 0..per_session {
            session.call(tool, arguments.clone()).await?;
        }
        anyhow::Ok(())
    }))
    .await?;
    Ok((sessions.len() * per_session) as f64 / began.elapsed().as_secs_f64())
}
