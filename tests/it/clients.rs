//! Third-party MCP clients against toolshelf: fastmcp 4.1.2 (Python), which speaks protocol
//! 2026-07-28 by default (`server/discover`, no `initialize`), and in its legacy mode.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{DEADLINE, config, fixture, python_env, toolshelf_bin, write_config};

/// Runs tests/python/fastmcp_client.py `scenario` in `mode` against `toolshelf serve`; returns
/// what the client printed and toolshelf's exit status.
async fn fastmcp(scenario: &str, mode: &str) -> (Value, String) {
    let (dir, path) = write_config(&config(&[(
        "dev",
        "Development",
        json!({ "fixture": fixture(&[]) }),
    )]));
    let status_file = dir.path().join("status");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/fastmcp_client.py");
    let output = tokio::process::Command::new(python_env().join("bin/python"))
        .arg(&script)
        .args([scenario, mode, "--", "sh", "-c"])
        .arg(r#""$0" serve --config "$1"; echo $? > "$2""#)
        .arg(toolshelf_bin())
        .arg(&path)
        .arg(&status_file)
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(DEADLINE, output)
        .await
        .expect("the client finishes in time")
        .expect("run the client");
    assert!(
        output.status.success(),
        "fastmcp failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = serde_json::from_slice(&output.stdout).expect("the client printed JSON");
    let status = crate::harness::eventually("toolshelf exited", || async {
        std::fs::read_to_string(&status_file).ok()
    })
    .await;
    (seen, status.trim().to_owned())
}

#[tokio::test]
async fn fastmcp_on_2026_07_28_discovers_opens_and_calls() {
    let (seen, status) = fastmcp("session", "auto").await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    assert_eq!(seen["tools"], json!(["open_toolbox", "use_tool"]));
    assert_eq!(seen["opened"]["servers"][0]["status"], json!("ready"));
    assert_eq!(seen["echo"], json!([r#"{"said":"hello"}"#]));
    assert_eq!(seen["echo_is_error"], json!(false));
    assert_eq!(status, "0");
}

#[tokio::test]
async fn fastmcp_in_legacy_mode_initializes_opens_and_calls() {
    let (seen, status) = fastmcp("session", "legacy").await;
    assert_eq!(seen["protocol"], json!("2025-11-25"), "{seen}");
    assert_eq!(seen["echo"], json!([r#"{"said":"hello"}"#]));
    assert_eq!(status, "0");
}

#[tokio::test]
async fn a_client_that_discovers_and_leaves_is_a_normal_end() {
    let (seen, status) = fastmcp("leave", "auto").await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    assert_eq!(status, "0", "toolshelf's exit status");
}

#[tokio::test]
async fn empty_input_is_a_normal_end() {
    let (_dir, path) = write_config(&config(&[(
        "dev",
        "Development",
        json!({ "fixture": fixture(&[]) }),
    )]));
    let status = tokio::process::Command::new(toolshelf_bin())
        .args(["serve", "--config"])
        .arg(&path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let status = tokio::time::timeout(DEADLINE, status)
        .await
        .expect("toolshelf exits in time")
        .expect("run toolshelf");
    assert_eq!(status.code(), Some(0));
}
