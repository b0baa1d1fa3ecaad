//! `toolshelf serve --http` for the tests: started on a free loopback port and ready, an HTTP
//! client, and the Python clients that speak to it.

use std::{path::Path, process::Stdio};

use crate::harness::{DEADLINE, free_port, launch};

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
