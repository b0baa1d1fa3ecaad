//! Reloading the config while serving: SIGHUP (stdio here) and `--watch` (over HTTP here) swap
//! a good config in without dropping the session or a call in flight; unchanged servers keep
//! their children, changed ones restart once idle, removed ones stop, new toolboxes open; a
//! config with problems is refused with every problem logged, and the running one stays;
//! access rules apply to the next request of a session already open.

use std::{path::Path, process::Stdio};

use serde_json::{Value, json};

use crate::harness::{
    Shelf, config, eventually, fixture,
    http::{RawSession, serve_logged},
    spawn_with, text, write_config,
};

/// `dev` (a fixture whose `VERSION` is `version`, writing its calls' starts to `events`),
/// `keep` (a fixture), and `more` if asked.
fn shelf_config(version: &str, more: bool, events: &Path) -> Value {
    let mut dev = fixture(&["--events", &events.display().to_string()]);
    dev["env"] = json!({ "VERSION": version });
    let mut boxes = vec![
        ("dev", "Changes", json!({ "fixture": dev })),
        ("keep", "Stays", json!({ "fixture": fixture(&[]) })),
    ];
    if more {
        boxes.push(("more", "Added", json!({ "fixture": fixture(&[]) })));
    }
    config(&boxes)
}

fn hang_up(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

fn rewrite(path: &Path, config: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(config).expect("json")).expect("write");
}

async fn version(shelf: &Shelf) -> String {
    text(
        &shelf
            .use_tool("dev", "fixture", "env", json!({ "name": "VERSION" }))
            .await,
    )
}

#[tokio::test]
async fn sighup_swaps_in_a_good_config_and_keeps_the_running_one_on_a_bad_one() {
    let events = tempfile::NamedTempFile::new().expect("events file");
    let events = events.path();
    let (dir, path) = write_config(&shelf_config("1", false, events));
    let log = tempfile::NamedTempFile::new().expect("log");
    let stderr = Stdio::from(log.reopen().expect("log"));
    let shelf = spawn_with(dir, &path, &[("RUST_LOG", "info")], &[], stderr).await;
    shelf.open("dev").await;
    shelf.open("keep").await;
    assert_eq!(version(&shelf).await, "\"1\"");
    assert!(
        !shelf
            .use_tool("keep", "fixture", "echo", json!({}))
            .await
            .is_error
            .unwrap_or(false)
    );
    let before = shelf.children();
    assert_eq!(before.len(), 2, "{before:?}");

    // A call in flight while the config changes ends as it began.
    let (slept, ()) = tokio::join!(
        shelf.use_tool("dev", "fixture", "sleep", json!({ "ms": 1500 })),
        async {
            // Once the child has the call, not after a guessed time.
            eventually("the call reached the child", || async {
                let seen = std::fs::read_to_string(events).unwrap_or_default();
                seen.lines().any(|line| line == "start sleep").then_some(())
            })
            .await;
            rewrite(&path, &shelf_config("2", true, events));
            hang_up(shelf.pid);
        }
    );
    assert_eq!(slept.is_error, Some(false), "{slept:?}");

    // The changed server restarts with its new definition; the other keeps its child.
    eventually("dev answers from its new definition", || async {
        (version(&shelf).await == "\"2\"").then_some(())
    })
    .await;
    let after = eventually("the changed server's old child stopped", || async {
        let now = shelf.children();
        (now.len() == 2).then_some(now)
    })
    .await;
    let kept: Vec<&u32> = before.iter().filter(|pid| after.contains(pid)).collect();
    assert_eq!(kept.len(), 1, "one child kept: {before:?} then {after:?}");
    let added = shelf.open("more").await;
    assert_eq!(added.is_error, Some(false), "{added:?}");

    // A config with problems: refused, each problem logged, the running one stays.
    std::fs::write(
        &path,
        r#"{"toolboxes": {"dev": {"mcpServers": {}}}, "extra": 1}"#,
    )
    .expect("write");
    hang_up(shelf.pid);
    let logged = eventually("the refusal is logged", || async {
        let text = std::fs::read_to_string(log.path()).unwrap_or_default();
        text.contains("the running one stays").then_some(text)
    })
    .await;
    assert!(
        logged.contains("toolboxes.dev.mcpServers: is empty"),
        "{logged}"
    );
    let kept = "the config has problems, so the running one stays: fix them, then save the file again (with --watch) or send SIGHUP";
    assert!(logged.contains(kept), "{logged}");
    crate::docs::assert_quoted(kept);
    assert!(logged.contains("extra: unknown key"), "{logged}");
    assert_eq!(shelf.open("more").await.is_error, Some(false));

    // A removed toolbox is gone at the next request.
    rewrite(&path, &shelf_config("2", false, events));
    hang_up(shelf.pid);
    eventually("more is gone", || async {
        let opened = shelf.open("more").await;
        text(&opened).contains("does not exist").then_some(())
    })
    .await;
    shelf.close().await;
}

/// `--watch` over HTTP: Bob's open session may use `ops` at its next request once the saved
/// config admits him; nothing restarts.
#[tokio::test]
async fn a_watched_config_changes_what_an_open_session_may_use() {
    const BOB: &str = "bob-t0ken-9876543210";
    let team = |bob_on_ops: bool| {
        let mut config = config(&[
            ("dev", "Everyone", json!({ "fixture": fixture(&[]) })),
            ("ops", "Operations", json!({ "opsbox": fixture(&[]) })),
        ]);
        config["access"] = json!({ "callers": ["default", "bob"] });
        let ops = if bob_on_ops {
            json!(["default", "bob"])
        } else {
            json!(["default"])
        };
        config["toolboxes"]["ops"]["access"] = json!({ "callers": ops });
        config
    };
    let tokens = tempfile::tempdir().expect("dir");
    std::fs::write(tokens.path().join("bob"), BOB).expect("write");
    let (_dir, path) = write_config(&team(false));
    let dir = tokens.path().to_str().expect("utf-8");
    let (_process, port) = serve_logged(
        &path,
        "default-t0ken-1111111111",
        &["--tokens-dir", dir, "--watch"],
        Stdio::null(),
    )
    .await;
    let bob = RawSession::open_with(port, Some(BOB)).await;
    let open_ops = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "open_toolbox", "arguments": {"toolbox": "ops"}}})
    };
    let refused = bob.post(open_ops(2)).await;
    assert!(refused.body.contains("does not exist"), "{}", refused.body);

    rewrite(&path, &team(true));
    let mut id = 3;
    let opened = eventually("Bob's session may open ops", || {
        id += 1;
        let asked = bob.post(open_ops(id));
        async move {
            let answer = asked.await;
            answer.body.contains("opsbox").then_some(answer.body)
        }
    })
    .await;
    assert!(!opened.contains("isError\":true"), "{opened}");
}
