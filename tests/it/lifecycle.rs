//! Children start lazily, fail with their reasons, and never outlive toolshelf.

use serde_json::{Value, json};

use crate::harness::{
    config, error_text, fixture, redact_clock, start, start_dev, text, wait_all_gone,
};

#[tokio::test]
async fn a_toolbox_opens_with_the_servers_that_started() {
    let mut slow = fixture(&["--hang"]);
    slow["startupTimeout"] = json!(0.5);
    let shelf = start_dev(json!({
        "good": fixture(&[]),
        "refuses": fixture(&["--exit-at-start", "7"]),
        "hangs": slow,
        "missing": { "command": "toolshelf-no-such-program-xyz" },
    }))
    .await;
    let result = shelf.open("dev").await;
    assert_eq!(result.is_error, Some(false));
    let opened = result.structured_content.expect("structured");
    let servers = opened["servers"].as_array().expect("servers");
    let status: Vec<(&str, &str)> = servers
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or(""),
                s["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        status,
        [
            ("good", "ready"),
            ("refuses", "failed"),
            ("hangs", "failed"),
            ("missing", "failed")
        ]
    );
    // Each failed server carries its reason: exit status, stderr tail, timeout, spawn error.
    let summaries: Vec<Value> = servers
        .iter()
        .map(|server| {
            let mut summary = server.clone();
            summary["tools"] = json!(server["tools"].as_array().map_or(0, Vec::len));
            summary
        })
        .collect();
    insta::assert_json_snapshot!("partial_open_servers", summaries);
    // Only the good server is running; the failed ones leave nothing behind (the hung one is
    // stopped after the open answered).
    crate::harness::eventually("only the good server runs", || async {
        (shelf.children().len() == 1).then_some(())
    })
    .await;

    // A call to a failed server says why, and what to do.
    let call = shelf.use_tool("dev", "refuses", "echo", json!({})).await;
    insta::assert_snapshot!("call_to_failed_server", redact_clock(&error_text(&call)));
    shelf.close().await;
}

#[tokio::test]
async fn a_toolbox_where_everything_fails_is_an_error_and_stays_closed() {
    let shelf = start_dev(json!({
        "one": fixture(&["--exit-at-start", "1"]),
        "two": fixture(&["--exit-at-start", "2"]),
    }))
    .await;
    let result = shelf.open("dev").await;
    insta::assert_snapshot!("open_all_failed", error_text(&result));
    // Not "is not open": opening again could not help before the cause is fixed.
    let call = shelf.use_tool("dev", "one", "echo", json!({})).await;
    let said = error_text(&call);
    assert!(
        said.starts_with("Error executing tool 'echo' in server 'one' (toolbox 'dev'): the toolbox did not open, as this server could not start: initialize failed: the server closed the connection; the process exited with status 1")
            && said.ends_with("Once the cause is fixed, call open_toolbox {\"toolbox\":\"dev\"} again: it starts the server anew."),
        "{said}"
    );
    assert!(shelf.children().is_empty());
    shelf.close().await;
}

#[tokio::test]
async fn a_crashed_child_fails_its_call_with_the_reason_and_restarts_on_the_next_call() {
    let shelf = start_dev(json!({ "fixture": fixture(&[]) })).await;
    shelf.open("dev").await;
    let before = shelf.children();
    let crash = shelf.use_tool("dev", "fixture", "crash", json!({})).await;
    insta::assert_snapshot!("crash_during_call", error_text(&crash));
    // The toolbox stays open and the next call restarts the server transparently.
    let revived = shelf
        .use_tool("dev", "fixture", "echo", json!({"again": true}))
        .await;
    assert_eq!(text(&revived), r#"{"again":true}"#);
    let after = shelf.children();
    assert_eq!(after.len(), 1);
    assert_ne!(before, after, "a new process serves the call");
    shelf.close().await;
}

async fn started_children(config: &Value) -> (crate::harness::Shelf, Vec<u32>) {
    let shelf = start(config).await;
    for toolbox in ["a", "b"] {
        assert_eq!(shelf.open(toolbox).await.is_error, Some(false));
    }
    let children = shelf.children();
    assert_eq!(children.len(), 3);
    (shelf, children)
}

fn two_toolboxes() -> Value {
    config(&[
        (
            "a",
            "A",
            json!({ "one": fixture(&[]), "two": fixture(&[]) }),
        ),
        (
            "b",
            "B",
            // Not `exec`: the shell outlives the fixture, so only a stop of the whole group ends it.
            json!({ "shell": { "command": "sh", "args": ["-c", format!("{}; sleep 30", crate::harness::fixture_bin())] } }),
        ),
    ])
}

#[tokio::test]
async fn closing_stdin_stops_every_child_and_exits() {
    let (shelf, children) = started_children(&two_toolboxes()).await;
    let toolshelf = shelf.pid;
    shelf.close().await;
    assert_eq!(wait_all_gone(&[toolshelf]).await, Vec::<u32>::new());
    assert_eq!(
        wait_all_gone(&children).await,
        Vec::<u32>::new(),
        "children outlived toolshelf"
    );
}

/// A client that closes its input right after a call still gets the answer, as rmcp does for
/// the requests it handles; then toolshelf exits.
#[tokio::test]
async fn a_call_in_flight_when_the_input_ends_still_answers() {
    let dev = config(&[("dev", "", json!({ "fixture": fixture(&[]) }))]);
    let mut raw = crate::harness::RawClient::start(&dev).await;
    raw.open(1, "dev").await;
    let call = json!({"tool": {"toolbox": "dev", "server": "fixture", "name": "sleep"}, "arguments": {"ms": 300}});
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "use_tool", "arguments": call}});
    raw.send_line(&request.to_string()).await;
    raw.close_stdin();
    let answer = raw.next().await;
    assert_eq!(answer["id"], json!(2), "{answer}");
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

#[tokio::test]
async fn sigterm_stops_every_child_and_exits_zero() {
    let (mut shelf, children) = started_children(&two_toolboxes()).await;
    let pid = shelf.pid;
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exit = tokio::time::timeout(crate::harness::DEADLINE, shelf.process.wait())
        .await
        .expect("exits in time")
        .expect("exit status");
    assert_eq!(exit.code(), Some(0));
    assert_eq!(
        wait_all_gone(&children).await,
        Vec::<u32>::new(),
        "children outlived toolshelf"
    );
}

/// Every process in `/proc` whose process group is `group`.
fn group_members(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // After the command name: state, ppid, pgrp.
            let rest = stat.rfind(')').map(|at| &stat[at + 2..]).unwrap_or("");
            rest.split(' ').nth(2) == Some(group.to_string().as_str())
                && crate::harness::is_alive(*pid)
        })
        .collect()
}

#[tokio::test]
async fn what_a_server_leaves_in_its_process_group_is_stopped_with_it() {
    // The shell ends when the fixture ends (at the end of its input); the sleep it started
    // ignores SIGTERM and stays in the group.
    let shell = json!({ "command": "sh", "args": ["-c", format!("trap '' TERM; sleep 300 & {}", crate::harness::fixture_bin())] });
    let shelf = start_dev(json!({ "shell": shell })).await;
    assert_eq!(shelf.open("dev").await.is_error, Some(false));
    let group = shelf.children()[0];
    let members = group_members(group);
    assert!(members.len() >= 3, "sh, sleep, fixture: {members:?}");
    shelf.close().await;
    assert_eq!(wait_all_gone(&members).await, Vec::<u32>::new());
}

#[tokio::test]
async fn a_start_that_times_out_is_answered_at_once_and_stopped_afterwards() {
    // `--hang` never reads its input: only SIGTERM, after the first stop grace period, ends it.
    let mut hung = fixture(&["--hang"]);
    hung["startupTimeout"] = json!(0.3);
    let shelf = start_dev(json!({ "good": fixture(&[]), "hung": hung })).await;
    let opened = shelf.open("dev").await;
    let hung_pid = shelf
        .children()
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|arg| arg == b"--hang"))
        })
        .expect("the hung server is still there when the open answers: it is stopped afterwards");
    let servers = &opened.structured_content.expect("structured")["servers"];
    assert_eq!(servers[1]["status"], json!("failed"), "{servers}");
    assert!(
        servers[1]["error"]
            .as_str()
            .is_some_and(|error| error.contains("(startupTimeout)")),
        "{servers}"
    );
    assert_eq!(wait_all_gone(&[hung_pid]).await, Vec::<u32>::new());
}

#[tokio::test]
async fn a_server_that_went_idle_during_an_open_is_listed_with_its_tools() {
    let mut lazy = fixture(&[]);
    lazy["idleTimeout"] = json!(0.2);
    let shelf = start_dev(json!({
        "lazy": lazy,
        "slow": fixture(&["--init-delay-ms", "2000"]),
    }))
    .await;
    let opened = shelf.open("dev").await;
    let opened = opened.structured_content.expect("structured");
    let lazy = &opened["servers"][0];
    assert_eq!(lazy["name"], json!("lazy"));
    // Idle by the time the slow server is up (unless this machine is slower than 2 s a start).
    assert!(
        lazy["status"] == json!("idle") || lazy["status"] == json!("ready"),
        "{lazy}"
    );
    assert!(lazy.get("error").is_none(), "{lazy}");
    assert!(
        lazy["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty()),
        "{lazy}"
    );
    let result = shelf
        .use_tool("dev", "lazy", "echo", json!({"again": 1}))
        .await;
    assert_eq!(text(&result), r#"{"again":1}"#);
    shelf.close().await;
}
