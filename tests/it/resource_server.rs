//! `serve --http --oauth-issuer`: toolshelf as an OAuth resource server in front of a real
//! authorization server (oidc-provider, `harness::authorization`). Its metadata and 401 lead a
//! client to the issuer; its tokens name callers, whose groups and scopes the access rules
//! name; every forged token is refused with its own reason and nothing of the token; a key
//! rotation is followed; the Python SDK's OAuth client finds its way alone.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::{
    authorization::{AuthorizationServer, joined_keys, mint, new_keys},
    config, fixture,
    http::{RawSession, http, serve_logged},
    python::agent,
    write_config,
};

/// `eng` for group eng, whose tool `sleep` only scope `other` reaches; `ops` for group ops.
pub(crate) fn team() -> Value {
    let mut config = config(&[
        ("eng", "Engineering", json!({"fixture": fixture(&[])})),
        ("ops", "Operations", json!({"fixture": fixture(&[])})),
    ]);
    config["toolboxes"]["eng"]["access"] = json!({"groups": ["eng"]});
    config["toolboxes"]["ops"]["access"] = json!({"groups": ["ops"]});
    config["toolboxes"]["eng"]["mcpServers"]["fixture"]["tools"] =
        json!({"sleep": {"access": {"scopes": ["other"]}}});
    config
}

pub(crate) struct Served {
    port: u16,
    pub(crate) resource: String,
    /// toolshelf's log, at debug with the access log on.
    log: tempfile::NamedTempFile,
    _process: tokio::process::Child,
    _config: tempfile::TempDir,
}

pub(crate) async fn serve(issuer: &str, more: &[&str]) -> Served {
    let (config, path) = write_config(&team());
    let mut args = vec![
        "--oauth-issuer",
        issuer,
        "--access-log",
        "--log-level",
        "debug",
    ];
    args.extend(more);
    let log = tempfile::NamedTempFile::new().expect("log");
    let stderr = Stdio::from(log.reopen().expect("log"));
    let (process, port) = serve_logged(&path, "", &args, stderr).await;
    Served {
        port,
        resource: format!("http://127.0.0.1:{port}/mcp"),
        log,
        _process: process,
        _config: config,
    }
}

/// The status, `WWW-Authenticate` and body of an `initialize` with `token`.
async fn knock(served: &Served, token: Option<&str>) -> (u16, String, String) {
    let mut request = http()
        .post(&served.resource)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(crate::harness::http::initialize());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("POST");
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().expect("ascii").to_owned())
        .unwrap_or_default();
    let status = response.status().as_u16();
    (status, challenge, response.text().await.expect("body"))
}

/// The JSON-RPC answer to `message`, sent as JSON or as one SSE event.
async fn ask(session: &RawSession, message: Value) -> Value {
    let answer = session.post(message).await;
    let data = answer
        .body
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("data: "));
    serde_json::from_str(data.unwrap_or(&answer.body)).expect("JSON")
}

async fn description(session: &RawSession) -> String {
    let listed = ask(
        session,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let told = &listed["result"]["tools"][0]["description"];
    told.as_str().unwrap_or_default().to_owned()
}

async fn opened(session: &RawSession, toolbox: &str) -> String {
    let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "open_toolbox", "arguments": {"toolbox": toolbox}}});
    let answer = ask(session, message).await;
    let text = &answer["result"]["content"][0]["text"];
    text.as_str().unwrap_or_default().to_owned()
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_secs()
}

#[tokio::test]
async fn access_tokens_of_a_real_issuer_name_callers_and_forged_ones_are_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let key_a = new_keys(dir.path(), "a.json").await;
    let key_b = new_keys(dir.path(), "b.json").await;
    let issuer = AuthorizationServer::start("http://127.0.0.1/unused", &key_a, None).await;
    let served = serve(&issuer.issuer, &[]).await;
    let resource = served.resource.clone();

    // Without a token: 401 naming the metadata, which names the issuer.
    let (status, challenge, body) = knock(&served, None).await;
    crate::docs::assert_quoted(body.split_once(" names ").expect("the URL").1.trim());
    let metadata_url = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        served.port
    );
    assert_eq!(status, 401);
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata_url}\"")
    );
    let metadata: Value = serde_json::from_slice(
        &http()
            .get(&metadata_url)
            .send()
            .await
            .expect("GET")
            .bytes()
            .await
            .expect("body"),
    )
    .expect("JSON");
    assert_eq!(metadata["resource"], json!(resource));
    assert_eq!(metadata["authorization_servers"], json!([issuer.issuer]));

    // Alice (group eng) sees eng and not ops; the tool that needs scope `other` only with it.
    let alice = issuer.token("alice", "tools", &resource).await;
    let session = RawSession::open_with(served.port, Some(&alice)).await;
    let told = description(&session).await;
    assert!(told.contains("eng") && !told.contains("ops"), "{told}");
    let ops = opened(&session, "ops").await;
    let nope = opened(&session, "nope").await;
    assert_eq!(ops.replace("ops", "nope"), nope);
    let eng = opened(&session, "eng").await;
    assert!(eng.contains(r#""echo""#) && !eng.contains("sleep"), "{eng}");
    let wider = issuer.token("alice", "tools other", &resource).await;
    let session = RawSession::open_with(served.port, Some(&wider)).await;
    assert!(opened(&session, "eng").await.contains("sleep"));
    let echo =
        json!({"tool": {"toolbox": "eng", "server": "fixture", "name": "echo"}, "arguments": {}});
    let echoed = ask(
        &session,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "use_tool", "arguments": echo}}),
    )
    .await;
    assert_eq!(
        echoed["result"]["content"][0]["text"],
        json!("{}"),
        "{echoed}"
    );
    // Bob (group ops) the other way round.
    let bob = issuer.token("bob", "tools", &resource).await;
    let session = RawSession::open_with(served.port, Some(&bob)).await;
    let told = description(&session).await;
    assert!(told.contains("ops") && !told.contains("eng"), "{told}");

    // Forged tokens, signed with the issuer's own key: one thing wrong in each.
    let claims = |change: Value| {
        let mut claims = json!({"iss": issuer.issuer, "aud": resource, "sub": "alice",
            "groups": ["eng"], "scope": "tools", "exp": now() + 300, "iat": now()});
        for (key, value) in change.as_object().expect("object") {
            claims[key] = value.clone();
        }
        claims
    };
    let good = mint(&key_a, &claims(json!({})), &json!({})).await;
    assert_eq!(
        knock(&served, Some(&good)).await.0,
        200,
        "the forging itself works"
    );
    let [header, _, signature] =
        <[&str; 3]>::try_from(good.split('.').collect::<Vec<_>>()).expect("three parts");
    let encode = |value: Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
    };
    let tampered = format!(
        "{header}.{}.{signature}",
        encode(claims(json!({"groups": ["ops"]})))
    );
    let hs256 = format!(
        "{}.{}.{signature}",
        encode(json!({"alg": "HS256", "typ": "at+jwt"})),
        good.split('.').nth(1).expect("payload")
    );
    let cases = [
        (
            mint(
                &key_a,
                &claims(json!({"iss": "http://127.0.0.1:9/"})),
                &json!({}),
            )
            .await,
            "the token's issuer is not an authorization server toolshelf trusts",
        ),
        (
            mint(
                &key_a,
                &claims(json!({"aud": "http://elsewhere/mcp"})),
                &json!({}),
            )
            .await,
            "the token is not for this resource",
        ),
        (
            mint(&key_a, &claims(json!({"exp": now() - 120})), &json!({})).await,
            "the token expired: get a new one",
        ),
        (
            mint(&key_a, &claims(json!({"nbf": now() + 600})), &json!({})).await,
            "the token is not valid yet (nbf)",
        ),
        (
            tampered,
            "the token's signature does not verify with its issuer's key",
        ),
        (
            mint(&key_a, &claims(json!({})), &json!({"alg": "none"})).await,
            "the token is not signed (alg none)",
        ),
        (
            hs256,
            "the token is signed with HS256, which toolshelf does not accept",
        ),
        (
            mint(&key_b, &claims(json!({})), &json!({})).await,
            "the token is signed with a key its issuer does not publish",
        ),
        (
            "not-a-jwt".to_owned(),
            "the bearer token is not a JWT access token",
        ),
    ];
    for (token, reason) in cases {
        let (status, challenge, body) = knock(&served, Some(&token)).await;
        assert_eq!(status, 401, "{reason}: {body}");
        if !reason.contains("resource") {
            crate::docs::assert_quoted(body.trim());
        }
        assert!(body.starts_with(reason), "{reason}: {body}");
        assert!(
            challenge.starts_with(&format!("Bearer resource_metadata=\"{metadata_url}\", error=\"invalid_token\", error_description=\"{reason}")),
            "{challenge}"
        );
        for part in token.split('.').filter(|part| part.len() > 8) {
            assert!(!body.contains(part) && !challenge.contains(part), "{body}");
        }
    }

    // The issuer rotates to key B (A still published): toolshelf fetches its keys anew for
    // the new kid (at most once a second: the refusal of B above just fetched them).
    let port = issuer.port;
    drop(issuer);
    let rotated = joined_keys(dir.path(), "ba.json", &[&key_b, &key_a]);
    let issuer = AuthorizationServer::start("http://127.0.0.1/unused", &rotated, Some(port)).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let signed_by_b = issuer.token("alice", "tools", &resource).await;
    assert_eq!(knock(&served, Some(&signed_by_b)).await.0, 200);
    assert_eq!(knock(&served, Some(&good)).await.0, 200, "A still verifies");

    // /metrics counts no call by subject (subjects are unbounded); tokens' names only.
    let metrics = crate::harness::http::metrics(served.port, &signed_by_b).await;
    assert!(metrics.contains("toolshelf_calls_total{"), "{metrics}");
    assert!(!metrics.contains(r#"caller=""#), "{metrics}");

    // The log names callers by subject, and holds nothing of any token.
    let log = std::fs::read_to_string(served.log.path()).expect("log");
    assert!(
        log.contains("caller=alice") && log.contains("caller=bob"),
        "{log}"
    );
    for token in [&alice, &wider, &bob, &good, &signed_by_b] {
        let signature = token.rsplit('.').next().expect("a signature");
        assert!(!log.contains(signature), "a token in the log");
    }
}

#[tokio::test]
async fn a_scope_every_request_needs_is_asked_for_with_403() {
    let dir = tempfile::tempdir().expect("dir");
    let keys = new_keys(dir.path(), "a.json").await;
    let issuer = AuthorizationServer::start("http://127.0.0.1/unused", &keys, None).await;
    let served = serve(&issuer.issuer, &["--oauth-scope", "tools"]).await;
    let narrow = issuer.token("alice", "other", &served.resource).await;
    let (status, challenge, body) = knock(&served, Some(&narrow)).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    assert!(challenge.ends_with(r#"scope="tools""#), "{challenge}");
    assert!(
        body.starts_with("the token lacks a scope every request needs (tools)"),
        "{body}"
    );
    let enough = issuer.token("alice", "tools other", &served.resource).await;
    assert_eq!(knock(&served, Some(&enough)).await.0, 200);
}

#[tokio::test]
async fn the_python_sdks_oauth_client_finds_the_issuer_and_gets_in_alone() {
    let dir = tempfile::tempdir().expect("dir");
    let keys = new_keys(dir.path(), "a.json").await;
    let issuer = AuthorizationServer::start("http://127.0.0.1/unused", &keys, None).await;
    let served = serve(&issuer.issuer, &["--oauth-scope", "tools"]).await;
    let seen = agent(
        "oauth_client.py",
        &[&served.resource, &issuer.issuer, "bob"],
    )
    .await;
    assert_eq!(seen["tokens_stored"], json!(1), "{seen}");
    let told = seen["description"].as_str().unwrap_or_default();
    assert!(told.contains("ops") && !told.contains("eng"), "{seen}");
    assert_eq!(seen["opened"]["ops"]["error"], json!(false), "{seen}");
    assert_eq!(seen["opened"]["eng"]["error"], json!(true), "{seen}");
}
