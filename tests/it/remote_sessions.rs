//! A remote child's session over time: its list change on the GET stream, its end after
//! idleness, its requests to the agent (sampling, elicitation, roots), and TLS with a private
//! authority.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{DEADLINE, RawClient, config, opened_tools, python_env, write_config};
use crate::remote::{HttpServer, result_text, structured, use_tool};

#[tokio::test]
async fn a_remote_list_change_comes_on_the_get_stream_and_idleness_ends_the_session() {
    let token = "an0ther-token-value";
    let checker = HttpServer::header_checker(token).await;
    let servers = json!({"good": {
        "url": checker.url(),
        "headers": {"Authorization": format!("Bearer {token}")},
        "idleTimeout": 1,
    }});
    let mut shelf = RawClient::start(&config(&[("mix", "", servers)])).await;
    shelf.open(1, "mix").await;
    let (_, answer) = shelf
        .request(2, "tools/call", use_tool("good", "seen_headers", json!({})))
        .await;
    let first = structured(&answer)["mcp-session-id"].clone();
    assert!(first.is_string(), "{answer}");

    // The server announces a change after the call, outside any request: the notification
    // can only come on the GET stream, and toolshelf re-lists the server.
    shelf
        .request(3, "tools/call", use_tool("good", "grow_later", json!({})))
        .await;
    let mut id = 10;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        id += 1;
        let opened = shelf.open(id, "mix").await;
        let listed: Value = serde_json::from_str(&result_text(&opened)).expect("JSON");
        if opened_tools(&listed)
            .iter()
            .any(|tool| tool["name"] == "grown")
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never listed: {opened}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A second without calls: the child is stopped and its session ended with a DELETE; the
    // next call opens a new one.
    loop {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        id += 1;
        let (_, answer) = shelf
            .request(
                id,
                "tools/call",
                use_tool("good", "ended_sessions", json!({})),
            )
            .await;
        let ended = structured(&answer);
        if ended.as_array().is_some_and(|ended| ended.contains(&first)) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never ended: {answer}"
        );
    }
    let (_, answer) = shelf
        .request(
            id + 1,
            "tools/call",
            use_tool("good", "seen_headers", json!({})),
        )
        .await;
    let second = structured(&answer)["mcp-session-id"].clone();
    assert!(second.is_string() && second != first, "{answer}");
}

/// The relays of a local child, through a remote one: server-everything over streamable HTTP
/// asks for a sampled message, input and its roots, and the agent (the `mcp` SDK) answers each.
/// Its answer to sampling takes longer than the child's `callTimeout`, paused meanwhile.
#[tokio::test]
async fn the_agent_answers_a_remote_childs_sampling_elicitation_and_roots() {
    let web = HttpServer::everything("streamableHttp").await;
    let spec = json!({"type": "http", "url": web.url(), "callTimeout": 1.0});
    let (_dir, args) = crate::clients::demo_everything(spec);
    let seen = crate::harness::python::python_client("mcp_client.py", args).await;
    let text = |key: &str| seen[key].as_str().unwrap_or_default().to_owned();
    assert!(text("sampled").contains("sampled by the agent"), "{seen}");
    assert!(text("elicited").contains("Ada Lovelace"), "{seen}");
    assert!(text("roots").contains("file:///tmp/agent-root"), "{seen}");
    assert!(
        text("roots_later").contains("file:///tmp/agent-root-later"),
        "the agent's roots change did not reach the child: {seen}"
    );
}

/// TLS is rustls with the system's trust store, which `SSL_CERT_FILE` replaces: a server with a
/// certificate from an authority nobody trusts is refused with the reason, and the same server
/// is reached once that authority is the trusted one.
#[tokio::test]
async fn a_tls_server_is_reached_when_its_authority_is_trusted_through_ssl_cert_file() {
    let certs = tempfile::tempdir().expect("certificate folder");
    let made = std::process::Command::new(python_env().join("bin/python"))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/make_cert.py"
        ))
        .arg(certs.path())
        .status()
        .expect("run make_cert.py");
    assert!(made.success());
    let token = "tls-t0ken-value";
    let server = HttpServer::header_checker_over_tls(token, certs.path()).await;
    assert!(server.url().starts_with("https://"));
    let servers = json!({"secure": {
        "url": server.url(),
        "headers": {"Authorization": format!("Bearer {token}")},
    }});
    let (dir, path) = write_config(&config(&[("mix", "", servers)]));
    let serve = |authority: Option<&std::path::Path>| {
        let mut command = crate::harness::toolshelf();
        command
            .args(["serve", "--config"])
            .arg(&path)
            .env("RUST_LOG", "warn")
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR");
        if let Some(authority) = authority {
            command.env("SSL_CERT_FILE", authority);
        }
        command
    };

    let mut untrusted = RawClient::spawn(serve(None), None, "2025-06-18").await;
    let opened = untrusted.open(1, "mix").await.to_string();
    assert!(opened.contains("invalid peer certificate"), "{opened}");
    assert!(
        opened.contains("SSL_CERT_FILE"),
        "the error says what to do: {opened}"
    );
    assert!(!opened.contains(token), "{opened}");

    let authority = certs.path().join("ca.pem");
    let mut trusted = RawClient::spawn(serve(Some(&authority)), None, "2025-06-18").await;
    trusted.open(1, "mix").await;
    let (_, answer) = trusted
        .request(
            2,
            "tools/call",
            use_tool("secure", "seen_headers", json!({})),
        )
        .await;
    assert_eq!(
        structured(&answer)["authorization"],
        json!(format!("Bearer {token}")),
        "{answer}"
    );
    drop(dir);
}
