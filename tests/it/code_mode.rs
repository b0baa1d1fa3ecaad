//! Code mode over stdio, against the fixture, with an agent that declares roots, sampling and
//! elicitation: `run_code` is listed only with `serve --code`; a script's calls reach the
//! child as `use_tool`'s would and come back as Python values; a failed call raises with the
//! tool's error; each hostile script is stopped with its reason and leaves the session usable;
//! a cancelled script cancels its child's call.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::{
    ClientKind, Shelf, config, error_text, fixture, serve_command_as, text, wait_for_line,
    write_config,
};

/// `toolshelf serve --code` on toolbox `dev` (the fixture with `fixture_args`) and the `code`
/// section `code`.
async fn serve(fixture_args: &[&str], code: Value) -> (Shelf, tempfile::TempDir) {
    let mut file = config(&[("dev", "Fixture", json!({"fx": fixture(fixture_args)}))]);
    file["code"] = code;
    serve_config(&file).await
}

/// `toolshelf serve --code` on `file`, to an agent that declares roots, sampling and
/// elicitation.
async fn serve_config(file: &Value) -> (Shelf, tempfile::TempDir) {
    let (dir, path) = write_config(file);
    let mut command = crate::harness::toolshelf();
    command
        .arg("serve")
        .arg("--code")
        .arg("--config")
        .arg(&path);
    let shelf = serve_command_as(command, Stdio::null(), ClientKind::Capable).await;
    (shelf, dir)
}

async fn run(shelf: &Shelf, code: &str) -> rmcp::model::CallToolResult {
    shelf.call("run_code", json!({ "code": code })).await
}

fn kind(result: &rmcp::model::CallToolResult) -> Value {
    result
        .structured_content
        .as_ref()
        .and_then(|content| content.pointer("/error/kind"))
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn run_code_is_listed_only_in_code_mode() {
    let file = config(&[("dev", "Fixture", json!({"fx": fixture(&[])}))]);
    let plain = crate::harness::start(&file).await;
    assert_eq!(plain.names().await, ["open_toolbox", "use_tool"]);
    let refused = plain.try_call("run_code", json!({"code": "1"})).await;
    assert!(refused.is_err(), "{refused:?}");
    plain.close().await;
    let (shelf, _dir) = serve(&[], json!({})).await;
    assert_eq!(
        shelf.names().await,
        ["open_toolbox", "use_tool", "run_code"]
    );
    shelf.close().await;
}

#[tokio::test]
async fn a_script_calls_tools_of_a_toolbox_it_never_opened_and_gets_python_values() {
    let (shelf, _dir) = serve(&[], json!({})).await;
    let result = run(
        &shelf,
        "import asyncio\nechoed = await call_tool('dev/fx/echo', {'message': 'hi'})\nshaped, slept = await asyncio.gather(call_tool('dev/fx/structured'), call_tool('dev/fx/sleep', ms=10))\nprint(echoed['message'], slept)\n{'answer': shaped['answer'] + 1}",
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text(&result), "hi slept 10 ms\n{\"answer\":43}");
    shelf.close().await;
}

#[tokio::test]
async fn a_failed_call_raises_with_the_tools_own_error() {
    let (shelf, _dir) = serve(&[], json!({})).await;
    let failed = error_text(&run(&shelf, "await call_tool('dev/fx/fail')").await);
    assert!(
        failed.contains(
            "RuntimeError: dev/fx/fail failed: fixture failure: the tool ran and reported an error (it takes fail(**arguments))"
        ),
        "{failed}"
    );
    let script =
        "try:\n    await call_tool('dev/fx/nope')\nexcept RuntimeError as error:\n    print(error)";
    let caught = run(&shelf, script).await;
    assert!(
        text(&caught).starts_with(
            "dev/fx/nope failed: Error executing tool: Tool 'nope' not found in server 'fx'"
        ),
        "{caught:?}"
    );
    shelf.close().await;
}

#[tokio::test]
async fn arguments_that_break_the_tools_schema_never_reach_the_child() {
    let events = tempfile::NamedTempFile::new().expect("events file");
    let events_path = events.path().to_str().expect("utf-8").to_owned();
    let (shelf, _dir) = serve(&["--events", &events_path], json!({})).await;
    let refused = error_text(&run(&shelf, "await call_tool('dev/fx/sleep', {'ms': 'soon'})").await);
    assert!(
        refused.contains("RuntimeError: dev/fx/sleep: the arguments do not match the tool's inputSchema (/ms: \"soon\" is not of type \"integer\"); it takes sleep(ms: integer); the call was not made"),
        "{refused}"
    );
    let slept = run(&shelf, "await call_tool('dev/fx/sleep', {'ms': 1})").await;
    assert_eq!(text(&slept), "\"slept 1 ms\"");
    let events = std::fs::read_to_string(events.path()).expect("events");
    assert_eq!(events.matches("start sleep").count(), 1, "{events}");
    shelf.close().await;
}

/// Hostile scripts of a toolbox `dev` whose fixture server is `fx`: each with the kind of
/// error that stops it and what that error says.
pub(crate) const HOSTILE: [(&str, &str, &str); 9] = [
    ("while True: pass", "script_limit", "code.cpuTimeout"),
    (
        "x = []\nwhile True: x.append('a' * 1000)",
        "script_limit",
        "code.maxMemoryBytes",
    ),
    (
        "def down(n): return down(n + 1)\ndown(0)",
        "script_limit",
        "code.maxRecursionDepth",
    ),
    (
        "for i in range(10000): await call_tool('dev/fx/echo', {'i': i})",
        "script_limit",
        "code.maxToolCalls",
    ),
    (
        "import os\nos.getenv('HOME')",
        "script_error",
        "PermissionError",
    ),
    (
        "import os\nos.listdir('/')",
        "script_error",
        "AttributeError",
    ),
    (
        "from pathlib import Path\nPath('/etc/passwd').read_text()",
        "script_error",
        "PermissionError",
    ),
    (
        "open('/etc/passwd').read()",
        "script_error",
        "PermissionError",
    ),
    ("import socket", "script_error", "ModuleNotFoundError"),
];

/// The limits the hostile scripts reach sooner than the defaults.
pub(crate) fn hostile_limits() -> Value {
    json!({"cpuTimeout": 0.5, "maxMemoryBytes": 1_048_576, "maxOutputBytes": 1000})
}

#[tokio::test]
async fn hostile_scripts_are_stopped_with_their_reason_and_the_session_goes_on() {
    let (shelf, _dir) = serve(&[], hostile_limits()).await;
    shelf.open("dev").await;
    for (script, expected, said) in HOSTILE {
        let result = run(&shelf, script).await;
        let message = error_text(&result);
        assert_eq!(kind(&result), expected, "{script}: {message}");
        assert!(message.contains(said), "{script}: {message}");
        let after = shelf.use_tool("dev", "fx", "echo", json!({"n": 1})).await;
        assert_eq!(text(&after), "{\"n\":1}", "after {script}");
    }
    let loud = run(&shelf, "for i in range(10000): print(i)").await;
    assert_eq!(loud.is_error, Some(false));
    let loud = text(&loud);
    assert!(loud.len() < 1300, "{}", loud.len());
    assert!(loud.contains("more bytes printed were cut"), "{loud}");
    shelf.close().await;
}

#[tokio::test]
async fn a_cancelled_script_cancels_its_childs_call() {
    let events = tempfile::NamedTempFile::new().expect("events file");
    let events_path = events.path().to_str().expect("utf-8").to_owned();
    let (shelf, _dir) = serve(&["--events", &events_path], json!({})).await;
    let script = "await call_tool('dev/fx/sleep', {'ms': 60000})";
    let params = rmcp::model::CallToolRequestParams::new("run_code").with_arguments(
        json!({"code": script})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let request =
        rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let handle = shelf
        .client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .expect("send");
    wait_for_line(events.path(), "start sleep").await;
    handle.cancel(Some("test".into())).await.expect("cancel");
    wait_for_line(events.path(), "cancelled sleep").await;
    let after = run(&shelf, "await call_tool('dev/fx/echo', {'still': 'here'})").await;
    assert_eq!(text(&after), "{\"still\":\"here\"}");
    shelf.close().await;
}

#[tokio::test]
async fn each_call_of_a_script_is_a_progress_notice_before_its_answer() {
    let file = config(&[("dev", "Fixture", json!({"fx": fixture(&[])}))]);
    let capabilities = json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}});
    let mut raw =
        crate::harness::RawClient::start_declaring(&file, "2025-11-25", &["--code"], capabilities)
            .await;
    let script = "for n in range(3):\n    await call_tool('dev/fx/echo', {'n': n})\ntry:\n    await call_tool('dev/fx/fail')\nexcept RuntimeError:\n    pass";
    let call = json!({"name": "run_code", "arguments": {"code": script}, "_meta": {"progressToken": "p-7"}});
    let (before, answer) = raw.request(1, "tools/call", call).await;
    let notices: Vec<(Value, Value, Value)> = before
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .map(|message| {
            let params = &message["params"];
            (
                params["progressToken"].clone(),
                params["progress"].clone(),
                params["message"].clone(),
            )
        })
        .collect();
    assert_eq!(
        notices,
        [
            (
                json!("p-7"),
                json!(1.0),
                json!("tool call 1: dev/fx/echo returned")
            ),
            (
                json!("p-7"),
                json!(2.0),
                json!("tool call 2: dev/fx/echo returned")
            ),
            (
                json!("p-7"),
                json!(3.0),
                json!("tool call 3: dev/fx/echo returned")
            ),
            (
                json!("p-7"),
                json!(4.0),
                json!("tool call 4: dev/fx/fail failed")
            ),
        ]
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

#[tokio::test]
async fn open_and_search_show_each_tool_as_the_call_a_script_makes() {
    let (shelf, _dir) = serve(&[], json!({})).await;
    let opened = shelf.open("dev").await;
    let opened: Value = serde_json::from_str(&text(&opened)).expect("JSON");
    let tools = opened["servers"][0]["tools"].as_array().expect("tools");
    let call_of = |name: &str| {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .map(|tool| tool["call"].clone())
    };
    assert_eq!(
        call_of("sleep"),
        Some(json!("await call_tool(\"dev/fx/sleep\", {ms: integer})"))
    );
    assert_eq!(
        call_of("echo"),
        Some(json!(
            "await call_tool(\"dev/fx/echo\", {message?: string})"
        ))
    );
    let found = shelf
        .call("open_toolbox", json!({"query": "sleep milliseconds"}))
        .await;
    let found = text(&found);
    assert!(
        found.contains("\nawait call_tool(\"dev/fx/sleep\", {ms: integer}): Sleeps"),
        "{found}"
    );
    // As written, the line is a call that works.
    let slept = run(&shelf, "await call_tool(\"dev/fx/sleep\", {'ms': 1})").await;
    assert_eq!(text(&slept), "\"slept 1 ms\"");
    shelf.close().await;
}

/// The script docs/code-mode.md shows, run as written against the filesystem server it names
/// (server-filesystem from npm, pinned), on a folder in place of its `/work/notes`.
#[tokio::test]
async fn the_documented_script_answers_over_the_real_filesystem_server() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/code-mode.md"))
        .expect("docs/code-mode.md");
    let script = doc
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a python block");
    let notes = tempfile::tempdir().expect("dir");
    let root = notes.path().canonicalize().expect("canonical");
    let root = root.to_str().expect("utf-8");
    std::fs::write(notes.path().join("a.md"), "invoice 1\ninvoice 2\n").expect("write");
    std::fs::write(notes.path().join("b.md"), "nothing\n").expect("write");
    std::fs::write(notes.path().join("c.md"), "one invoice\n").expect("write");
    let fs = crate::harness::npm_server("mcp-server-filesystem", &[root]);
    let file = config(&[("files", "Files", json!({ "fs": fs }))]);
    let (shelf, dir) = serve_config(&file).await;
    let answer = run(&shelf, &script.replace("/work/notes", root)).await;
    assert_eq!(text(&answer), "{\"a.md\":2,\"c.md\":1}", "{answer:?}");
    shelf.close().await;
    drop(dir);
}

/// A script's call of a tool an access rule guards waits for the user's answer, as a
/// `use_tool` call does (the Python `mcp` SDK answers the elicitation), and a declined one
/// raises with the rule.
#[tokio::test]
async fn a_scripts_guarded_call_waits_for_the_users_answer() {
    let mut file = config(&[("dev", "Fixture", json!({"fixture": fixture(&[])}))]);
    file["toolboxes"]["dev"]["mcpServers"]["fixture"]["tools"] =
        json!({"echo": {"access": {"confirm": "always"}}});
    let (_dir, path) = write_config(&file);
    let mut args = vec!["--script".into(), "accept,decline".into()];
    args.extend(crate::harness::python::toolshelf_serve(&["--code"], &path));
    let seen = crate::harness::python::python_client("confirm_client.py", args).await;
    assert_eq!(seen["asked"].as_array().map(Vec::len), Some(2), "{seen}");
    let calls = &seen["calls"];
    assert_eq!(calls[0]["text"], "{\"said\":\"hi\"}", "{seen}");
    let declined = calls[1]["text"].as_str().unwrap_or_default();
    assert!(
        declined.contains("RuntimeError: dev/fixture/echo failed: Error executing tool 'echo' in server 'fixture' (toolbox 'dev'): the access rule toolboxes.dev.mcpServers.fixture.tools.echo.access.confirm asks the user to confirm each call, and the user declined it"),
        "{seen}"
    );
    assert_eq!(calls[2]["text"], "\"slept 1 ms\"", "{seen}");
}

/// A 2026-07-28 agent takes no request from a server, and a script's call cannot be an input
/// round of the `run_code` call: the confirmation an access rule asks for is not asked, and
/// the call is not made (fastmcp on stdio; the same rule confirmed through `use_tool` is
/// `clients::a_2026_07_28_agent_confirms_in_an_input_round`).
#[tokio::test]
async fn a_2026_07_28_agents_script_cannot_confirm_and_its_guarded_call_is_not_made() {
    let (seen, status) = crate::clients::fastmcp("script_confirm", "auto").await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    assert_eq!(seen["confirm_asked"], json!([]), "{seen}");
    assert_eq!(seen["script"]["is_error"], json!(true), "{seen}");
    let said = seen["script"]["text"][0].as_str().unwrap_or_default();
    assert!(said.contains("the user could not be asked"), "{seen}");
    assert!(
        said.contains("a client on protocol 2026-07-28 cannot be asked from a script: if it declared elicitation, make this call through use_tool"),
        "{seen}"
    );
    assert!(!said.contains("slept"), "{seen}");
    assert_eq!(status, "0");
}
