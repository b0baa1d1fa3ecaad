//! `access` rules under `serve --http` with named callers: each caller sees only what it may
//! use (open_toolbox's description, listings, searches, flat mode's tools/list, clients without
//! a session), is answered for the rest exactly as for what does not exist, and the audit log
//! records the denials; a policy no caller could satisfy is refused at start.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::{
    config, eventually, fixture,
    http::{RawSession, serve_logged},
    python::agent,
    write_config,
};

const ALICE: &str = "alice-t0ken-0123456789";
const BOB: &str = "bob-t0ken-9876543210";
/// The single token's caller, `default`, whom no rule names: it sees nothing.
const DEFAULT: &str = "default-t0ken-1111111111";

/// Alice may use everything; Bob the toolbox `dev` without its tools `sleep` and `pid` (alias
/// `whoami`), and not `ops`. `structured` is also called `shaped`.
fn team() -> Value {
    let mut config = config(&[
        (
            "dev",
            "Fixture for everyone",
            json!({"fixture": fixture(&[])}),
        ),
        (
            "ops",
            "Operations, Alice only",
            json!({"opsbox": fixture(&[])}),
        ),
    ]);
    config["access"] = json!({"callers": ["alice", "bob"]});
    config["toolboxes"]["ops"]["access"] = json!({"callers": ["alice"]});
    config["toolboxes"]["dev"]["mcpServers"]["fixture"]["tools"] = json!({
        "sleep": {"access": {"callers": ["alice"]}},
        "pid": {"alias": "whoami", "access": {"callers": ["alice"]}},
        "structured": {"alias": "shaped"},
    });
    config
}

fn tokens() -> tempfile::TempDir {
    let tokens = tempfile::tempdir().expect("dir");
    std::fs::write(tokens.path().join("alice"), ALICE).expect("write");
    std::fs::write(tokens.path().join("bob"), BOB).expect("write");
    tokens
}

/// `serve --http` of `team()` with Alice's and Bob's tokens, the single token `DEFAULT`, the
/// audit log on, and `more` arguments; stopped when dropped.
struct Team {
    port: u16,
    _process: tokio::process::Child,
    _tokens: tempfile::TempDir,
    _config: tempfile::TempDir,
    dir: tempfile::TempDir,
}

impl Team {
    async fn serve(more: &[&str]) -> Team {
        let tokens = tokens();
        let (config, path) = write_config(&team());
        let dir = tempfile::tempdir().expect("dir");
        let audit = dir.path().join("audit.jsonl");
        let mut args = vec![
            "--tokens-dir",
            tokens.path().to_str().expect("utf-8"),
            "--audit-log",
            audit.to_str().expect("utf-8"),
        ];
        args.extend(more);
        let (process, port) = serve_logged(&path, DEFAULT, &args, Stdio::null()).await;
        Team {
            port,
            _process: process,
            _tokens: tokens,
            _config: config,
            dir,
        }
    }

    fn audit(&self) -> std::path::PathBuf {
        self.dir.path().join("audit.jsonl")
    }
}

/// The JSON-RPC message of an answer, sent as JSON or as one SSE event.
fn message(body: &str) -> Value {
    let data = body
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(body);
    serde_json::from_str(data).unwrap_or_else(|_| panic!("a JSON-RPC message: {body}"))
}

async fn call(session: &RawSession, id: u64, name: &str, arguments: Value) -> Value {
    let answer = session
        .post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
        .await;
    message(&answer.body)["result"].clone()
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn use_tool(session: &RawSession, id: u64, toolbox: &str, name: &str) -> String {
    let tool =
        json!({"tool": {"toolbox": toolbox, "server": "fixture", "name": name}, "arguments": {}});
    text(&call(session, id, "use_tool", tool).await)
}

async fn open_toolbox_description(session: &RawSession) -> String {
    let listed = session
        .post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let tools = message(&listed.body)["result"]["tools"].clone();
    tools[0]["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn each_caller_sees_only_what_it_may_use_and_nothing_of_the_rest() {
    let team = Team::serve(&[]).await;
    let (port, audit) = (team.port, team.audit());
    let alice = RawSession::open_with(port, Some(ALICE)).await;
    let bob = RawSession::open_with(port, Some(BOB)).await;

    // What each is told of the toolboxes before opening any.
    assert!(open_toolbox_description(&alice).await.contains("ops"));
    let told_bob = open_toolbox_description(&bob).await;
    assert!(
        told_bob.contains("dev") && !told_bob.contains("ops"),
        "{told_bob}"
    );

    // A withheld toolbox is answered for as one that does not exist.
    let ops = text(&call(&bob, 2, "open_toolbox", json!({"toolbox": "ops"})).await);
    let nope = text(&call(&bob, 3, "open_toolbox", json!({"toolbox": "nope"})).await);
    assert_eq!(ops.replace("ops", "nope"), nope);
    assert!(!nope.contains("ops"), "{nope}");

    // Bob's listing of dev lacks the withheld tool; calling it is calling a tool that does not
    // exist; his other calls pass.
    let opened = text(&call(&bob, 4, "open_toolbox", json!({"toolbox": "dev"})).await);
    assert!(
        opened.contains(r#""echo""#) && !opened.contains("sleep"),
        "{opened}"
    );
    let sleep = use_tool(&bob, 5, "dev", "sleep").await;
    let absent = use_tool(&bob, 6, "dev", "snooze").await;
    assert_eq!(sleep.replace("sleep", "snooze"), absent);
    assert!(!absent.contains("sleep"), "{absent}");
    assert_eq!(use_tool(&bob, 7, "dev", "echo").await, "{}");
    // The same by alias: a withheld tool's alias names nothing, a usable tool's names it.
    let whoami = use_tool(&bob, 20, "dev", "whoami").await;
    assert!(
        whoami.contains("Tool 'whoami' not found") && !whoami.contains("pid"),
        "{whoami}"
    );
    let shaped = use_tool(&bob, 21, "dev", "shaped").await;
    assert_eq!(shaped, use_tool(&bob, 22, "dev", "structured").await);
    assert!(!shaped.contains("Unknown tool"), "{shaped}");

    // Searches show only what the caller may use.
    let found = text(
        &call(
            &bob,
            8,
            "open_toolbox",
            json!({"query": "sleep ms", "limit": 50}),
        )
        .await,
    );
    assert!(
        !found.contains("sleep(") && !found.contains("ops/"),
        "{found}"
    );
    let found = text(
        &call(
            &alice,
            9,
            "open_toolbox",
            json!({"query": "sleep ms", "limit": 50}),
        )
        .await,
    );
    assert!(found.contains("dev/fixture/sleep("), "{found}");

    // Alice uses what Bob may not.
    call(&alice, 10, "open_toolbox", json!({"toolbox": "dev"})).await;
    let slept = use_tool(&alice, 11, "dev", "sleep").await;
    assert!(!slept.contains("Unknown tool"), "{slept}");
    let pid = use_tool(&alice, 12, "dev", "whoami").await;
    assert!(pid.parse::<u32>().is_ok(), "{pid}");

    // The audit log records Bob's denials as such, and his unknown names as unknown.
    let lines = eventually("the audit log has every record", || async {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        (lines.len() >= 10).then_some(lines)
    })
    .await;
    let of_bob: Vec<(String, String)> = lines
        .iter()
        .filter(|line| line["caller"] == "bob")
        .map(|line| {
            let what = line["tool"].as_str().or(line["toolbox"].as_str());
            (
                what.unwrap_or_default().to_owned(),
                line["outcome"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let outcome = |what: &str| {
        of_bob
            .iter()
            .find(|(named, _)| named == what)
            .map(|(_, outcome)| outcome.as_str())
    };
    assert_eq!(outcome("ops"), Some("denied"), "{of_bob:?}");
    assert_eq!(outcome("nope"), Some("toolbox_unknown"), "{of_bob:?}");
    assert_eq!(outcome("sleep"), Some("denied"), "{of_bob:?}");
    assert_eq!(outcome("snooze"), Some("tool_unknown"), "{of_bob:?}");
    assert_eq!(outcome("echo"), Some("ok"), "{of_bob:?}");
    assert_eq!(outcome("whoami"), Some("denied"), "{of_bob:?}");
}

/// Clients without a session (fastmcp 4.1.2 on 2026-07-28) are served in their caller's view:
/// Bob's call of a withheld toolbox is a call of one that does not exist, Alice's passes.
#[tokio::test]
async fn a_client_without_a_session_sees_its_callers_view() {
    let tokens = tokens();
    let (_config_dir, path) = write_config(&team());
    let dir = tokens.path().to_str().expect("utf-8");
    let (_process, port) =
        serve_logged(&path, DEFAULT, &["--tokens-dir", dir], Stdio::null()).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let as_bob = agent("fastmcp_http.py", &[&url, BOB, "ops", "opsbox", "no"]).await;
    assert_eq!(as_bob["protocol"], Value::Null, "no initialize: {as_bob}");
    assert_eq!(as_bob["echo_error"], json!(true), "{as_bob}");
    let absent = agent("fastmcp_http.py", &[&url, BOB, "nope", "opsbox", "no"]).await;
    assert_eq!(
        as_bob["echo"]
            .as_str()
            .map(|text| text.replace("ops", "nope")),
        absent["echo"].as_str().map(str::to_owned),
        "{as_bob} {absent}"
    );
    let as_alice = agent("fastmcp_http.py", &[&url, ALICE, "ops", "opsbox", "no"]).await;
    assert_eq!(
        as_alice["echo"],
        json!(r#"{"via":"fastmcp"}"#),
        "{as_alice}"
    );
}

#[tokio::test]
async fn flat_mode_lists_each_caller_its_own_tools() {
    let team = Team::serve(&["--flat"]).await;
    let (port, audit) = (team.port, team.audit());
    let names = |session: RawSession| async move {
        let listed = session
            .post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await;
        let tools = message(&listed.body)["result"]["tools"].clone();
        let names: Vec<String> = tools
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect();
        names
    };
    let of_alice = names(RawSession::open_with(port, Some(ALICE)).await).await;
    let of_bob = names(RawSession::open_with(port, Some(BOB)).await).await;
    assert!(of_alice.contains(&"opsbox:echo".to_owned()), "{of_alice:?}");
    assert!(
        of_alice.contains(&"fixture:sleep".to_owned()),
        "{of_alice:?}"
    );
    assert!(of_bob.contains(&"fixture:echo".to_owned()), "{of_bob:?}");
    assert!(
        !of_bob
            .iter()
            .any(|name| name.starts_with("opsbox:") || name == "fixture:sleep"),
        "{of_bob:?}"
    );

    // Bob's calls of what is withheld are refused as unknown names, and recorded as denials.
    let bob = RawSession::open_with(port, Some(BOB)).await;
    for (id, name) in [
        (2, "opsbox:echo"),
        (3, "fixture:sleep"),
        (4, "fixture:nope"),
    ] {
        let called = bob
            .post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": {}}}))
            .await;
        assert!(
            message(&called.body)["error"].is_object(),
            "{}",
            called.body
        );
    }
    let outcomes = eventually("three calls are recorded", || async {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        let outcomes: Vec<(String, String)> = text
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .map(|line| {
                let field = |key: &str| line[key].as_str().unwrap_or_default().to_owned();
                (field("tool"), field("outcome"))
            })
            .collect();
        (outcomes.len() >= 3).then_some(outcomes)
    })
    .await;
    let expected = [
        ("opsbox:echo", "denied"),
        ("fixture:sleep", "denied"),
        ("fixture:nope", "refused"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(tool, outcome)| ((*tool).to_owned(), (*outcome).to_owned()))
        .collect();
    assert_eq!(outcomes, expected);
}

/// The line of `toolshelf ARGS`'s stderr that contains `marker`; it exited with status 2, and
/// docs/access.md quotes the line.
fn refused(args: &[&str], marker: &str) -> String {
    let said = crate::harness::refused_at_start(args);
    let line = said
        .lines()
        .find(|line| line.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker}: {said}"));
    crate::docs::assert_quoted(line);
    line.to_owned()
}

#[test]
fn a_policy_no_caller_could_satisfy_is_refused_at_start() {
    let (_config_dir, path) = write_config(&team());
    let path = path.to_str().expect("utf-8");
    let serve = ["serve", "--http", "127.0.0.1:0", "--config", path];
    // Access rules, but no token to name a caller.
    refused(&serve, "error: the config has access rules");

    // Rules naming a caller without a token (only alice has one).
    let tokens = tempfile::tempdir().expect("dir");
    std::fs::write(tokens.path().join("alice"), ALICE).expect("write");
    let dir = tokens.path().to_str().expect("utf-8");
    let line = refused(
        &[&serve[..], &["--tokens-dir", dir]].concat(),
        "error: the config's access rules",
    );
    assert!(
        line.contains("without a token: bob; the tokens name alice."),
        "{line}"
    );

    // A rule that could never apply: the config is refused with it.
    let mut config = team();
    config["toolboxes"]["ops"]["mcpServers"]["deploy"] = fixture(&[]);
    config["toolboxes"]["ops"]["mcpServers"]["deploy"]["access"] = json!({"callers": ["bob"]});
    let (_dir, path) = write_config(&config);
    refused(
        &["check", "--config", path.to_str().expect("utf-8")],
        "deploy.access.callers[0]",
    );
}
