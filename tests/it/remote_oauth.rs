//! A remote server that signs its users in with OAuth: `toolshelf login` once, tokens renewed
//! by themselves and shared between toolshelf processes, `toolshelf logout` revoking them.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{DEADLINE, RawClient, config, opened_tools, write_config};
use crate::remote::{HttpServer, result_text, use_tool};

/// Runs `toolshelf login` as a user would: reads the authorization URL it prints and opens it
/// (the test's authorization server redirects at once to toolshelf's loopback callback).
async fn log_in(config: &std::path::Path, data: &std::path::Path, target: &str) -> String {
    use tokio::io::AsyncBufReadExt;
    let mut login = crate::harness::toolshelf()
        .args(["login", "--no-browser", "--config"])
        .arg(config)
        .arg(target)
        .env("XDG_DATA_HOME", data)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run toolshelf login");
    let mut lines = tokio::io::BufReader::new(login.stderr.take().expect("stderr")).lines();
    let mut said = String::new();
    let finished = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.expect("read") {
            said.push_str(&line);
            said.push('\n');
            if line.starts_with("http") {
                open_in_browser(&line).await;
            }
        }
        login.wait().await.expect("login exits")
    })
    .await
    .expect("the login ends in time");
    assert!(finished.success(), "{said}");
    said
}

/// What a browser does with the authorization URL here: follows the redirect to the callback.
async fn open_in_browser(url: &str) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::get(url)
        .await
        .expect("the authorization URL answers");
    assert!(response.status().is_success(), "{}", response.status());
    let page = response.text().await.expect("the callback's page");
    assert!(page.contains("logged in"), "{page}");
}

/// Makes the OAuth server forget its tokens (`query`: which).
async fn revoke(server: &HttpServer, query: &str) {
    let url = format!("http://127.0.0.1:{}/revoke{query}", server.port);
    let response = reqwest::Client::new()
        .post(url)
        .send()
        .await
        .expect("revoke");
    assert!(response.status().is_success());
}

#[tokio::test]
async fn an_oauth_server_is_logged_in_to_once_and_its_tokens_renew_by_themselves() {
    use std::os::unix::fs::PermissionsExt;
    let server = HttpServer::oauth_protected("2").await;
    let servers = json!({"secure": {"url": server.url(), "auth": "oauth"}});
    let (dir, path) = write_config(&config(&[("mix", "", servers)]));
    let data = tempfile::tempdir().expect("data folder");
    let log = tempfile::NamedTempFile::new().expect("log file");
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--config"])
        .arg(&path)
        .env("RUST_LOG", "debug")
        .env("XDG_DATA_HOME", data.path());
    let mut shelf = RawClient::spawn_logged(
        command,
        None,
        "2025-06-18",
        log.reopen().expect("log").into(),
    )
    .await;

    // Nobody has logged in: the open says at once which command the user must run.
    let opened = shelf.open(1, "mix").await.to_string();
    let login = format!("toolshelf login --config '{}' mix/secure", path.display());
    assert!(opened.contains("needs an OAuth login"), "{opened}");
    assert!(opened.contains(&login), "{opened}");

    let said = log_in(&path, data.path(), "mix/secure").await;
    assert!(said.contains("Logged in to mix/secure"), "{said}");
    // docs/remote-servers.md shows a login; its fixed words are these.
    for words in [
        "open this URL in a browser:",
        "(up to 5 minutes)…",
        "(readable by you only) and are renewed by themselves; `toolshelf logout --config",
    ] {
        assert!(said.contains(words), "{said}");
        crate::docs::assert_quoted(words);
    }
    let folder = data.path().join("toolshelf/oauth");
    let files: Vec<_> = std::fs::read_dir(&folder)
        .expect("the login folder")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&folder), 0o700);

    // The running toolshelf uses the new login when the agent opens the toolbox again.
    let opened_again = shelf.open(2, "mix").await;
    let listed: Value = serde_json::from_str(&result_text(&opened_again)).expect("JSON");
    let tools = opened_tools(&listed);
    assert!(
        tools.iter().any(|tool| tool["name"] == "whoami"),
        "{opened_again}"
    );
    let whoami = || use_tool("secure", "whoami", json!({}));
    let (_, answer) = shelf.request(6, "tools/call", whoami()).await;
    let first: Value =
        serde_json::from_str(&result_text(&answer)).unwrap_or_else(|_| panic!("{answer}"));
    assert_eq!(first["refreshes"], json!(0), "{answer}");

    // A second toolshelf on the same config (another MCP client) shares the login.
    let mut other = crate::harness::toolshelf();
    other
        .args(["serve", "--config"])
        .arg(&path)
        .env("RUST_LOG", "warn")
        .env("XDG_DATA_HOME", data.path());
    let mut other = RawClient::spawn(other, None, "2025-06-18").await;
    other.open(1, "mix").await;

    // The token expires: both renew it before their calls, without the user, one after the
    // other (the server accepts each refresh token once).
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let (mine, theirs) = tokio::join!(
        shelf.request(3, "tools/call", whoami()),
        other.request(2, "tools/call", whoami()),
    );
    let second: Value = serde_json::from_str(&result_text(&mine.1)).expect("whoami");
    let parallel: Value = serde_json::from_str(&result_text(&theirs.1)).expect("whoami");
    let refreshes = second["refreshes"]
        .as_u64()
        .max(parallel["refreshes"].as_u64());
    assert!(refreshes >= Some(1), "{second} {parallel}");
    assert_ne!(second["token"], first["token"]);

    // The server forgets its tokens: the refused one is renewed and the call sent again.
    revoke(&server, "").await;
    let (_, answer) = shelf.request(4, "tools/call", whoami()).await;
    let third: Value = serde_json::from_str(&result_text(&answer)).expect("whoami");
    assert!(third["refreshes"].as_u64() > refreshes, "{answer}");

    // Refresh tokens gone too: the call fails with what the user must do.
    revoke(&server, "?refresh=1").await;
    let (_, answer) = shelf.request(5, "tools/call", whoami()).await;
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert!(answer.to_string().contains(&login), "{answer}");

    // No token reached the log or the agent.
    let logged = std::fs::read_to_string(log.path()).expect("log");
    assert!(logged.contains("secure"), "the log has the server's events");
    assert!(!logged.contains("tok-"), "{logged}");
    assert!(!opened.contains("tok-") && !answer.to_string().contains("tok-"));

    // Logging out revokes the tokens at the authorization server (RFC 7009), then removes them.
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&files[0]).expect("the login file")).expect("JSON");
    let tokens = &saved["credentials"]["token_response"];
    let output = crate::harness::toolshelf_std()
        .args(["logout", "--config"])
        .arg(&path)
        .arg("mix/secure")
        .env("XDG_DATA_HOME", data.path())
        .output()
        .expect("logout");
    assert!(output.status.success(), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("revoked the tokens at the authorization server"),
        "{said}"
    );
    assert!(!said.contains("tok-"), "{said}");
    let logged_out = said
        .split_once("Logged out of mix/secure: ")
        .and_then(|(_, rest)| rest.split_once(" /"))
        .map(|(done, _)| done)
        .unwrap_or_default();
    assert!(logged_out.ends_with("and removed"), "{said}");
    crate::docs::assert_quoted(&format!("Logged out of work/linear: {logged_out}"));
    assert!(!files[0].exists(), "logout removes the tokens");
    let revocations = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/revocations", server.port))
        .send()
        .await
        .expect("revocations")
        .text()
        .await
        .expect("a body");
    let revocations: Value = serde_json::from_str(&revocations).expect("JSON");
    assert_eq!(
        revocations,
        json!([
            {"token": tokens["refresh_token"], "hint": "refresh_token", "client": saved["client_id"]},
            {"token": tokens["access_token"], "hint": "access_token", "client": saved["client_id"]},
        ]),
        "{saved}"
    );
    drop(dir);
}
