//! Calls forwarded to a child come back unchanged, concurrently, through filters and pages.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::harness::{config, error_text, fixture, start, start_dev, text};

fn dev() -> Value {
    config(&[("dev", "Fixture", json!({ "fixture": fixture(&[]) }))])
}

/// The result as the wire carries it.
fn wire(result: &CallToolResult) -> Value {
    serde_json::to_value(result).expect("serialize")
}

#[tokio::test]
async fn child_results_come_back_unchanged() {
    let shelf = start(&dev()).await;
    assert_eq!(shelf.open("dev").await.is_error, Some(false));
    let mut seen = serde_json::Map::new();
    for (tool, arguments) in [
        (
            "echo",
            json!({"message": "hello", "nested": {"n": [1, 2.5, null]}}),
        ),
        ("image", json!({})),
        ("mixed", json!({})),
        ("structured", json!({})),
        ("fail", json!({})),
    ] {
        let result = shelf.use_tool("dev", "fixture", tool, arguments).await;
        seen.insert(tool.to_owned(), wire(&result));
    }
    // A child's own isError result is not wrapped.
    assert_eq!(seen["fail"]["isError"], json!(true));
    assert_eq!(
        seen["fail"]["content"][0]["text"],
        json!("fixture failure: the tool ran and reported an error")
    );
    assert_eq!(seen["echo"]["_meta"], json!({"fixture": "echo"}));
    assert_eq!(
        seen["structured"]["structuredContent"],
        json!({"answer": 42})
    );
    insta::assert_json_snapshot!("forwarded_results", seen);
    shelf.close().await;
}

#[tokio::test]
async fn large_output_arrives_whole() {
    let shelf = start(&dev()).await;
    shelf.open("dev").await;
    for bytes in [100_000usize, 1_000_000, 8_000_000] {
        let result = shelf
            .use_tool("dev", "fixture", "big", json!({"bytes": bytes}))
            .await;
        let text = text(&result);
        assert_eq!(text.len(), bytes);
        assert!(text.bytes().all(|byte| byte == b'x'));
    }
    shelf.close().await;
}

#[tokio::test]
async fn arguments_default_to_an_empty_object() {
    let shelf = start(&dev()).await;
    shelf.open("dev").await;
    let result = shelf
        .call(
            "use_tool",
            json!({"tool": {"toolbox": "dev", "server": "fixture", "name": "echo"}}),
        )
        .await;
    assert_eq!(text(&result), "{}");
    shelf.close().await;
}

#[tokio::test]
async fn a_slow_call_does_not_hold_up_others() {
    let shelf = start_dev(json!({ "a": fixture(&[]), "b": fixture(&[]) })).await;
    shelf.open("dev").await;
    race_quick_calls_against_slow_ones(&shelf).await;
    shelf.close().await;
}

async fn race_quick_calls_against_slow_ones(shelf: &crate::harness::Shelf) {
    let slow_same_child = shelf.use_tool("dev", "a", "sleep", json!({"ms": 30_000}));
    let slow_other_child = shelf.use_tool("dev", "b", "sleep", json!({"ms": 30_000}));
    tokio::pin!(slow_same_child, slow_other_child);
    // Twenty quick calls to both children finish while both slow calls are still in flight.
    let quick = async {
        let calls = (0..20).map(|index| {
            let server = if index % 2 == 0 { "a" } else { "b" };
            shelf.use_tool("dev", server, "echo", json!({"i": index}))
        });
        futures::future::join_all(calls).await
    };
    tokio::select! {
        results = quick => {
            for (index, result) in results.iter().enumerate() {
                assert_eq!(text(result), format!("{{\"i\":{index}}}"));
            }
        }
        _ = &mut slow_same_child => panic!("the slow call finished first"),
        _ = &mut slow_other_child => panic!("the slow call finished first"),
    }
}

#[tokio::test]
async fn tool_lists_are_read_across_pages() {
    let shelf =
        start_dev(json!({ "paged": fixture(&["--page-size", "2"]), "whole": fixture(&[]) })).await;
    let opened = shelf
        .open("dev")
        .await
        .structured_content
        .expect("structured");
    let names = |server: &str| -> Vec<Value> {
        crate::harness::opened_tools(&opened)
            .iter()
            .filter(|tool| tool["server"] == server)
            .map(|tool| tool["name"].clone())
            .collect()
    };
    assert_eq!(names("paged").len(), 14);
    assert_eq!(names("paged"), names("whole"));
    shelf.close().await;
}

#[tokio::test]
async fn tool_filters_hide_tools_and_make_them_uncallable() {
    let mut filtered = fixture(&[]);
    filtered["toolFilters"] = json!(["echo", "sleep"]);
    let mut star = fixture(&[]);
    star["toolFilters"] = json!("*");
    let shelf = start_dev(json!({ "filtered": filtered, "star": star })).await;
    let opened = shelf
        .open("dev")
        .await
        .structured_content
        .expect("structured");
    let servers = &opened["servers"];
    let names = |server: &Value| -> Vec<Value> {
        let tools = server["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().map(|tool| tool["name"].clone()).collect()
    };
    assert_eq!(servers[0]["name"], json!("filtered"));
    assert_eq!(servers[0]["status"], json!("ready"));
    assert_eq!(names(&servers[0]), [json!("echo"), json!("sleep")]);
    assert_eq!(names(&servers[1]).len(), 14);
    let hidden = shelf.use_tool("dev", "filtered", "fail", json!({})).await;
    assert_eq!(
        error_text(&hidden),
        "Error executing tool: Tool 'fail' not found in server 'filtered'\nTools of this server: echo, sleep"
    );
    shelf.close().await;
}

#[tokio::test]
async fn concurrent_opens_share_one_start() {
    let shelf =
        start_dev(json!({ "slow": fixture(&["--init-delay-ms", "300"]), "fast": fixture(&[]) }))
            .await;
    let opens = (0..8).map(|_| shelf.open("dev"));
    let results = futures::future::join_all(opens).await;
    let first = results[0].structured_content.clone();
    for result in &results {
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, first);
    }
    assert_eq!(shelf.children().len(), 2, "one process per server");
    shelf.close().await;
}

#[tokio::test]
async fn agent_cancellation_reaches_the_child() {
    let events = tempfile::NamedTempFile::new().expect("events file");
    let events_path = events.path().to_str().expect("utf-8 path").to_owned();
    let shelf = start_dev(json!({ "fixture": fixture(&["--events", &events_path]) })).await;
    shelf.open("dev").await;
    let arguments = json!({"tool": {"toolbox": "dev", "server": "fixture", "name": "sleep"}, "arguments": {"ms": 60_000}});
    let params = rmcp::model::CallToolRequestParams::new("use_tool")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    let request =
        rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let handle = shelf
        .client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .expect("send");
    crate::harness::wait_for_line(events.path(), "start sleep").await;
    handle.cancel(Some("test".into())).await.expect("cancel");
    crate::harness::wait_for_line(events.path(), "cancelled sleep").await;
    // toolshelf and the child both stay usable.
    let after = shelf.use_tool("dev", "fixture", "echo", json!({})).await;
    assert_eq!(text(&after), "{}");
    shelf.close().await;
}

/// A `use_tool` call whose params carry a field the direct path does not take goes through rmcp's
/// request path instead, and gets the same answer: results, the child's errors, toolshelf's own.
/// Sessions that start with `initialize` are on 2025-11-25 at most, so no result carries
/// `resultType`, whatever the child's session said.
#[tokio::test]
async fn both_request_paths_answer_alike() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut raw = crate::harness::RawClient::start_on(&dev(), version).await;
        raw.open(1, "dev").await;
        for (n, tool) in [
            "echo",
            "structured",
            "fail",
            "protocol_error",
            "no_such_tool",
        ]
        .into_iter()
        .enumerate()
        {
            let call = json!({"tool": {"toolbox": "dev", "server": "fixture", "name": tool}, "arguments": {"a": [1, 2]}});
            let id = 10 + 2 * n as u64;
            let params = json!({"name": "use_tool", "arguments": call});
            let (_, direct) = raw.request(id, "tools/call", params.clone()).await;
            let mut unusual = params;
            unusual["x-unusual"] = json!(true);
            let (_, through_rmcp) = raw.request(id + 1, "tools/call", unusual).await;
            assert_eq!(direct["result"], through_rmcp["result"], "{version} {tool}");
            assert_eq!(direct["result"].get("resultType"), None, "{direct}");
        }
    }
}

/// The agent's `_meta` reaches the child: its own keys as written (trace context, vendor keys),
/// on both request paths; toolshelf's progress token replaces the agent's; MCP's own keys,
/// which describe the agent's hop to toolshelf, stay behind.
#[tokio::test]
async fn the_agents_meta_reaches_the_child_without_mcps_own_keys() {
    let (events, mut raw) = recorded_fixture().await;
    let call = |name: &str, meta: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{name}","method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"dev","server":"fixture","name":"{name}"}}}},"_meta":{meta}}}}}"#
        )
    };
    // The direct path: only the agent's keys.
    raw.send_line(&call(
        "echo",
        r#"{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","progressToken":"p","x.example/n":1.50}"#,
    ))
    .await;
    assert_eq!(raw.next().await["id"], json!("echo"));
    // rmcp's path (an MCP key in `_meta`): the MCP key does not reach the child.
    raw.send_line(&call(
        "structured",
        r#"{"io.modelcontextprotocol/clientInfo":{"name":"agent","version":"1"},"tracestate":"k=v"}"#,
    ))
    .await;
    assert_eq!(raw.next().await["id"], json!("structured"));
    let seen = std::fs::read_to_string(events.path()).expect("events");
    let metas: Vec<Value> = seen
        .lines()
        .filter_map(|line| line.strip_prefix("meta "))
        .map(|line| {
            let (_, meta) = line.split_once(' ').expect("name and meta");
            serde_json::from_str(meta).expect("JSON")
        })
        .collect();
    assert_eq!(metas.len(), 2, "{seen}");
    let direct = &metas[0];
    assert_eq!(
        direct["traceparent"],
        json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    );
    assert_eq!(direct["x.example/n"], json!(1.5));
    assert_ne!(direct["progressToken"], json!("p"), "toolshelf's own token");
    assert!(direct["progressToken"].is_number());
    assert_eq!(
        metas[1]
            .as_object()
            .map(|meta| meta.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["progressToken".to_owned(), "tracestate".to_owned()]),
        "{seen}"
    );
}

/// The agent's `logging/setLevel` reaches the child, and a child's log message reaches the agent
/// only at or above that level, its `logger` naming toolbox and server.
#[tokio::test]
async fn the_agents_log_level_reaches_the_child_and_filters_its_messages() {
    let (events, mut raw) = recorded_fixture().await;
    let (_, answer) = raw
        .request(2, "logging/setLevel", json!({"level": "warning"}))
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    crate::harness::wait_for_line(events.path(), "level warning").await;
    let log = |level: &str| json!({"name": "use_tool", "arguments": {"tool": {"toolbox": "dev", "server": "fixture", "name": "log"}, "arguments": {"level": level}}});
    let (mut seen, _) = raw.request(3, "tools/call", log("info")).await;
    let (more, _) = raw.request(4, "tools/call", log("error")).await;
    seen.extend(more);
    // Notifications travel beside answers: wait for the first one.
    let first = match seen
        .into_iter()
        .find(|message| message["method"] == json!("notifications/message"))
    {
        Some(message) => message,
        None => loop {
            let message = raw.next().await;
            if message["method"] == json!("notifications/message") {
                break message;
            }
        },
    };
    assert_eq!(
        first["params"],
        json!({"level": "error", "logger": "dev/fixture", "data": "hello from the fixture log at error"})
    );
}

/// A raw client on 2025-11-25 with toolbox `dev` open: one fixture that records what it sees in
/// the returned events file.
async fn recorded_fixture() -> (tempfile::NamedTempFile, crate::harness::RawClient) {
    let events = tempfile::NamedTempFile::new().expect("events file");
    let events_path = events.path().to_str().expect("utf-8 path").to_owned();
    let config = config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&["--events", &events_path]) }),
    )]);
    let mut raw = crate::harness::RawClient::start_on(&config, "2025-11-25").await;
    raw.open(1, "dev").await;
    (events, raw)
}

/// A child that asks the agent for what the agent did not declare (the fixture elicits; this
/// agent declared nothing) gets a JSON-RPC error at once that says why, and the agent gets the
/// child's failure of the call, not a hang.
#[tokio::test]
async fn a_child_that_asks_for_what_the_agent_did_not_declare_is_refused_at_once() {
    let config = config(&[("dev", "Fixture", json!({ "fixture": fixture(&["--ask"]) }))]);
    let mut raw = crate::harness::RawClient::start(&config).await;
    raw.open(1, "dev").await;
    let call = json!({"tool": {"toolbox": "dev", "server": "fixture", "name": "ask"}});
    let (_, answer) = raw
        .request(
            2,
            "tools/call",
            json!({"name": "use_tool", "arguments": call}),
        )
        .await;
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains(
            "elicitation/create from dev/fixture cannot be relayed: the MCP client connected to toolshelf did not declare the elicitation capability"
        ),
        "{text}"
    );
}

/// An agent on 2025-11-25 asks for a task of a child that speaks only 2026-07-28: that revision
/// has no `task` param and toolshelf offers it no tasks extension, so the child runs the call at
/// once and the agent gets the result itself (2025-11-25 lets a receiver answer so).
#[tokio::test]
async fn a_task_asked_of_a_child_on_2026_07_28_is_answered_with_the_result() {
    let config = config(&[(
        "dev",
        "Development",
        json!({ "modern": fixture(&["--protocol", "2026-07-28"]) }),
    )]);
    let mut raw = crate::harness::RawClient::start_on(&config, "2025-11-25").await;
    raw.open(1, "dev").await;
    let call = json!({
        "name": "use_tool",
        "task": {"ttl": 60000},
        "arguments": {"tool": {"toolbox": "dev", "server": "modern", "name": "echo"}, "arguments": {"a": 1}}
    });
    let (_, answer) = raw.request(2, "tools/call", call).await;
    assert_eq!(
        answer["result"]["content"],
        json!([{"type": "text", "text": r#"{"a":1}"#}]),
        "{answer}"
    );
    assert!(answer["result"].get("task").is_none(), "{answer}");
}
