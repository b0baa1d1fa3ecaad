//! The same flows against third-party servers from npm (pinned in tests/interop/package.json):
//! what the agent gets through toolshelf equals what a client gets from the server directly.

use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::RunningService,
    transport::TokioChildProcess,
};
use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, RawClient, config, error_text, interop_dir, npm_server, opened_tools, start, text,
};

/// A direct client of an installed npm server, without toolshelf.
async fn direct(bin: &str, args: &[&str]) -> RunningService<RoleClient, ()> {
    let mut command =
        tokio::process::Command::new(interop_dir().join("node_modules/.bin").join(bin));
    command.args(args);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn npm server");
    tokio::time::timeout(DEADLINE, ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

async fn direct_call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    arguments: Value,
) -> CallToolResult {
    let params = CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    tokio::time::timeout(DEADLINE, client.call_tool(params))
        .await
        .expect("answer in time")
        .expect("tool result")
}

fn wire(result: &CallToolResult) -> Value {
    serde_json::to_value(result).expect("serialize")
}

/// Tool names and the servers' summaries: what the agent learns from open_toolbox.
fn outline(opened: &Value) -> Value {
    let tools: Vec<String> = opened_tools(opened)
        .iter()
        .map(|tool| {
            format!(
                "{}/{}",
                tool["server"].as_str().unwrap_or(""),
                tool["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    let servers: Vec<Value> = opened["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|server| json!({"name": server["name"], "status": server["status"]}))
        .collect();
    json!({ "servers": servers, "tools": tools })
}

#[tokio::test]
async fn server_everything_through_toolshelf_equals_direct() {
    let shelf = start(&config(&[(
        "demo",
        "server-everything",
        json!({ "everything": npm_server("mcp-server-everything", &[]) }),
    )]))
    .await;
    let opened = shelf.open("demo").await;
    assert_eq!(opened.is_error, Some(false), "{}", text(&opened));
    let opened = opened.structured_content.expect("structured");
    insta::assert_json_snapshot!("everything_outline", outline(&opened));

    let client = direct("mcp-server-everything", &[]).await;
    let direct_tools = client.list_all_tools().await.expect("tools/list");
    let through = opened_tools(&opened);
    // Task support is listed as the server declared it, so the agent can see why a call
    // without a task is refused (rmcp's `Tool` has no field for it).
    let research = through
        .iter()
        .find(|tool| tool["name"] == json!("simulate-research-query"))
        .expect("simulate-research-query is listed");
    assert_eq!(
        research["execution"],
        json!({"taskSupport": "required"}),
        "{research}"
    );
    assert_eq!(through.len(), direct_tools.len());
    for (ours, theirs) in through.iter().zip(&direct_tools) {
        assert_eq!(ours["name"], json!(theirs.name));
        assert_eq!(ours["description"], json!(theirs.description));
        match ours.get("inputSchema") {
            Some(schema) => assert_eq!(schema, &json!(theirs.input_schema)),
            // Left out only when the server's schema declares no argument.
            None => assert_eq!(
                theirs.input_schema.get("properties"),
                Some(&json!({})),
                "{}",
                theirs.name
            ),
        }
    }

    for (tool, arguments) in [
        ("echo", json!({"message": "hello through toolshelf"})),
        ("get-sum", json!({"a": 2, "b": 40})),
        ("get-tiny-image", json!({})),
        ("get-structured-content", json!({"location": "New York"})),
        (
            "get-annotated-message",
            json!({"messageType": "error", "includeImage": true}),
        ),
        ("get-resource-links", json!({"count": 2})),
    ] {
        let ours = shelf
            .use_tool("demo", "everything", tool, arguments.clone())
            .await;
        let theirs = direct_call(&client, tool, arguments).await;
        assert_eq!(wire(&ours), wire(&theirs), "{tool}");
    }
    // A child's argument error comes back as the child made it.
    let ours = shelf
        .use_tool("demo", "everything", "get-sum", json!({"a": "two"}))
        .await;
    let theirs = direct_call(&client, "get-sum", json!({"a": "two"})).await;
    assert_eq!(wire(&ours), wire(&theirs));
    drop(client);
    shelf.close().await;
}

/// The `result` of a response line, exactly as written.
fn result_text(line: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Response<'a> {
        #[serde(borrow)]
        result: &'a serde_json::value::RawValue,
    }
    let response: Response<'_> = serde_json::from_str(line).expect("a result");
    response.result.get().to_owned()
}

/// A Node server orders keys and escapes text its own way; the agent gets those very bytes.
#[tokio::test]
async fn server_everything_result_bytes_pass_through_unchanged() {
    let everything = npm_server("mcp-server-everything", &[]);
    let mut shelf = RawClient::start(&config(&[(
        "demo",
        "",
        json!({ "everything": everything }),
    )]))
    .await;
    let opened = shelf.open(1, "demo").await;
    assert_eq!(opened["result"]["isError"], json!(false), "{opened}");
    let command =
        tokio::process::Command::new(interop_dir().join("node_modules/.bin/mcp-server-everything"));
    let mut direct = RawClient::spawn(command, None, "2025-06-18").await;
    for (id, (tool, arguments)) in [
        (
            "echo",
            json!({"message": "héllo \u{2028} \"quoted\" \\ </script>"}),
        ),
        ("get-sum", json!({"a": 0.1, "b": 0.2})),
        ("get-structured-content", json!({"location": "Chicago"})),
        (
            "get-annotated-message",
            json!({"messageType": "success", "includeImage": true}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let id = id as u64 + 2;
        let call = json!({"tool": {"toolbox": "demo", "server": "everything", "name": tool}, "arguments": arguments});
        let (_, ours) = shelf
            .request_raw(
                id,
                "tools/call",
                json!({"name": "use_tool", "arguments": call}),
            )
            .await;
        let (_, theirs) = direct
            .request_raw(
                id,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            )
            .await;
        assert_eq!(result_text(&ours), result_text(&theirs), "{tool}");
    }
}

#[tokio::test]
async fn server_filesystem_reads_and_refuses_like_it_does_directly() {
    let root = tempfile::tempdir().expect("temp dir");
    std::fs::write(root.path().join("notes.txt"), "first line\nsecond line\n").expect("write");
    std::fs::create_dir(root.path().join("sub")).expect("mkdir");
    let root_path = root.path().to_str().expect("utf-8").to_owned();
    let mut fs = npm_server("mcp-server-filesystem", &[&root_path]);
    fs["toolFilters"] = json!(["read_text_file", "list_directory"]);
    let shelf = start(&config(&[("files", "Files", json!({ "fs": fs }))])).await;
    let opened = shelf
        .open("files")
        .await
        .structured_content
        .expect("structured");
    insta::assert_json_snapshot!("filesystem_outline", outline(&opened));

    let client = direct("mcp-server-filesystem", &[&root_path]).await;
    let notes = root.path().join("notes.txt");
    let notes = notes.to_str().expect("utf-8");
    for (tool, arguments) in [
        ("read_text_file", json!({"path": notes})),
        ("read_text_file", json!({"path": notes, "head": 1})),
        ("list_directory", json!({"path": root_path})),
        ("read_text_file", json!({"path": "/etc/hostname"})),
    ] {
        let ours = shelf.use_tool("files", "fs", tool, arguments.clone()).await;
        let theirs = direct_call(&client, tool, arguments).await;
        assert_eq!(wire(&ours), wire(&theirs), "{tool}");
    }
    let read = shelf
        .use_tool("files", "fs", "read_text_file", json!({"path": notes}))
        .await;
    assert_eq!(text(&read), "first line\nsecond line\n");
    // Filtered out: not callable.
    let write = shelf
        .use_tool(
            "files",
            "fs",
            "write_file",
            json!({"path": notes, "content": "x"}),
        )
        .await;
    assert!(
        error_text(&write)
            .starts_with("Error executing tool: Tool 'write_file' not found in server 'fs'")
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("notes.txt")).expect("read"),
        "first line\nsecond line\n"
    );
    drop(client);
    shelf.close().await;
}

#[tokio::test]
async fn server_memory_keeps_state_across_calls() {
    let memory_file = tempfile::tempdir().expect("temp dir");
    let mut memory = npm_server("mcp-server-memory", &[]);
    memory["env"] = json!({ "MEMORY_FILE_PATH": memory_file.path().join("memory.jsonl") });
    let shelf = start(&config(&[(
        "memory",
        "Knowledge graph",
        json!({ "memory": memory }),
    )]))
    .await;
    assert_eq!(shelf.open("memory").await.is_error, Some(false));
    let created = shelf
        .use_tool(
            "memory",
            "memory",
            "create_entities",
            json!({"entities": [{"name": "toolshelf", "entityType": "project", "observations": ["written in Rust"]}]}),
        )
        .await;
    assert_ne!(created.is_error, Some(true), "{}", text(&created));
    let graph = shelf
        .use_tool("memory", "memory", "read_graph", json!({}))
        .await;
    let graph = match graph.structured_content.clone() {
        Some(structured) => structured,
        None => serde_json::from_str(&text(&graph)).expect("the graph as JSON text"),
    };
    assert_eq!(graph["entities"][0]["name"], json!("toolshelf"));
    assert_eq!(
        graph["entities"][0]["observations"],
        json!(["written in Rust"])
    );
    shelf.close().await;
}

#[tokio::test]
async fn toolshelf_secrets_reach_a_child_only_when_the_config_says_so() {
    let everything = |extra: Value| {
        let mut server = npm_server("mcp-server-everything", &[]);
        if let (Some(server), Value::Object(extra)) = (server.as_object_mut(), extra) {
            server.extend(extra);
        }
        server
    };
    let config = config(&[(
        "env",
        "Environment",
        json!({
            "default": everything(json!({ "env": { "FROM_CONFIG": "configured-value" } })),
            "passthrough": everything(json!({ "envPassthrough": ["TOOLSHELF_TEST_SHARED*"] })),
            "inherit": everything(json!({ "inheritEnv": true })),
        }),
    )]);
    let (dir, path) = crate::harness::write_config(&config);
    let shelf = crate::harness::start_at(
        dir,
        &path,
        &[
            ("TOOLSHELF_TEST_SECRET", "hunter2-secret-value"),
            ("TOOLSHELF_TEST_SHARED_X", "shared-value"),
        ],
    )
    .await;
    assert_eq!(shelf.open("env").await.is_error, Some(false));
    let env_of = |server: &'static str| {
        let shelf = &shelf;
        async move { text(&shelf.use_tool("env", server, "get-env", json!({})).await) }
    };
    let default = env_of("default").await;
    assert!(default.contains("\"PATH\""), "{default}");
    assert!(default.contains("configured-value"));
    assert!(!default.contains("hunter2-secret-value") && !default.contains("shared-value"));
    let passthrough = env_of("passthrough").await;
    assert!(passthrough.contains("shared-value") && !passthrough.contains("hunter2-secret-value"));
    let inherit = env_of("inherit").await;
    assert!(inherit.contains("shared-value") && inherit.contains("hunter2-secret-value"));
    shelf.close().await;
}

#[tokio::test]
async fn server_everything_progress_reaches_the_agent_under_its_token() {
    let mut client = crate::harness::RawClient::start(&config(&[(
        "demo",
        "server-everything",
        json!({ "everything": npm_server("mcp-server-everything", &[]) }),
    )]))
    .await;
    let opened = client.open(1, "demo").await;
    assert_eq!(opened["result"]["isError"], json!(false), "{opened}");
    let call = json!({
        "name": "use_tool",
        "arguments": {
            "tool": {"toolbox": "demo", "server": "everything", "name": "trigger-long-running-operation"},
            "arguments": {"duration": 1, "steps": 4}
        },
        "_meta": {"progressToken": 42}
    });
    let (before, answer) = client.request(2, "tools/call", call).await;
    assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
    let progress: Vec<&Value> = before
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .collect();
    assert!(
        !progress.is_empty(),
        "no progress reached the agent: {before:?}"
    );
    for notice in &progress {
        assert_eq!(notice["params"]["progressToken"], json!(42));
        assert_eq!(notice["params"]["total"].as_f64(), Some(4.0));
    }
    let (after, _) = client.request(3, "ping", json!({})).await;
    assert!(
        after
            .iter()
            .all(|m| m["method"] != "notifications/progress"),
        "{after:?}"
    );
}
