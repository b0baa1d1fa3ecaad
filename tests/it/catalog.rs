//! Naming: aliases, overrides, tags, hidden tools, alias conflicts, suggestions, and the
//! machine-readable error every toolshelf failure carries.

use serde_json::{Value, json};

use crate::harness::{
    config, error_text, fixture, start, start_dev, start_logged, text, write_config,
};

/// The fixture with overrides for its `echo`, `structured`, `fail` and a tool it does not have.
fn renamed_fixture() -> Value {
    let mut server = fixture(&[]);
    server["tags"] = json!(["fixture", "testing"]);
    server["tools"] = json!({
        "echo": { "alias": "say", "description": "Says it back", "title": "Say", "tags": ["read-only", "fixture"] },
        "structured": { "alias": "answer" },
        "fail": { "hidden": true },
        "echoo": { "description": "a typo in the config" },
    });
    server
}

#[tokio::test]
async fn open_toolbox_shows_aliases_overrides_and_merged_tags_without_hidden_tools() {
    let shelf = start_dev(json!({ "fx": renamed_fixture() })).await;
    let opened = shelf.open("dev").await;
    assert_eq!(opened.is_error, Some(false), "{}", text(&opened));
    let opened = opened.structured_content.expect("structured");
    let tools = opened["servers"][0]["tools"].as_array().expect("tools");
    let echo = tools
        .iter()
        .find(|tool| tool["name"] == "echo")
        .expect("echo");
    insta::assert_json_snapshot!("renamed_echo", echo);
    assert!(
        tools.iter().all(|tool| tool["name"] != "fail"),
        "a hidden tool is listed"
    );
    assert_eq!(opened["servers"].as_array().map(Vec::len), Some(1));
    insta::assert_json_snapshot!("override_warnings", opened["warnings"]);
    let hidden = shelf.use_tool("dev", "fx", "fail", json!({})).await;
    assert!(
        error_text(&hidden)
            .starts_with("Error executing tool: Tool 'fail' not found in server 'fx'")
    );
    shelf.close().await;
}

#[tokio::test]
async fn an_alias_and_the_canonical_name_reach_the_same_tool_and_both_are_logged() {
    let (shelf, log) = start_logged(
        &config(&[("dev", "Dev", json!({ "fx": renamed_fixture() }))]),
        Some("warn,toolshelf=debug"),
    )
    .await;
    shelf.open("dev").await;
    let by_alias = shelf
        .use_tool("dev", "fx", "say", json!({"message": "hi"}))
        .await;
    let by_name = shelf
        .use_tool("dev", "fx", "echo", json!({"message": "hi"}))
        .await;
    assert_eq!(text(&by_alias), r#"{"message":"hi"}"#);
    assert_eq!(
        serde_json::to_value(&by_alias).ok(),
        serde_json::to_value(&by_name).ok()
    );
    let structured = shelf.use_tool("dev", "fx", "answer", json!({})).await;
    assert_eq!(structured.structured_content, Some(json!({"answer": 42})));
    shelf.close().await;
    let written = std::fs::read_to_string(log.path()).expect("log");
    assert!(
        written
            .lines()
            .any(|line| line.contains("tool=echo") && line.contains("called_as=say")),
        "the log records the alias and the canonical name"
    );
}

#[tokio::test]
async fn an_alias_that_is_another_tools_name_stops_the_open_with_the_fix() {
    let mut clashing = fixture(&[]);
    clashing["tools"] = json!({ "echo": { "alias": "sleep" } });
    let shelf = start(&config(&[
        ("dev", "Dev", json!({ "fx": clashing })),
        ("other", "Other", json!({ "fx": fixture(&[]) })),
    ]))
    .await;
    let result = shelf.open("dev").await;
    insta::assert_snapshot!("alias_conflict", error_text(&result));
    assert!(
        shelf.children().is_empty(),
        "a failed open left a process behind"
    );
    let call = shelf.use_tool("dev", "fx", "echo", json!({})).await;
    assert_eq!(
        error_text(&call),
        "Error executing tool: Toolbox 'dev' is not open"
    );
    // Another toolbox is not affected.
    assert_eq!(shelf.open("other").await.is_error, Some(false));
    shelf.close().await;
}

#[test]
fn check_reports_conflicts_and_overrides_for_missing_tools() {
    let mut clashing = fixture(&[]);
    clashing["tools"] = json!({ "echo": { "alias": "sleep" } });
    let (_dir, path) = write_config(&config(&[
        ("dev", "Dev", json!({ "fx": renamed_fixture() })),
        ("clash", "Clash", json!({ "fx": clashing })),
    ]));
    let output = crate::harness::toolshelf_std()
        .args(["check", "--config", path.to_str().expect("utf-8")])
        .env("RUST_LOG", "error")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run check");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let notes: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("warning: ") || line.starts_with("conflict: "))
        .collect();
    insta::assert_snapshot!("check_naming", notes.join("\n"));
}

#[tokio::test]
async fn typos_in_each_name_get_a_suggestion_aliases_included() {
    let shelf = start_dev(json!({ "fixture": renamed_fixture() })).await;
    shelf.open("dev").await;
    let mut texts = serde_json::Map::new();
    for (case, toolbox, server, name) in [
        ("toolbox", "Dev", "fixture", "echo"),
        ("server", "dev", "fixtures", "echo"),
        ("tool", "dev", "fixture", "ehco"),
        ("alias", "dev", "fixture", "sya"),
        ("case", "dev", "fixture", "ECHO"),
    ] {
        let result = shelf.use_tool(toolbox, server, name, json!({})).await;
        texts.insert(case.to_owned(), Value::String(error_text(&result)));
    }
    insta::assert_json_snapshot!("suggestions", texts);
    shelf.close().await;
}

#[tokio::test]
async fn every_toolshelf_error_carries_a_structured_error() {
    let mut slow = fixture(&[]);
    slow["callTimeout"] = json!(0.3);
    let mut clashing = fixture(&[]);
    clashing["tools"] = json!({ "echo": { "alias": "sleep" } });
    let shelf = start(&config(&[
        ("dev", "Dev", json!({ "fixture": fixture(&[]), "slow": slow, "broken": fixture(&["--exit-at-start", "3"]) })),
        ("closed", "Closed", json!({ "fixture": fixture(&[]) })),
        ("dead", "Dead", json!({ "only": fixture(&["--exit-at-start", "4"]) })),
        ("clash", "Clash", json!({ "fixture": clashing })),
    ]))
    .await;
    shelf.open("dev").await;
    let id = |toolbox: &str, server: &str, name: &str| json!({"toolbox": toolbox, "server": server, "name": name});
    let mut errors = serde_json::Map::new();
    let cases = [
        (
            "invalid_arguments",
            "use_tool",
            json!({"tool": {"toolbox": "", "server": "fixture", "nmae": "echo"}}),
        ),
        (
            "toolbox_unknown",
            "use_tool",
            json!({"tool": id("deb", "fixture", "echo")}),
        ),
        (
            "toolbox_not_open",
            "use_tool",
            json!({"tool": id("closed", "fixture", "echo")}),
        ),
        (
            "server_unknown",
            "use_tool",
            json!({"tool": id("dev", "fixtur", "echo")}),
        ),
        (
            "tool_unknown",
            "use_tool",
            json!({"tool": id("dev", "fixture", "ech")}),
        ),
        (
            "server_unavailable",
            "use_tool",
            json!({"tool": id("dev", "broken", "echo")}),
        ),
        (
            "timeout",
            "use_tool",
            json!({"tool": id("dev", "slow", "sleep"), "arguments": {"ms": 30_000}}),
        ),
        (
            "child_error",
            "use_tool",
            json!({"tool": id("dev", "fixture", "protocol_error")}),
        ),
        (
            "result_too_large",
            "use_tool",
            json!({"tool": id("dev", "fixture", "big"), "arguments": {"bytes": 20_000_000}}),
        ),
        (
            "toolbox_unavailable",
            "open_toolbox",
            json!({"toolbox": "dead"}),
        ),
        (
            "alias_conflict",
            "open_toolbox",
            json!({"toolbox": "clash"}),
        ),
    ];
    for (kind, tool, input) in cases {
        let result = shelf.call(tool, input).await;
        assert_eq!(result.is_error, Some(true), "{kind}");
        let error = result.structured_content.expect("structuredContent")["error"].clone();
        assert_eq!(error["kind"], json!(kind));
        errors.insert(kind.to_owned(), error);
    }
    insta::assert_json_snapshot!("structured_errors", errors);
    shelf.close().await;
}
