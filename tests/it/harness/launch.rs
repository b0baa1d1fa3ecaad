//! Starting the processes a run talks to and knowing when they are ready: shared by the tests
//! and the benchmark (`benches/overhead` includes this file), so both start `serve --http` and
//! wait for a server the same way. Only std, tokio and reqwest: nothing of either harness.

use std::{path::Path, process::Stdio, time::Duration};

/// A loopback port free a moment ago.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("a bound address").port()
}

/// `command` (a toolshelf) made into `serve --config CONFIG --http 127.0.0.1:PORT MORE…`,
/// requiring `token` when there is one, with nothing on stdin or stdout, stopped when dropped.
pub fn serve_http(
    mut command: tokio::process::Command,
    config: &Path,
    port: u16,
    token: Option<&str>,
    more: &[&str],
) -> tokio::process::Command {
    match token {
        Some(token) => command.env("TOOLSHELF_TOKEN", token),
        None => command.env_remove("TOOLSHELF_TOKEN"),
    };
    command
        .args(["serve", "--config"])
        .arg(config)
        .arg("--http")
        .arg(format!("127.0.0.1:{port}"))
        .args(more)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true);
    command
}

/// Whether `GET /healthz` on `port` answered 200 within `within`.
pub async fn until_healthy(http: &reqwest::Client, port: u16, within: Duration) -> bool {
    let health = format!("http://127.0.0.1:{port}/healthz");
    let healthy = async {
        while !http
            .get(&health)
            .send()
            .await
            .is_ok_and(|response| response.status().is_success())
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(within, healthy).await.is_ok()
}

/// Whether something accepted a connection on loopback `port` within `within`.
pub async fn until_listening(port: u16, within: Duration) -> bool {
    let address = format!("127.0.0.1:{port}");
    let listening = async {
        while tokio::net::TcpStream::connect(&address).await.is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(within, listening).await.is_ok()
}
