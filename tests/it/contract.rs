//! The agent-facing contract: exactly two tools, the instructions, open_toolbox's shape, and
//! every error text of use_tool's table.

use serde_json::{Value, json};

use crate::harness::{config, error_text, fixture, start, text};

fn two_toolboxes() -> Value {
    config(&[
        (
            "dev",
            "Fixture tools for development",
            json!({ "fixture": fixture(&[]), "second": fixture(&["--name", "second"]) }),
        ),
        ("ops", "Operations", json!({ "only": fixture(&[]) })),
    ])
}

#[tokio::test]
async fn tools_list_is_exactly_the_two_meta_tools() {
    let shelf = start(&two_toolboxes()).await;
    let tools = shelf.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["open_toolbox", "use_tool"]);
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("additionalProperties"),
            Some(&json!(false))
        );
    }
    insta::assert_json_snapshot!("tools_list", tools);
    // Nothing starts before a toolbox is opened.
    assert!(
        shelf.children().is_empty(),
        "children started before open_toolbox"
    );
    shelf.close().await;
}

#[tokio::test]
async fn instructions_list_toolboxes_and_a_correct_example() {
    let shelf = start(&two_toolboxes()).await;
    let info = shelf.client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|server| server.name.as_str()),
        Some("toolshelf")
    );
    let instructions = info.instructions.clone().expect("instructions");
    insta::assert_snapshot!("instructions", instructions);

    // Step 1 of the example works as written; step 2 is a pattern that cannot be taken for a
    // complete call (its arguments are a placeholder), filled in here from the open result.
    let step_1 = instructions
        .lines()
        .find_map(|line| line.strip_prefix("1. open_toolbox "))
        .expect("step 1");
    let open = shelf
        .call(
            "open_toolbox",
            serde_json::from_str(step_1).expect("step 1 is JSON"),
        )
        .await;
    assert_eq!(open.is_error, Some(false));
    let step_2 = instructions
        .lines()
        .find_map(|line| line.strip_prefix("2. use_tool "))
        .expect("step 2");
    assert!(step_2.contains(r#""arguments":ARGS}"#), "{step_2}");
    let result = shelf
        .use_tool("dev", "fixture", "echo", json!({"message": "hi"}))
        .await;
    assert_eq!(text(&result), r#"{"message":"hi"}"#);
    shelf.close().await;
}

#[tokio::test]
async fn open_toolbox_returns_compact_metadata_once_as_text_and_structured() {
    let shelf = start(&two_toolboxes()).await;
    let result = shelf.open("dev").await;
    assert_eq!(result.is_error, Some(false));
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let text = text(&result);
    assert!(
        !text.contains('\n') && !text.contains(": "),
        "text is compact JSON"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("text is JSON"),
        structured
    );
    insta::assert_json_snapshot!("open_toolbox_dev", structured);

    // Re-opening answers the same without starting anything new.
    let before = shelf.children();
    assert_eq!(before.len(), 2);
    let again = shelf.open("dev").await;
    assert_eq!(again.structured_content, Some(structured));
    let mut after = shelf.children();
    after.sort_unstable();
    let mut before = before;
    before.sort_unstable();
    assert_eq!(before, after, "re-open restarted a child");
    shelf.close().await;
}

#[tokio::test]
async fn every_text_of_use_tools_error_table() {
    let shelf = start(&two_toolboxes()).await;
    let mut texts = serde_json::Map::new();
    let mut record = |case: &str, result: rmcp::model::CallToolResult| {
        texts.insert(case.to_owned(), Value::String(error_text(&result)));
    };

    // Before opening: not open (the text is the table's; the structured part has the next
    // step), unknown toolbox.
    let not_open = shelf.use_tool("ops", "only", "echo", json!({})).await;
    let error = &not_open.structured_content.as_ref().expect("structured")["error"];
    assert_eq!(
        error["next"],
        json!(r#"call open_toolbox {"toolbox":"ops"} first"#),
        "{error}"
    );
    record("toolbox_not_open", not_open);
    record(
        "toolbox_unknown",
        shelf.use_tool("dve", "fixture", "echo", json!({})).await,
    );
    assert!(shelf.open("dev").await.is_error == Some(false));

    // Validation, before anything else.
    let cases = [
        (
            "empty_toolbox",
            json!({"tool": {"toolbox": "", "server": "fixture", "name": "echo"}}),
        ),
        (
            "empty_server",
            json!({"tool": {"toolbox": "dev", "server": "", "name": "echo"}}),
        ),
        (
            "empty_name",
            json!({"tool": {"toolbox": "dev", "server": "fixture", "name": ""}}),
        ),
        (
            "all_empty",
            json!({"tool": {"toolbox": "", "server": "", "name": ""}}),
        ),
        (
            "unknown_key_in_tool",
            json!({"tool": {"toolbox": "dev", "server": "fixture", "tool": "echo"}}),
        ),
        (
            "unknown_top_level_key",
            json!({"tool": {"toolbox": "dev", "server": "fixture", "name": "echo"}, "args": {}}),
        ),
        ("missing_tool", json!({"arguments": {}})),
        ("tool_not_an_object", json!({"tool": "dev/fixture/echo"})),
        (
            "name_not_a_string",
            json!({"tool": {"toolbox": "dev", "server": "fixture", "name": 7}}),
        ),
        (
            "arguments_not_an_object",
            json!({"tool": {"toolbox": "dev", "server": "fixture", "name": "echo"}, "arguments": [1]}),
        ),
        (
            "empty_and_unknown",
            json!({"tool": {"toolbox": "", "server": "fixture", "name": "echo", "extra": 1}}),
        ),
    ];
    for (case, input) in cases {
        record(case, shelf.call("use_tool", input).await);
    }

    // Lookups.
    record(
        "server_not_found",
        shelf.use_tool("dev", "fixtrue", "echo", json!({})).await,
    );
    record(
        "server_not_found_no_close_match",
        shelf.use_tool("dev", "zzz", "echo", json!({})).await,
    );
    record(
        "tool_not_found",
        shelf.use_tool("dev", "fixture", "ecko", json!({})).await,
    );
    record(
        "tool_not_found_no_close_match",
        shelf
            .use_tool("dev", "fixture", "launch_rockets", json!({}))
            .await,
    );

    // Downstream errors.
    record(
        "downstream_protocol_error",
        shelf
            .use_tool("dev", "fixture", "protocol_error", json!({}))
            .await,
    );
    record(
        "downstream_crash",
        shelf.use_tool("dev", "second", "crash", json!({})).await,
    );

    // open_toolbox's own errors.
    record("open_unknown", shelf.open("opps").await);
    record("open_empty", shelf.open("").await);
    record(
        "open_unknown_key",
        shelf
            .call("open_toolbox", json!({"toolbox": "dev", "force": true}))
            .await,
    );
    record("open_missing", shelf.call("open_toolbox", json!({})).await);

    // The table's texts, exactly.
    let exact = [
        (
            "toolbox_not_open",
            "Error executing tool: Toolbox 'ops' is not open",
        ),
        ("empty_toolbox", "toolbox: Toolbox name cannot be empty"),
        ("empty_server", "server: Server name cannot be empty"),
        ("empty_name", "name: Tool name cannot be empty"),
    ];
    for (case, expected) in exact {
        assert_eq!(texts[case], expected, "{case}");
    }
    let starts = [
        (
            "server_not_found",
            "Error executing tool: Server 'fixtrue' not found in toolbox 'dev'",
        ),
        (
            "tool_not_found",
            "Error executing tool: Tool 'ecko' not found in server 'fixture'",
        ),
        (
            "unknown_key_in_tool",
            "Invalid tool invocation parameters: ",
        ),
        (
            "downstream_protocol_error",
            "Error executing tool 'protocol_error' in server 'fixture' (toolbox 'dev'): ",
        ),
        (
            "downstream_crash",
            "Error executing tool 'crash' in server 'second' (toolbox 'dev'): ",
        ),
    ];
    for (case, prefix) in starts {
        let text = texts[case].as_str().unwrap_or_default();
        assert!(text.starts_with(prefix), "{case}: {text}");
    }
    insta::assert_json_snapshot!("use_tool_error_table", texts);
    shelf.close().await;
}

#[tokio::test]
async fn unknown_tool_name_is_a_protocol_error() {
    let shelf = start(&two_toolboxes()).await;
    let params = rmcp::model::CallToolRequestParams::new("open_tooolbox");
    let error = shelf
        .client
        .call_tool(params)
        .await
        .expect_err("an unknown tool is a protocol error");
    insta::assert_snapshot!("unknown_meta_tool", error.to_string());
    shelf.close().await;
}

#[tokio::test]
async fn the_default_log_has_no_line_for_requests_the_agent_got_an_answer_for() {
    let (shelf, log) = crate::harness::start_logged(
        &crate::harness::config(&[("dev", "Dev", json!({ "fixture": fixture(&[]) }))]),
        None,
    )
    .await;
    let params = rmcp::model::CallToolRequestParams::new("no_such_tool");
    let refused = shelf.client.call_tool(params).await;
    assert!(refused.is_err());
    shelf.open("dev").await;
    shelf.close().await;
    let logged = std::fs::read_to_string(log.path()).expect("log");
    assert_eq!(logged, "");
}
