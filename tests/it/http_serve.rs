//! `toolshelf serve --http`: agents reach toolshelf over streamable HTTP (the Python `mcp` SDK's
//! client), each session with its own open toolboxes and children; the gate in front refuses
//! what it must (no or wrong token, a foreign Origin or Host, an oversized body), and a
//! non-loopback address without a token is refused at start.

use std::{process::Stdio, time::Duration};

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, children_of, config, fixture,
    http::{fixture_config, http, initialize, post_status, serve, serve_with},
    is_alive,
    python::agent,
    write_config,
};

/// Toolbox `dev` with a shared fixture and one per session (`mine`), and toolbox `ops`.
fn sharing_config() -> (tempfile::TempDir, std::path::PathBuf) {
    let mut mine = fixture(&["--ask"]);
    mine["sharing"] = json!("session");
    write_config(&config(&[
        (
            "dev",
            "Fixture",
            json!({ "fixture": fixture(&["--ask"]), "mine": mine }),
        ),
        ("ops", "Fixture", json!({ "fixture": fixture(&[]) })),
    ]))
}

#[tokio::test]
async fn agents_reach_toolshelf_over_http_each_with_its_own_session() {
    let (dir, path) = sharing_config();
    let token = "http-t0ken-value";
    let (mut process, port) = serve(&path, token).await;
    let pid = process.id().expect("pid");

    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen = agent("http_client.py", &[&url, token]).await;
    assert_eq!(seen["tools"], json!(["open_toolbox", "use_tool"]), "{seen}");
    assert_eq!(seen["opened"], json!([true, true]), "{seen}");
    // Each session has its own open toolboxes: B opened `ops`, not A's `dev`.
    assert_eq!(
        seen["b_dev_closed"],
        json!("Error executing tool: Toolbox 'dev' is not open"),
        "{seen}"
    );
    assert_eq!(seen["b_ops"], json!(r#"{"said":"b on ops"}"#), "{seen}");
    assert_eq!(seen["a_echo"], json!(r#"{"said":"over http"}"#), "{seen}");
    assert_eq!(seen["a_progress"], json!([1.0, 2.0, 3.0]), "{seen}");

    // One shared process for both sessions; a `"sharing": "session"` server has one each.
    let pids = &seen["pids"];
    assert_eq!(pids["a_shared"], pids["b_shared"], "{seen}");
    assert_ne!(pids["a_mine"], pids["b_mine"], "{seen}");
    assert_ne!(pids["a_shared"], pids["ops"], "{seen}");

    // A shared child's question reaches the session whose call it serves; with two sessions'
    // calls in flight it is refused with the reason; a session's own child asks its session.
    let answered = r#""answers":[{"action":"accept","content":{"answer":"from A"}}]"#;
    assert!(
        seen["a_ask_alone"]
            .as_str()
            .unwrap_or_default()
            .contains(answered),
        "{seen}"
    );
    let refused = seen["a_ask_beside_b"].as_str().unwrap_or_default();
    assert!(
        refused.contains("elicitation/create from dev/fixture cannot be relayed: 2 agent sessions have calls in flight to it")
            && refused.contains(r#""sharing": "session""#),
        "{seen}"
    );
    assert!(
        seen["a_ask_mine_beside_b"]
            .as_str()
            .unwrap_or_default()
            .contains(answered),
        "{seen}"
    );
    assert_eq!(
        seen["a_asked"],
        json!(["question 1", "question 1"]),
        "{seen}"
    );
    assert_eq!(seen["b_asked"], json!([]), "{seen}");

    // A's cancellation ended A's call only.
    assert_eq!(seen["a_sleep_finished"], Value::Null, "{seen}");
    assert_eq!(seen["b_sleep"], json!("slept 800 ms"), "{seen}");
    assert_eq!(
        seen["a_after_cancel"],
        json!(r#"{"said":"still here"}"#),
        "{seen}"
    );

    // A's session ended: its own child stopped within 10 s; B's and the shared one ran on.
    assert!(seen["a_mine_stopped_s"].is_number(), "{seen}");
    assert_eq!(seen["b_mine_alive"], json!(true), "{seen}");
    assert_eq!(seen["shared_alive"], json!(true), "{seen}");
    assert_eq!(
        seen["b_after"],
        json!(r#"{"said":"b still here"}"#),
        "{seen}"
    );

    // Both sessions ended (the SDK's DELETE): the session children stop; the shared ones run
    // until toolshelf stops.
    let shared = [&pids["a_shared"], &pids["ops"]].map(|pid| {
        pid.as_str()
            .and_then(|pid| pid.parse::<u32>().ok())
            .expect("a pid")
    });
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let left: Vec<u32> = children_of(pid)
            .into_iter()
            .filter(|child| {
                is_alive(*child)
                    && !shared.contains(child)
                    && !std::fs::read_to_string(format!("/proc/{child}/cmdline"))
                        .unwrap_or_default()
                        .contains("process-guard")
            })
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "left: {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(shared.iter().all(|child| is_alive(*child)), "{seen}");

    // /metrics, read by the Prometheus client's OpenMetrics parser.
    let metrics_url = format!("http://127.0.0.1:{port}/metrics");
    let refused = agent("metrics_scrape.py", &[&metrics_url, ""]).await;
    assert_eq!(refused["status"], json!(401), "{refused}");
    let scraped = agent("metrics_scrape.py", &[&metrics_url, token]).await;
    assert_eq!(scraped["status"], json!(200), "{scraped}");
    let sample = |name: &str, labels: Value| -> f64 {
        scraped["samples"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|sample| sample[0] == name && sample[1] == labels)
            .and_then(|sample| sample[2].as_f64())
            .unwrap_or_else(|| panic!("no {name} {labels} in {scraped}"))
    };
    let calls = |toolbox: &str, server: &str, outcome: &str| {
        sample(
            "toolshelf_calls_total",
            json!({"toolbox": toolbox, "server": server, "outcome": outcome}),
        )
    };
    let server = |toolbox: &str, server: &str| json!({"toolbox": toolbox, "server": server});
    assert_eq!(calls("dev", "mine", "ok"), 3.0, "{scraped}");
    assert_eq!(calls("ops", "fixture", "ok"), 2.0, "{scraped}");
    assert_eq!(calls("dev", "fixture", "tool_error"), 1.0, "{scraped}");
    assert!(calls("dev", "fixture", "failed") >= 1.0, "{scraped}");
    assert_eq!(
        sample(
            "toolshelf_call_duration_seconds_count",
            server("dev", "mine")
        ),
        3.0
    );
    assert_eq!(
        sample("toolshelf_children_started_total", server("dev", "fixture")),
        1.0
    );
    assert_eq!(
        sample("toolshelf_children_started_total", server("dev", "mine")),
        2.0
    );
    assert_eq!(
        sample("toolshelf_children_started_total", server("ops", "fixture")),
        1.0
    );
    // Both sessions ended; the two shared children run on.
    assert_eq!(sample("toolshelf_sessions_open", json!({})), 0.0);
    assert_eq!(sample("toolshelf_children_running", json!({})), 2.0);

    // The gate.
    let bearer = format!("Bearer {token}");
    assert_eq!(post_status(port, &[], initialize()).await, 401, "no token");
    assert_eq!(
        post_status(port, &[("authorization", "Bearer wrong")], initialize()).await,
        401,
        "wrong token"
    );
    assert_eq!(
        post_status(
            port,
            &[
                ("authorization", &bearer),
                ("origin", "http://evil.example")
            ],
            initialize()
        )
        .await,
        403,
        "foreign Origin"
    );
    assert_eq!(
        post_status(
            port,
            &[("authorization", &bearer), ("host", "evil.example")],
            initialize()
        )
        .await,
        403,
        "foreign Host"
    );
    let oversized = vec![b' '; 17 * 1024 * 1024];
    assert_eq!(
        post_status(port, &[("authorization", &bearer)], oversized).await,
        413,
        "body over 16 MiB"
    );
    let refused = http()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .send()
        .await
        .expect("POST");
    assert_eq!(
        refused
            .headers()
            .get("www-authenticate")
            .map(|v| v.as_bytes()),
        Some(&b"Bearer"[..])
    );
    let missing = refused.text().await.expect("body");
    assert!(missing.contains("this request has none"), "{missing}");
    let wrong = http()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("authorization", "Bearer not-the-token-4f2")
        .send()
        .await
        .expect("POST");
    assert_eq!(
        wrong
            .headers()
            .get("www-authenticate")
            .map(|v| v.as_bytes()),
        Some(&br#"Bearer error="invalid_token""#[..])
    );
    let wrong = wrong.text().await.expect("body");
    assert!(
        wrong.contains("does not know the bearer token this request sent"),
        "{wrong}"
    );
    assert!(
        !wrong.contains("not-the-token-4f2"),
        "never echoed: {wrong}"
    );

    // SIGTERM: toolshelf exits 0 in time, and nothing it started is left.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("signal");
    let status = tokio::time::timeout(Duration::from_secs(8), process.wait())
        .await
        .expect("toolshelf exits within 8 s")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(
        shared.iter().all(|child| !is_alive(*child)),
        "the shared children stopped with toolshelf"
    );
    drop(dir);
}

#[tokio::test]
async fn a_non_loopback_address_without_a_token_is_refused_at_start() {
    let (_dir, path) = fixture_config();
    let output = crate::harness::toolshelf_std()
        .args(["serve", "--config"])
        .arg(&path)
        .args(["--http", "0.0.0.0:0"])
        .env_remove("TOOLSHELF_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("without a token"), "{stderr}");
    assert!(stderr.contains("TOOLSHELF_TOKEN"), "{stderr}");
    assert!(stderr.contains("--token-file"), "{stderr}");
}

/// `--http 8413` is 127.0.0.1:8413; a host name is refused at once with the forms that work.
#[tokio::test]
async fn a_bare_port_serves_on_loopback_and_a_host_name_is_told_the_forms() {
    let (_dir, path) = fixture_config();
    let port = crate::harness::free_port();
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--config"])
        .arg(&path)
        .args(["--http", &port.to_string()])
        .env_remove("TOOLSHELF_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let _serving = command.spawn().expect("serve --http PORT");
    crate::harness::http::wait_healthy(port).await;

    let output = crate::harness::toolshelf_std()
        .args(["serve", "--config"])
        .arg(&path)
        .args(["--http", "localhost:8413"])
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'localhost:8413' is not an address to listen on: give PORT (e.g. 8413, for 127.0.0.1:8413) or HOST:PORT"),
        "{stderr}"
    );
}

/// fastmcp 4.1.2 on 2026-07-28 has no session (`server/discover`, no `initialize`): with no
/// place to keep "open", its `use_tool` opens the toolbox it names (the first client never calls
/// `open_toolbox`); such clients share one set of open toolboxes and children.
#[tokio::test]
async fn a_client_without_a_session_has_its_toolbox_opened_by_its_call() {
    let (dir, path) = fixture_config();
    let token = "shared-t0ken-value";
    let (_process, port) = serve(&path, token).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    for open in ["no", "open"] {
        let seen = agent("fastmcp_http.py", &[&url, token, "dev", "fixture", open]).await;
        assert_eq!(seen["protocol"], Value::Null, "no initialize: {seen}");
        assert_eq!(
            seen["echo"],
            json!(r#"{"via":"fastmcp"}"#),
            "{open}: {seen}"
        );
        assert_eq!(seen["echo_error"], json!(false), "{open}: {seen}");
    }
    drop(dir);
}

#[tokio::test]
async fn flat_mode_over_http_serves_a_client_without_a_session_in_rounds() {
    let (_dir, path) = write_config(&config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&["--ask", "--protocol", "2025-06-18"]) }),
    )]));
    let token = "flat-t0ken";
    let (_process, port) = serve_with(&path, token, &["--flat"]).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen = agent("flat_http.py", &[&url, token]).await;
    assert_eq!(seen["protocol"], Value::Null, "no initialize: {seen}");
    let tools = seen["tools"].as_array().expect("tools");
    assert!(
        tools.contains(&json!("fixture:echo")) && tools.contains(&json!("fixture:ask")),
        "{seen}"
    );
    assert_eq!(seen["echo"], json!([r#"{"via":"flat"}"#]), "{seen}");
    // The child asked twice; each question reached the client as a round and was answered.
    assert_eq!(seen["asked_error"], json!(false), "{seen}");
    let asked = seen["asked"].to_string();
    assert!(
        asked.contains("answered question 1") && asked.contains("answered question 2"),
        "{seen}"
    );
}
