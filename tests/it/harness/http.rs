//! `toolshelf serve --http` for the tests: started on a free loopback port and ready, an HTTP
//! client, and the Python clients that speak to it.

use std::{path::Path, process::Stdio, time::Duration};

use crate::harness::{DEADLINE, free_port};

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
    let mut command = crate::harness::toolshelf();
    match token {
        "" => command.env_remove("TOOLSHELF_TOKEN"),
        token => command.env("TOOLSHELF_TOKEN", token),
    };
    let process = command
        .args(["serve", "--config"])
        .arg(config_path)
        .arg("--http")
        .arg(format!("127.0.0.1:{port}"))
        .args(more)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolshelf");
    wait_healthy(port).await;
    (process, port)
}

/// Waits until `GET /healthz` on `port` answers 200.
pub(crate) async fn wait_healthy(port: u16) {
    let health = format!("http://127.0.0.1:{port}/healthz");
    tokio::time::timeout(DEADLINE, async {
        while !http()
            .get(&health)
            .send()
            .await
            .is_ok_and(|response| response.status().is_success())
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("/healthz answers in time");
}

pub(crate) fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}
