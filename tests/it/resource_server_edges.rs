//! `serve --http --oauth-issuer` at its edges: flags and rules that cannot work are refused at
//! start, and an issuer that cannot be reached gets its clients a 503 that says so.

use serde_json::json;

use crate::{
    harness::{
        authorization::{mint, new_keys},
        http::http,
        write_config,
    },
    resource_server::{now, serve, team},
};

/// Flags that cannot work, and rules that name claims without an issuer to check them, are
/// refused at start, each problem on its line, before anything listens.
#[test]
fn oauth_flags_and_rules_that_cannot_work_are_refused_at_start() {
    let (_dir, path) = write_config(&team());
    let path = path.to_str().expect("utf-8");
    let run = |args: &[&str]| {
        crate::harness::refused_at_start(&[&["serve", "--config", path], args].concat())
    };
    let said = run(&[
        "--http",
        "0.0.0.0:0",
        "--oauth-issuer",
        "http://id.example.com",
    ]);
    assert!(
        said.contains("--oauth-issuer http://id.example.com: give an https:// URL (http:// only on a loopback address)"),
        "{said}"
    );
    assert!(
        said.contains("--oauth-issuer on 0.0.0.0:0, which is not a loopback address, needs --oauth-resource URL"),
        "{said}"
    );
    let tokens = tempfile::tempdir().expect("dir");
    std::fs::write(tokens.path().join("alice"), "alice-token").expect("write");
    let dir = tokens.path().to_str().expect("utf-8");
    let said = run(&["--http", "127.0.0.1:0", "--tokens-dir", dir]);
    let line = said
        .lines()
        .find(|line| line.contains("subjects, groups or scopes"))
        .unwrap_or_else(|| panic!("{said}"));
    crate::docs::assert_quoted(line);
}

/// An issuer that cannot be reached: toolshelf starts all the same, and a token of that issuer
/// gets 503 with `Retry-After` and what is wrong, at once (it does not wait on the issuer again
/// for every request).
#[tokio::test]
async fn an_unreachable_issuer_gets_a_503_that_says_so() {
    let dir = tempfile::tempdir().expect("dir");
    let keys = new_keys(dir.path(), "a.json").await;
    let issuer = format!("http://127.0.0.1:{}", crate::harness::free_port());
    let served = serve(&issuer, &[]).await;
    let claims = json!({"iss": issuer, "aud": served.resource, "sub": "alice",
        "exp": now() + 300});
    let token = mint(&keys, &claims, &json!({})).await;
    for _ in 0..2 {
        let response = http()
            .post(&served.resource)
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(crate::harness::http::initialize())
            .send()
            .await
            .expect("POST");
        assert_eq!(response.status().as_u16(), 503);
        assert_eq!(response.headers()["retry-after"], "5");
        let body = response.text().await.expect("body");
        assert!(
            body.starts_with("toolshelf cannot fetch its authorization server's keys to check the token: try again shortly"),
            "{body}"
        );
        crate::docs::assert_quoted(body.trim());
    }
}
