//! `serve --http` with named tokens (`--tokens-dir`): each token is a caller, a session belongs
//! to the caller that began it (to another caller it does not exist), the access log names the
//! caller and never a token, a bad tokens folder is refused at start with every problem, and a
//! refusal sent before the request's body came closes its connection and says so.

use std::process::Stdio;

use serde_json::json;

use crate::harness::{
    config, fixture,
    http::{RawSession, serve_logged},
    toolshelf_std, write_config,
};

const ALICE: &str = "alice-t0ken-0123456789";
const BOB: &str = "bob-t0ken-9876543210";
const SHARED: &str = "shared-t0ken-5555555555";

fn list(id: u64) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}

#[tokio::test]
async fn each_token_is_a_caller_and_a_session_is_its_callers_alone() {
    let tokens = tempfile::tempdir().expect("dir");
    std::fs::write(tokens.path().join("alice"), format!("{ALICE}\n")).expect("write");
    std::fs::write(tokens.path().join("bob"), BOB).expect("write");
    let (_config_dir, path) = write_config(&config(&[(
        "dev",
        "Fixture",
        json!({"fixture": fixture(&[])}),
    )]));
    let log = tempfile::NamedTempFile::new().expect("log");
    let dir = tokens.path().to_str().expect("utf-8");
    let (_process, port) = serve_logged(
        &path,
        SHARED,
        &["--tokens-dir", dir, "--access-log"],
        Stdio::from(log.reopen().expect("log")),
    )
    .await;

    let alice = RawSession::open_with(port, Some(ALICE)).await;
    assert_eq!(alice.post(list(2)).await.status, 200);

    // Bob, with his own valid token, on Alice's session: no such session, whatever he asks.
    let mut bob_on_alice = RawSession {
        url: alice.url.clone(),
        id: alice.id.clone(),
        token: Some(BOB.to_owned()),
    };
    let refused = bob_on_alice.post(list(3)).await;
    assert_eq!(
        (refused.status, refused.body.as_str()),
        (404, "Not Found: Session not found")
    );
    let ended = crate::harness::http::http()
        .delete(&alice.url)
        .bearer_auth(BOB)
        .header("mcp-session-id", &alice.id)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(ended.status().as_u16(), 404);
    assert!(
        ended
            .text()
            .await
            .expect("body")
            .starts_with("Not Found: no session has this id"),
    );
    // Alice's session is untouched; Bob's own works; the single token is the caller `default`.
    assert_eq!(alice.post(list(4)).await.status, 200);
    bob_on_alice = RawSession::open_with(port, Some(BOB)).await;
    assert_eq!(bob_on_alice.post(list(5)).await.status, 200);
    let shared = RawSession::open_with(port, Some(SHARED)).await;
    assert_eq!(shared.post(list(6)).await.status, 200);

    // Alice's calls are counted under her name in /metrics (token names only: a bounded label).
    alice
        .post(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "open_toolbox", "arguments": {"toolbox": "dev"}}}))
        .await;
    let echoed = alice
        .post(crate::harness::http::use_tool_request(
            9,
            "echo",
            json!({}),
            None,
        ))
        .await;
    assert_eq!(echoed.status, 200, "{}", echoed.body);
    let metrics = crate::harness::http::metrics(port, ALICE).await;
    assert!(
        metrics.contains(r#"toolshelf_caller_calls_total{caller="alice"} 1"#),
        "{metrics}"
    );
    assert!(!metrics.contains(r#"caller="bob""#), "{metrics}");

    // No token of theirs: 401, naming where tokens come from.
    let stranger = RawSession {
        url: alice.url.clone(),
        id: String::new(),
        token: Some("alice-t0ken".to_owned()),
    };
    let unknown = stranger.post(list(7)).await;
    assert_eq!(unknown.status, 401);
    assert!(unknown.body.contains("--tokens-dir"), "{}", unknown.body);

    let logged = crate::harness::eventually("the access log names every caller", || async {
        let text = std::fs::read_to_string(log.path()).unwrap_or_default();
        ["caller=alice", "caller=bob", "caller=default"]
            .iter()
            .all(|caller| text.contains(caller))
            .then_some(text)
    })
    .await;
    for token in [ALICE, BOB, SHARED] {
        assert!(!logged.contains(token), "a token reached the log");
    }
}

#[test]
fn a_bad_tokens_folder_is_refused_at_start_with_every_problem() {
    let tokens = tempfile::tempdir().expect("dir");
    std::fs::write(tokens.path().join("alice"), "same-t0ken-value").expect("write");
    std::fs::write(tokens.path().join("carol"), "same-t0ken-value").expect("write");
    std::fs::write(tokens.path().join("dave smith"), "another").expect("write");
    let (_config_dir, path) = write_config(&config(&[(
        "dev",
        "Fixture",
        json!({"fixture": fixture(&[])}),
    )]));
    let run = toolshelf_std()
        .args(["serve", "--config"])
        .arg(&path)
        .args(["--http", "127.0.0.1:0", "--tokens-dir"])
        .arg(tokens.path())
        .env_remove("TOOLSHELF_TOKEN")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("callers 'alice' and 'carol' have the same token"),
        "{stderr}"
    );
    assert!(stderr.contains("dave smith: a caller's name"), "{stderr}");
    assert!(!stderr.contains("same-t0ken-value"), "{stderr}");
}

/// A refusal sent before the request's body came says `Connection: close` and closes: a client
/// that writes headers and body apart (httpx, so every Python SDK client: an OAuth client's
/// first request is refused) would otherwise send its retry into a socket the server closes.
#[tokio::test]
async fn a_refusal_before_the_body_came_says_the_connection_closes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_config_dir, path) = crate::harness::http::fixture_config();
    let (_process, port) = crate::harness::http::serve(&path, SHARED).await;
    let body = list(1).to_string();
    for token in ["", "wrong-t0ken-000000000000"] {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("headers");
        let mut answer = vec![0; 4096];
        let read =
            tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut answer))
                .await
                .expect("answered in time")
                .expect("read");
        let answer = String::from_utf8_lossy(&answer[..read]).to_lowercase();
        assert!(answer.starts_with("http/1.1 401"), "{answer}");
        assert!(answer.contains("\r\nconnection: close\r\n"), "{answer}");
        // The body comes late; the server reads no request after the refusal.
        let _ = stream.write_all(body.as_bytes()).await;
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            stream.read_to_end(&mut rest),
        )
        .await
        .expect("the server closes the connection");
        assert!(
            !String::from_utf8_lossy(&rest).contains("HTTP/1.1"),
            "{rest:?}"
        );
    }
}
