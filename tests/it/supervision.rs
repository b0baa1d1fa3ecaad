//! Children that crash, hang, go quiet or talk too much: restarts with backoff, timeouts,
//! progress, cancellation, changed tool lists, idle stops, size limits, and no orphans.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    RawClient, children_of, error_text, eventually, fixture, fixture_bin, redact_clock, start_dev,
    text, wait_all_gone,
};

fn tool_names(opened: &rmcp::model::CallToolResult) -> Vec<String> {
    crate::harness::opened_tools(opened.structured_content.as_ref().expect("structured"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_server_that_keeps_failing_backs_off_and_says_until_when() {
    let flag = tempfile::tempdir().expect("temp dir");
    let flag_path = flag.path().join("fail");
    let flag_arg = flag_path.to_str().expect("utf-8").to_owned();
    let shelf = start_dev(json!({ "flaky": fixture(&["--fail-if-exists", &flag_arg]) })).await;
    shelf.open("dev").await;

    // It crashes; from now on it cannot start.
    std::fs::write(&flag_path, "").expect("flag");
    shelf.use_tool("dev", "flaky", "crash", json!({})).await;
    // The first restart is immediate, and fails.
    let first = shelf.use_tool("dev", "flaky", "echo", json!({})).await;
    // The next call comes before the backoff ends: no process is started.
    let refused = shelf.use_tool("dev", "flaky", "echo", json!({})).await;
    assert!(
        shelf.children().is_empty(),
        "a start was attempted during the backoff"
    );
    insta::assert_snapshot!(
        "backoff",
        format!(
            "{}\n---\n{}",
            redact_clock(&error_text(&first)),
            redact_clock(&error_text(&refused))
        )
    );

    // Once it can start again, a call after the wait brings it back.
    std::fs::remove_file(&flag_path).expect("unflag");
    let revived = eventually("the server starts again after its backoff", || async {
        let result = shelf
            .use_tool("dev", "flaky", "echo", json!({"back": 1}))
            .await;
        (result.is_error != Some(true)).then_some(result)
    })
    .await;
    assert_eq!(text(&revived), r#"{"back":1}"#);
    shelf.close().await;
}

#[tokio::test]
async fn a_changed_tool_list_reaches_the_next_open_toolbox() {
    let list = tempfile::NamedTempFile::new().expect("list file");
    let list_arg = list.path().to_str().expect("utf-8").to_owned();
    let shelf = start_dev(json!({ "fixture": fixture(&["--extra-tools-file", &list_arg]) })).await;
    assert!(!tool_names(&shelf.open("dev").await).contains(&"grown".to_owned()));

    // The child announces a change: toolshelf re-lists it.
    std::fs::write(list.path(), "grown\n").expect("write list");
    shelf
        .use_tool("dev", "fixture", "notify_list_changed", json!({}))
        .await;
    eventually("open_toolbox shows the new tool", || async {
        tool_names(&shelf.open("dev").await)
            .contains(&"grown".to_owned())
            .then_some(())
    })
    .await;

    // A restarted child with a different list: the next open shows it.
    std::fs::write(list.path(), "reborn\n").expect("write list");
    shelf.use_tool("dev", "fixture", "crash", json!({})).await;
    shelf.use_tool("dev", "fixture", "echo", json!({})).await;
    let names = tool_names(&shelf.open("dev").await);
    assert!(names.contains(&"reborn".to_owned()) && !names.contains(&"grown".to_owned()));
    shelf.close().await;
}

#[tokio::test]
async fn a_call_timeout_names_the_limit_and_cancels_the_call_at_the_child() {
    let events = tempfile::NamedTempFile::new().expect("events");
    let events_arg = events.path().to_str().expect("utf-8").to_owned();
    let mut server = fixture(&["--events", &events_arg]);
    server["callTimeout"] = json!(0.5);
    let shelf = start_dev(json!({ "slow": server })).await;
    shelf.open("dev").await;
    let result = shelf
        .use_tool("dev", "slow", "sleep", json!({"ms": 30_000}))
        .await;
    let message = error_text(&result);
    let (head, tail) = message.split_once("(callTimeout; ").expect("elapsed time");
    assert_eq!(
        head,
        "Error executing tool 'sleep' in server 'slow' (toolbox 'dev'): the server gave no answer within 500ms "
    );
    assert!(
        tail.ends_with(" in all) and was told to cancel the call; it did not report a failure: check the server's log for this call, and raise callTimeout if the tool needs longer"),
        "{tail}"
    );
    crate::docs::assert_quoted(&format!(
        "the server gave no answer within 60s (callTimeout; 60.0s{}",
        tail.split_once('s').map_or("", |(_, rest)| rest)
    ));
    crate::harness::wait_for_line(events.path(), "cancelled sleep").await;
    shelf.close().await;
}

#[tokio::test]
async fn progress_restarts_the_call_timer() {
    let mut server = fixture(&[]);
    server["callTimeout"] = json!(2.0);
    let shelf = start_dev(json!({ "fixture": server })).await;
    shelf.open("dev").await;
    // 12 notifications 300 ms apart: 3.6 s in all, never 2 s without progress.
    let values: Vec<u32> = (1..=12).collect();
    let result = shelf
        .use_tool(
            "dev",
            "fixture",
            "progress",
            json!({"values": values, "interval_ms": 300}),
        )
        .await;
    assert_eq!(text(&result), "sent 12 progress notifications");
    shelf.close().await;
}

/// On both request paths: the direct one, and rmcp's (taken by a call with params the direct
/// path does not read), where progress goes through the agent's rmcp peer.
#[tokio::test]
async fn progress_reaches_the_agent_with_its_token_in_order_and_never_after_the_answer() {
    let mut client = RawClient::start(&crate::harness::config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&[]) }),
    )]))
    .await;
    client.open(1, "dev").await;
    for (id, through_rmcp) in [(2, false), (4, true)] {
        let mut call = json!({
            "name": "use_tool",
            "arguments": {
                "tool": {"toolbox": "dev", "server": "fixture", "name": "progress"},
                "arguments": {"values": [1, 3, 2, 3, 4, 5], "interval_ms": 10}
            },
            "_meta": {"progressToken": "agent-token-7"}
        });
        if through_rmcp {
            call["x-unusual"] = json!(true);
        }
        let (before, answer) = client.request(id, "tools/call", call).await;
        assert_eq!(
            answer["result"]["content"][0]["text"],
            json!("sent 6 progress notifications")
        );
        let progress: Vec<f64> = before
            .iter()
            .filter(|message| message["method"] == "notifications/progress")
            .map(|message| {
                assert_eq!(message["params"]["progressToken"], json!("agent-token-7"));
                message["params"]["progress"].as_f64().expect("number")
            })
            .collect();
        assert!(!progress.is_empty(), "no progress reached the agent");
        assert!(
            progress.windows(2).all(|pair| pair[0] < pair[1]),
            "{progress:?}"
        );
        assert!(
            progress
                .iter()
                .all(|value| [1.0, 3.0, 4.0, 5.0].contains(value)),
            "{progress:?}"
        );
        // Nothing about the call follows its answer.
        let (after, _) = client.request(id + 1, "ping", json!({})).await;
        assert!(after.is_empty(), "{after:?}");
    }
}

#[tokio::test]
async fn lines_that_are_not_messages_get_json_rpc_errors_and_toolshelf_keeps_serving() {
    let mut client = RawClient::start(&crate::harness::config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&[]) }),
    )]))
    .await;
    let mut answers = serde_json::Map::new();
    for (case, line) in [
        ("not_json", "this is not JSON {"),
        (
            "truncated_json",
            "{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\"",
        ),
        (
            "request_with_a_bad_method",
            "{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": 7}",
        ),
        ("not_an_object", "[1, 2, 3]"),
    ] {
        client.send_line(line).await;
        let answer = client.next().await;
        answers.insert(case.to_owned(), answer);
    }
    // A notification that cannot be read gets no answer; the ping after it does.
    client
        .send_line(
            "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/unheard_of\", \"params\": 3}",
        )
        .await;
    let (unanswered, pong) = client.request(6, "ping", json!({})).await;
    assert!(unanswered.is_empty(), "{unanswered:?}");
    assert_eq!(pong["result"], json!({}));
    insta::assert_json_snapshot!("unreadable_lines", answers);
    let (_, listed) = client.request(7, "tools/list", json!({})).await;
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn an_idle_child_is_stopped_and_the_next_call_starts_it_again() {
    let mut server = fixture(&[]);
    server["idleTimeout"] = json!(0.3);
    let shelf = start_dev(json!({ "lazy": server, "busy": fixture(&[]) })).await;
    shelf.open("dev").await;
    assert_eq!(shelf.children().len(), 2);
    eventually("the idle child is stopped", || async {
        (shelf.children().len() == 1).then_some(())
    })
    .await;
    let opened = shelf.open("dev").await;
    assert_eq!(opened.is_error, Some(false));
    let result = shelf
        .use_tool("dev", "lazy", "echo", json!({"woke": true}))
        .await;
    assert_eq!(text(&result), r#"{"woke":true}"#);
    shelf.close().await;
}

#[tokio::test]
async fn results_over_the_message_limits_fail_with_the_limit_named() {
    let shelf = start_dev(json!({ "fixture": fixture(&[]) })).await;
    shelf.open("dev").await;
    // Read whole from the child, too large for the agent's side.
    let over_agent = shelf
        .use_tool("dev", "fixture", "big", json!({"bytes": 20_000_000}))
        .await;
    // Too large to read from the child at all: the child is stopped, the call fails at once.
    let over_child = shelf
        .use_tool("dev", "fixture", "big", json!({"bytes": 70_000_000}))
        .await;
    insta::assert_snapshot!(
        "message_limits",
        format!(
            "{}\n---\n{}",
            error_text(&over_agent),
            error_text(&over_child)
        )
    );
    let after = shelf.use_tool("dev", "fixture", "echo", json!({})).await;
    assert_eq!(text(&after), "{}");
    shelf.close().await;
}

/// Every descendant of `pid`, from /proc.
fn tree(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        for child in children_of(parent) {
            all.push(child);
            queue.push(child);
        }
    }
    all
}

#[tokio::test]
async fn sigkill_of_toolshelf_takes_every_child_with_it() {
    let everything = crate::harness::npm_server("mcp-server-everything", &[]);
    let shelf = crate::harness::start(&crate::harness::config(&[(
        "dev",
        "Tree",
        json!({
            "plain": fixture(&[]),
            "shell": { "command": "sh", "args": ["-c", format!("{} --name shell; sleep 30", fixture_bin())] },
            // A grandchild that ignores SIGTERM and never reads stdin: the parent-death signal
            // reaches only the server it was started by.
            "stubborn": { "command": "sh", "args": ["-c", format!("trap '' TERM; sleep 300 & exec {} --name stubborn", fixture_bin())] },
            "node": everything,
        }),
    )]))
    .await;
    let opened = shelf.open("dev").await;
    let servers: Vec<Value> = opened.structured_content.expect("structured")["servers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        servers.iter().all(|server| server["status"] == "ready"),
        "{servers:?}"
    );
    let pid = shelf.pid;
    let mut shelf = shelf;
    let descendants = tree(pid);
    assert!(
        descendants.len() >= 6,
        "sh and its fixture, the stubborn fixture and its sleep, the plain fixture, node: {descendants:?}"
    );

    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let _ = shelf.process.wait().await;
    // Within 2 s, nothing of the tree may be left.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    let mut alive = descendants.clone();
    while !alive.is_empty() && tokio::time::Instant::now() < deadline {
        alive.retain(|pid| crate::harness::is_alive(*pid));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        alive,
        Vec::<u32>::new(),
        "processes outlived a SIGKILLed toolshelf"
    );
    drop(shelf);
    let _ = wait_all_gone(&descendants).await;
}

#[tokio::test]
async fn child_log_messages_reach_the_log_and_env_values_never_do() {
    let mut server = fixture(&[]);
    server["env"] = json!({ "SECRET_TOKEN": "s3cr3t-value-in-config" });
    let (shelf, log) = crate::harness::start_logged(
        &crate::harness::config(&[("dev", "Fixture", json!({ "fixture": server }))]),
        Some("debug"),
    )
    .await;
    shelf.open("dev").await;
    shelf.use_tool("dev", "fixture", "log", json!({})).await;
    // (That the value does reach the child is checked by the interop env test.)
    eventually("the child's log message is in toolshelf's log", || async {
        std::fs::read_to_string(log.path())
            .unwrap_or_default()
            .contains("hello from the fixture log")
            .then_some(())
    })
    .await;
    shelf.close().await;
    let written = std::fs::read_to_string(log.path()).expect("log");
    let leaks: Vec<&str> = written
        .lines()
        .filter(|line| line.contains("s3cr3t-value-in-config"))
        .collect();
    assert!(leaks.is_empty(), "an env value reached the log: {leaks:#?}");
}
