//! The audit log (`serve --audit-log FILE`): a JSON line per call, open and search, on stdio and
//! over HTTP with named callers; the arguments' digest but never their values; the file the
//! owner's alone, moved to FILE.1 past its size.

use std::{os::unix::fs::PermissionsExt, path::Path, process::Stdio};

use serde_json::{Value, json};

use crate::harness::{
    config, eventually, fixture,
    http::{RawSession, serve_logged, use_tool_request},
    spawn_with, write_config,
};

const SECRET: &str = "hunter2-argument-value";

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

fn dev() -> Value {
    config(&[("dev", "Fixture", json!({"fixture": fixture(&[])}))])
}

#[tokio::test]
async fn every_call_open_and_search_is_a_line_without_the_arguments() {
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("audit.jsonl");
    let (config_dir, path) = write_config(&dev());
    let audit = log.to_str().expect("utf-8");
    let shelf = spawn_with(
        config_dir,
        &path,
        &[],
        &["--audit-log", audit],
        Stdio::null(),
    )
    .await;
    shelf.open("dev").await;
    let arguments = json!({"said": SECRET});
    shelf
        .use_tool("dev", "fixture", "echo", arguments.clone())
        .await;
    shelf.use_tool("dev", "fixture", "ecko", json!({})).await;
    shelf
        .call("open_toolbox", json!({"query": "echo", "limit": 2}))
        .await;
    shelf.close().await;

    let lines = records(&log);
    let events: Vec<&str> = lines.iter().filter_map(|r| r["event"].as_str()).collect();
    assert_eq!(events, ["open", "call", "call", "search"], "{lines:?}");
    let (open, call, unknown, search) = (&lines[0], &lines[1], &lines[2], &lines[3]);
    assert_eq!(
        (
            &open["toolbox"],
            &open["outcome"],
            &open["session"],
            &open["caller"]
        ),
        (&json!("dev"), &json!("ok"), &json!("stdio"), &Value::Null)
    );
    assert_eq!(
        (
            &call["toolbox"],
            &call["server"],
            &call["tool"],
            &call["outcome"]
        ),
        (
            &json!("dev"),
            &json!("fixture"),
            &json!("echo"),
            &json!("ok")
        )
    );
    assert!(call["revision"].as_u64().is_some(), "{call}");
    assert!(call["ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{call}");
    assert!(
        call["time"]
            .as_str()
            .is_some_and(|time| time.len() == 24 && time.ends_with('Z')),
        "{call}"
    );
    // The digest of the arguments as the agent sent them: compact JSON here.
    let sent = serde_json::to_string(&arguments).expect("JSON");
    assert_eq!(
        call["digest"],
        json!(format!("sha256:{}", sha256_hex(sent.as_bytes())))
    );
    assert_eq!(unknown["outcome"], "tool_unknown", "{unknown}");
    assert_eq!(search["outcome"], "ok", "{search}");
    assert_eq!(
        search["digest"],
        json!(format!("sha256:{}", sha256_hex(b"echo")))
    );
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(!text.contains(SECRET), "an argument reached the audit log");
    // docs/audit.md describes every field a record has.
    let docs = crate::docs::document("docs/audit.md");
    for key in call.as_object().expect("a record").keys() {
        assert!(docs.contains(&format!("`{key}`")), "docs/audit.md: {key}");
    }
    let mode = std::fs::metadata(&log).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test]
async fn over_http_each_line_names_its_caller_and_the_file_moves_aside_past_its_size() {
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("audit.jsonl");
    let tokens = dir.path().join("tokens");
    std::fs::create_dir(&tokens).expect("dir");
    std::fs::write(tokens.join("alice"), "alice-t0ken-0123456789").expect("write");
    let (_config_dir, path) = write_config(&dev());
    let (audit, tokens) = (
        log.to_str().expect("utf-8"),
        tokens.to_str().expect("utf-8"),
    );
    let more = [
        "--tokens-dir",
        tokens,
        "--audit-log",
        audit,
        "--audit-log-max-bytes",
        "400",
    ];
    let (_process, port) = serve_logged(&path, "", &more, Stdio::null()).await;
    let alice = RawSession::open_with(port, Some("alice-t0ken-0123456789")).await;
    alice
        .post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "open_toolbox", "arguments": {"toolbox": "dev"}}}))
        .await;
    for id in 3..6 {
        alice
            .post(use_tool_request(id, "echo", json!({"n": id}), None))
            .await;
    }
    let moved = dir.path().join("audit.jsonl.1");
    let (now, before) = eventually("the log moved aside", || async {
        let (now, before) = (records(&log), records(&moved));
        (now.len() + before.len() >= 2 && !before.is_empty()).then_some((now, before))
    })
    .await;
    assert!(
        now.iter()
            .chain(&before)
            .any(|record| record["event"] == "call"),
        "{now:?} {before:?}"
    );
    for record in now.iter().chain(&before) {
        assert_eq!(record["caller"], "alice", "{record}");
        assert_eq!(
            record["session"].as_str().map(str::len),
            Some(8),
            "{record}"
        );
    }
    assert!(std::fs::metadata(&log).expect("meta").len() <= 400);
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
