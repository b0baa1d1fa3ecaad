//! `toolshelf serve --http`: agents reach toolshelf over streamable HTTP (the Python `mcp` SDK's
//! client), each session with its own open toolboxes and children; the gate in front refuses
//! what it must (no or wrong token, a foreign Origin or Host, an oversized body), and a
//! non-loopback address without a token is refused at start.

use std::{process::Stdio, time::Duration};

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, children_of, config, fixture, free_port,
    http::{haproxy, http, serve, serve_with, wait_healthy},
    is_alive,
    python::agent,
    python_env, write_config,
};

/// Toolbox `dev` with the fixture, written to a fresh folder.
fn fixture_config() -> (tempfile::TempDir, std::path::PathBuf) {
    write_config(&config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&[]) }),
    )]))
}

/// A POST of `body` to `/mcp` with `headers`; the status.
async fn post(port: u16, headers: &[(&str, &str)], body: Vec<u8>) -> u16 {
    let mut request = http()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("POST").status().as_u16()
}

pub(crate) fn initialize() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"}}})
    .to_string()
    .into_bytes()
}

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
    assert_eq!(post(port, &[], initialize()).await, 401, "no token");
    assert_eq!(
        post(port, &[("authorization", "Bearer wrong")], initialize()).await,
        401,
        "wrong token"
    );
    assert_eq!(
        post(
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
        post(
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
        post(port, &[("authorization", &bearer)], oversized).await,
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
async fn limits_refuse_clearly_and_an_idle_session_expires_with_its_children() {
    let mut mine = fixture(&[]);
    mine["sharing"] = json!("session");
    let mut file = config(&[("dev", "Fixture", json!({ "mine": mine }))]);
    file["http"] = json!({
        "maxSessions": 1,
        "maxCallsPerSession": 1,
        "sessionIdleTimeout": 2,
        "maxBodyBytes": 4096
    });
    let (_dir, path) = write_config(&file);
    let token = "limits-t0ken";
    let (_process, port) = serve(&path, token).await;

    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen = agent("http_limits.py", &[&url, token]).await;
    let refused = seen["b_refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains(
            "toolshelf holds as many agent sessions as it may (1, http.maxSessions in the config)"
        ),
        "{seen}"
    );
    let refused = seen["second_call_refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains("this session has as many use_tool calls in flight as toolshelf runs at once (1, http.maxCallsPerSession in the config)"),
        "{seen}"
    );
    assert_eq!(
        seen["after_limit"],
        json!(r#"{"said":"one at a time"}"#),
        "{seen}"
    );
    // The session expired after 2 s without a request; its own child stopped within 10 s of that.
    let stopped = seen["child_stopped_after_s"].as_f64().expect("stopped");
    assert!(stopped < 12.0, "{seen}");
    // The expired session no longer counts: a new agent gets in.
    assert_eq!(seen["c_refused"], Value::Null, "{seen}");
    assert_eq!(seen["c_opened"], json!(true), "{seen}");
    assert_eq!(
        seen["c_after_crash"],
        json!(r#"{"said":"again"}"#),
        "{seen}"
    );
    let scraped = agent(
        "metrics_scrape.py",
        &[&format!("http://127.0.0.1:{port}/metrics"), token],
    )
    .await;
    let crashed = scraped["samples"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|sample| {
            sample[0] == "toolshelf_children_crashed_total"
                && sample[1] == json!({"toolbox": "dev", "server": "mine"})
        });
    assert_eq!(
        crashed.and_then(|sample| sample[2].as_f64()),
        Some(1.0),
        "{scraped}"
    );

    let bearer = format!("Bearer {token}");
    assert_eq!(
        post(port, &[("authorization", &bearer)], vec![b' '; 8192]).await,
        413,
        "a body over http.maxBodyBytes"
    );
}

#[tokio::test]
async fn replicas_behind_haproxy_keep_sessions_apart_and_recover_from_a_lost_replica() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (_dir, path) = fixture_config();
    let token = "replica-t0ken";
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(serve(&path, token).await);
    }
    let lb_port = free_port();
    // HAProxy's own warnings go to a file beside the config, not into the tests' output.
    let haproxy_log = std::fs::File::create(_dir.path().join("haproxy.log")).expect("log file");
    let _balancer = tokio::process::Command::new(haproxy())
        .args(["-db", "-f"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/haproxy.cfg"))
        .env("LB_PORT", lb_port.to_string())
        .env("REPLICA1_PORT", replicas[0].1.to_string())
        .env("REPLICA2_PORT", replicas[1].1.to_string())
        .env("REPLICA3_PORT", replicas[2].1.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(haproxy_log)
        .kill_on_drop(true)
        .spawn()
        .expect("start haproxy");
    wait_healthy(lb_port).await;

    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/replicas_client.py"
    );
    let mut client = tokio::process::Command::new(python_env().join("bin/python"))
        .arg(script)
        .arg(format!("http://127.0.0.1:{lb_port}/mcp"))
        .arg(token)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the agents");
    let mut lines = BufReader::new(client.stdout.take().expect("stdout")).lines();
    let mut next_line = async || -> Value {
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("the agents answer in time")
            .expect("read")
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    };
    // Which replica a fixture process belongs to.
    let replica_pids: Vec<u32> = replicas
        .iter()
        .map(|(process, _)| process.id().expect("replica pid"))
        .collect();
    let replica_of = |pid: &Value| -> usize {
        let pid: u32 = pid
            .as_str()
            .and_then(|pid| pid.parse().ok())
            .expect("a pid");
        replica_pids
            .iter()
            .position(|replica| children_of(*replica).contains(&pid))
            .unwrap_or_else(|| panic!("pid {pid} is no replica's child"))
    };

    let first = next_line().await;
    let sessions: Vec<Vec<usize>> = first["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|pids| {
            pids.as_array()
                .expect("pids")
                .iter()
                .map(replica_of)
                .collect()
        })
        .collect();
    // A session's calls all reach the replica that holds it; sessions spread over replicas.
    for calls in &sessions {
        assert!(calls.iter().all(|replica| *replica == calls[0]), "{first}");
    }
    let used: std::collections::BTreeSet<usize> = sessions.iter().map(|calls| calls[0]).collect();
    assert!(used.len() >= 2, "sessions on replicas {used:?}: {first}");
    // Calls without a session go to any replica.
    let spread: std::collections::BTreeSet<usize> = first["sessionless"]
        .as_array()
        .expect("sessionless")
        .iter()
        .map(replica_of)
        .collect();
    assert!(
        spread.len() >= 2,
        "sessionless calls on {spread:?}: {first}"
    );

    // The replica of the first session is lost.
    let lost = sessions[0][0];
    replicas[lost].0.start_kill().expect("kill a replica");
    let _ = replicas[lost].0.wait().await;
    let mut stdin = client.stdin.take().expect("stdin");
    stdin.write_all(b"killed\n").await.expect("tell the agents");
    stdin.flush().await.expect("flush");

    let second = next_line().await;
    let after = second["after"].as_array().expect("after");
    for (number, seen) in after.iter().enumerate() {
        let expected = json!(json!({ "said": seen["said"] }).to_string());
        if sessions[number][0] == lost {
            // The spec's 404 for a session the replica that answered does not hold.
            assert_eq!(seen["error"], json!("Session terminated"), "{second}");
            assert_eq!(seen["answer_after_new_session"], expected, "{second}");
            assert_ne!(replica_of(&seen["pid_after_new_session"]), lost, "{second}");
        } else {
            // Sessions elsewhere go on, each answered with its own call's result.
            assert_eq!(seen["error"], Value::Null, "{second}");
            assert_eq!(seen["answer"], expected, "{second}");
        }
    }
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

/// A 2025-era session spoken to with plain HTTP requests, to see how each is answered.
pub(crate) struct RawSession {
    pub(crate) url: String,
    pub(crate) id: String,
    /// The bearer token each request carries, if any.
    token: Option<String>,
}

/// An answer: its status, `Content-Type` and body.
pub(crate) struct Answered {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: String,
}

impl RawSession {
    pub(crate) async fn open(port: u16) -> Self {
        Self::open_with(port, None).await
    }

    /// A session whose requests carry `token`.
    pub(crate) async fn open_with(port: u16, token: Option<&str>) -> Self {
        let mut session = Self {
            url: format!("http://127.0.0.1:{port}/mcp"),
            id: String::new(),
            token: token.map(str::to_owned),
        };
        let response = session
            .send(String::from_utf8(initialize()).expect("utf-8"))
            .await;
        session.id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|id| id.to_str().ok())
            .expect("a session id")
            .to_owned();
        let initialized = session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(initialized.status, 202);
        session
    }

    pub(crate) async fn post_to(url: &str, session: Option<&str>, body: &str) -> reqwest::Response {
        let mut request = http()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.expect("POST")
    }

    async fn send(&self, body: String) -> reqwest::Response {
        let mut request = http()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if !self.id.is_empty() {
            request = request.header("mcp-session-id", &self.id);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request.send().await.expect("POST")
    }

    pub(crate) async fn post(&self, message: Value) -> Answered {
        let response = self.send(message.to_string()).await;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = response.text().await.expect("a body");
        Answered {
            status,
            content_type,
            body,
        }
    }
}

pub(crate) fn use_tool_request(
    id: u64,
    name: &str,
    arguments: Value,
    meta: Option<Value>,
) -> Value {
    let mut params = json!({"name": "use_tool", "arguments": {
        "tool": {"toolbox": "dev", "server": "fixture", "name": name}, "arguments": arguments}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// What keeps a `fixture_session`'s toolshelf running.
pub(crate) struct Served {
    pub(crate) port: u16,
    _dir: tempfile::TempDir,
    _config_dir: tempfile::TempDir,
    _process: tokio::process::Child,
}

/// `serve --http` with toolbox `dev` (the fixture, its events in the returned file) and
/// `sessionIdleTimeout` of `idle_seconds`; a raw session with `dev` open.
pub(crate) async fn fixture_session(idle_seconds: u64) -> (Served, std::path::PathBuf, RawSession) {
    fixture_session_in(json!({ "sessionIdleTimeout": idle_seconds })).await
}

/// As `fixture_session`, with the config's `http` section `http`.
pub(crate) async fn fixture_session_in(http: Value) -> (Served, std::path::PathBuf, RawSession) {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events.log");
    let events_arg = events.to_str().expect("utf-8 path");
    let mut file = config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&["--events", events_arg]) }),
    )]);
    file["http"] = http;
    let (config_dir, path) = write_config(&file);
    let (process, port) = serve(&path, "").await;
    let session = RawSession::open(port).await;
    let opened = session
        .post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "open_toolbox", "arguments": {"toolbox": "dev"}}}))
        .await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let served = Served {
        port,
        _dir: dir,
        _config_dir: config_dir,
        _process: process,
    };
    (served, events, session)
}

#[tokio::test]
async fn a_sessions_use_tool_calls_are_answered_past_rmcp_as_rmcp_would() {
    let (served, events, session) = fixture_session(1).await;
    let echo = |id: u64, message: &str| {
        session.post(use_tool_request(
            id,
            "echo",
            json!({"message": message}),
            None,
        ))
    };

    // A plain call: answered with a JSON body holding the child's result as it wrote it.
    let echoed = echo(2, "hi").await;
    assert_eq!(
        (echoed.status, echoed.content_type.as_str()),
        (200, "application/json")
    );
    let answer: Value = serde_json::from_str(&echoed.body).expect("JSON");
    assert_eq!(answer["id"], json!(2), "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!(r#"{"message":"hi"}"#),
        "{answer}"
    );

    // A call that asks for progress needs a stream: rmcp's path, progress before the answer.
    let progressed = session
        .post(use_tool_request(
            3,
            "progress",
            json!({"steps": 2}),
            Some(json!({"progressToken": "p"})),
        ))
        .await;
    assert_eq!(progressed.content_type, "text/event-stream");
    assert_eq!(
        progressed.body.matches("notifications/progress").count(),
        2,
        "{}",
        progressed.body
    );
    assert!(
        progressed.body.contains("sent 2 progress notifications"),
        "{}",
        progressed.body
    );

    // An id in flight is refused; a cancelled call ends its stream without an answer.
    let slow = tokio::spawn({
        let session = RawSession {
            url: session.url.clone(),
            id: session.id.clone(),
            token: None,
        };
        async move {
            session
                .post(use_tool_request(7, "sleep", json!({"ms": 30_000}), None))
                .await
        }
    });
    crate::harness::wait_for_line(&events, "start sleep").await;
    let twice = echo(7, "again").await;
    assert!(
        twice
            .body
            .contains("request id '7' is already in use by a call in flight"),
        "{}",
        twice.body
    );
    let cancelled = session
        .post(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "enough"}}),
        )
        .await;
    assert_eq!(cancelled.status, 202);
    let slow = tokio::time::timeout(DEADLINE, slow)
        .await
        .expect("the cancelled call's request ends")
        .expect("joined");
    assert_eq!(
        (slow.status, slow.content_type.as_str(), slow.body.as_str()),
        (200, "text/event-stream", "")
    );
    crate::harness::wait_for_line(&events, "cancelled sleep").await;

    // Direct calls keep the session alive for twice its idle expiry (1 s) ...
    let began = std::time::Instant::now();
    let mut id = 10;
    while began.elapsed() < Duration::from_secs(2) {
        let echoed = echo(id, "still here").await;
        assert_eq!(echoed.status, 200, "call {id}: {}", echoed.body);
        id += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // ... and a session left alone still expires: rmcp's 404 for it. (Any request to a live
    // session keeps it alive, so the wait watches /metrics, which touches no session.)
    let metrics = format!("http://127.0.0.1:{}/metrics", served.port);
    crate::harness::eventually("the idle session expires", || async {
        let text = http().get(&metrics).send().await.ok()?.text().await.ok()?;
        text.lines()
            .any(|line| line == "toolshelf_sessions_open 0")
            .then_some(())
    })
    .await;
    let gone = echo(id, "late").await;
    assert_eq!(gone.status, 404, "{}", gone.body);
}

/// A session's streams are toolshelf's own (`session_streams`): a call whose POST stream was
/// dropped is resumed with `Last-Event-ID` and its answer arrives there; a call in flight keeps
/// its session past `sessionIdleTimeout`; an answer read is not replayed again.
#[tokio::test]
async fn a_direct_call_keeps_its_session_after_its_client_went_away() {
    let (_served, events, session) = fixture_session(1).await;

    // A plain call (no progress: the direct path) longer than the idle timeout; its client
    // goes away once the child has started it.
    let call = use_tool_request(2, "sleep", json!({"ms": 2_500}), None).to_string();
    let (url, id) = (session.url.clone(), session.id.clone());
    let abandoned = tokio::spawn(async move { RawSession::post_to(&url, Some(&id), &call).await });
    crate::harness::wait_for_line(&events, "start sleep").await;
    abandoned.abort();

    // Past the idle timeout, while the call still runs, the session is there.
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    let ping = session
        .post(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    assert_eq!(ping.status, 200, "{}", ping.body);
}

#[tokio::test]
async fn a_dropped_calls_stream_resumes_and_a_call_in_flight_keeps_its_session() {
    let (_served, events, session) = fixture_session(1).await;

    // A call longer than the idle timeout, on an event stream (it asks for progress); the
    // client reads the priming event and goes away.
    let call = use_tool_request(
        2,
        "sleep",
        json!({"ms": 2_500}),
        Some(json!({"progressToken": "t"})),
    );
    let mut response =
        RawSession::post_to(&session.url, Some(&session.id), &call.to_string()).await;
    let first = tokio::time::timeout(DEADLINE, response.chunk())
        .await
        .expect("the priming event in time")
        .expect("a chunk")
        .expect("not the end");
    let first = String::from_utf8_lossy(&first).into_owned();
    let last_event = first
        .lines()
        .find_map(|line| line.strip_prefix("id: ").or(line.strip_prefix("id:")))
        .expect("the priming event has an id")
        .trim()
        .to_owned();
    assert!(last_event.starts_with("0/"), "{first}");
    drop(response);
    crate::harness::wait_for_line(&events, "start sleep").await;

    // Past the idle timeout, the call in flight has kept the session: the resumed stream
    // carries the answer, then ends.
    let resume = || {
        http()
            .get(&session.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session.id)
            .header("last-event-id", &last_event)
            .send()
    };
    let resumed = tokio::time::timeout(DEADLINE, async {
        resume().await.expect("GET").text().await.expect("a body")
    })
    .await
    .expect("the resumed stream ends");
    let answer = resumed
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == json!(2))
        .unwrap_or_else(|| panic!("the call's answer on the resumed stream: {resumed}"));
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!("slept 2500 ms"),
        "{answer}"
    );

    // Read once, not again: the stream is gone.
    let again = resume().await.expect("GET").text().await.expect("a body");
    assert!(!again.contains("\"id\":2"), "{again}");
}
