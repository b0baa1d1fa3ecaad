//! Third-party MCP clients against toolshelf: fastmcp 4.1.2 (Python), which speaks protocol
//! 2026-07-28 by default (`server/discover`, no `initialize`), and in its legacy mode; the Python
//! `mcp` SDK 2.3 (2025-11-25), which answers a child's sampling, elicitation and roots requests
//! and takes its log messages.

use std::{ffi::OsString, path::PathBuf};

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, config, fixture, npm_server, python::python_client, toolshelf_bin, write_config,
};

/// Runs tests/python/fastmcp_client.py `scenario` in `mode` against `toolshelf serve`; returns
/// what the client printed and toolshelf's exit status.
pub(crate) async fn fastmcp(scenario: &str, mode: &str) -> (Value, String) {
    let (seen, status_file, _dir) = run_fastmcp(scenario, mode).await;
    let status = crate::harness::eventually("toolshelf exited", || async {
        std::fs::read_to_string(&status_file).ok()
    })
    .await;
    (seen, status.trim().to_owned())
}

/// Runs the fastmcp client; returns what it printed, the file toolshelf's exit status will be
/// written to, and the folder that holds it and the config.
async fn run_fastmcp(scenario: &str, mode: &str) -> (Value, PathBuf, tempfile::TempDir) {
    let mut file = config(&[
        // Children on one revision each: older than both agents' (2025-06-18), and only the
        // newest (2026-07-28, no `initialize`).
        (
            "dev",
            "Development",
            json!({
                "fixture": fixture(&["--ask", "--protocol", "2025-06-18"]),
                "modern": fixture(&["--ask", "--protocol", "2026-07-28"]),
            }),
        ),
        (
            "demo",
            "The MCP reference server",
            json!({ "everything": npm_server("mcp-server-everything", &["stdio"]) }),
        ),
    ]);
    // A scenario runs toolshelf more than once; each open must start the children (their
    // `status` is what these tests read), not answer from the persisted catalog.
    file["catalog"] = json!({"cache": false});
    file["toolboxes"]["dev"]["mcpServers"]["fixture"]["tools"] =
        json!({"sleep": {"access": {"confirm": "always"}}});
    let (dir, path) = write_config(&file);
    let status_file = dir.path().join("status");
    let mut args: Vec<OsString> = [scenario, mode, "--", "sh", "-c"]
        .iter()
        .map(OsString::from)
        .collect();
    // Scripts need code mode; every other scenario sees the two tools.
    args.push(match scenario.starts_with("script") {
        true => r#""$0" serve --code --config "$1"; echo $? > "$2""#.into(),
        false => r#""$0" serve --config "$1"; echo $? > "$2""#.into(),
    });
    args.extend([
        toolshelf_bin().into(),
        path.into_os_string(),
        status_file.clone().into_os_string(),
    ]);
    let seen = python_client("fastmcp_client.py", args).await;
    (seen, status_file, dir)
}

#[tokio::test]
async fn fastmcp_on_2026_07_28_discovers_opens_and_calls() {
    let (seen, status) = fastmcp("session", "auto").await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    assert_eq!(seen["tools"], json!(["open_toolbox", "use_tool"]));
    assert_eq!(seen["opened"]["servers"][0]["status"], json!("ready"));
    assert_eq!(seen["echo"], json!([r#"{"said":"hello"}"#]));
    assert_eq!(seen["echo_is_error"], json!(false));
    // fastmcp asks for log messages per request (`logLevel` debug in `_meta`): the child's
    // message sent during the call reaches it before the call's answer, tagged with its origin.
    assert_eq!(seen["logs_by_answer"], fixture_log_message(), "{seen}");
    // A child on 2026-07-28 gets the agent's level with each request, and logs for it.
    assert_eq!(
        seen["modern_logs"],
        json!([{
            "level": "warning",
            "logger": "dev/modern",
            "data": "hello from the fixture log at warning"
        }]),
        "{seen}"
    );
    assert_eq!(status, "0");
}

/// server-everything's tools that ask the client for sampling, elicitation and roots: listed
/// only to a client that declared those capabilities.
fn asking_tools() -> Value {
    json!([
        "get-roots-list",
        "trigger-elicitation-request",
        "trigger-sampling-request"
    ])
}

fn fixture_log_message() -> Value {
    json!([{
        "level": "error",
        "logger": "dev/fixture",
        "data": "hello from the fixture log at error"
    }])
}

#[tokio::test]
async fn fastmcp_in_legacy_mode_initializes_opens_and_calls() {
    let (seen, status) = fastmcp("session", "legacy").await;
    assert_eq!(seen["protocol"], json!("2025-11-25"), "{seen}");
    assert_eq!(seen["echo"], json!([r#"{"said":"hello"}"#]));
    assert_eq!(seen["logs"], fixture_log_message(), "{seen}");
    assert_eq!(seen["modern_logs"], json!([]), "{seen}");
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
    let status = crate::harness::toolshelf()
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

/// Toolbox `demo` with server-everything as `everything` (`spec`), and the arguments that run
/// a client of tests/python against toolshelf on it.
pub(crate) fn demo_everything(spec: Value) -> (tempfile::TempDir, Vec<OsString>) {
    let (dir, path) = write_config(&config(&[(
        "demo",
        "The MCP reference server",
        json!({ "everything": spec }),
    )]));
    let mut args: Vec<OsString> = vec!["demo".into(), "everything".into()];
    args.extend(crate::harness::python::toolshelf_serve(&[], &path));
    (dir, args)
}

/// server-everything asks its client for a sampled message, for input (form and URL mode), for
/// its roots, and sends log messages; through toolshelf, the agent (the `mcp` SDK's session, with its callbacks)
/// answers and receives each one. The tools that need those capabilities exist only because
/// toolshelf declared the agent's capabilities to the child. The agent's answer takes longer than
/// the child's `callTimeout`, which does not run while the agent answers.
#[tokio::test]
async fn the_agent_answers_a_childs_sampling_elicitation_and_roots_and_gets_its_logs() {
    // The agent answers sampling after 1.5 s (mcp_client.py): the call must not time out.
    let mut everything = npm_server("mcp-server-everything", &["stdio"]);
    everything["callTimeout"] = json!(1.0);
    let (_dir, args) = demo_everything(everything);
    let seen = python_client("mcp_client.py", args).await;
    assert_eq!(seen["protocol"], json!("2025-11-25"), "{seen}");
    assert_eq!(seen["logging_capability"], json!(true));
    // The SDK declares URL-mode elicitation too.
    let mut asking = asking_tools();
    if let Some(names) = asking.as_array_mut() {
        names.push(json!("trigger-url-elicitation"));
    }
    assert_eq!(seen["conditional_tools"], asking);
    let text = |key: &str| seen[key].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        seen["sampling"],
        json!(["Resource trigger-sampling-request context: hello"])
    );
    assert!(text("sampled").contains("sampled by the agent"), "{seen}");
    assert!(text("sampled").contains("agent-model"), "{seen}");
    assert!(text("elicited").contains("Ada Lovelace"), "{seen}");
    // URL mode: the child's request reaches the agent as written, and the agent's answer the
    // child; the child's "URL elicitation required" error (-32042) reaches the agent as the
    // JSON-RPC error it is, its elicitations intact, for the agent to act on.
    assert_eq!(seen["elicitation"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        seen["url_elicitation"],
        json!({"url": "https://example.com/consent", "id": "consent-1"})
    );
    assert!(
        text("url_elicited").contains("completed the URL elicitation"),
        "{seen}"
    );
    assert_eq!(seen["url_error_path"]["code"], json!(-32042), "{seen}");
    let required = &seen["url_error_path"]["data"]["elicitations"][0];
    assert_eq!(required["mode"], json!("url"), "{seen}");
    assert_eq!(
        required["url"],
        json!("https://modelcontextprotocol.io"),
        "{seen}"
    );
    assert!(seen["roots_asked"].as_u64() >= Some(1), "{seen}");
    assert!(text("roots").contains("file:///tmp/agent-root"), "{seen}");
    assert!(
        text("roots_later").contains("file:///tmp/agent-root-later"),
        "the agent's roots change did not reach the child: {seen}"
    );
    let logs = seen["logs"].as_array().cloned().unwrap_or_default();
    assert!(!logs.is_empty(), "no log message reached the agent: {seen}");
    for log in &logs {
        let logger = log["logger"].as_str().unwrap_or_default();
        assert!(logger.starts_with("demo/everything"), "{log}");
    }
}

/// fastmcp on 2026-07-28 with its tasks extension runs server-everything's
/// `simulate-research-query` (which requires tasks) through use_tool: toolshelf answers with a
/// task of the extension, its handle in place of the child's id, and serves fastmcp's
/// tasks/get (the result inline once done) and tasks/cancel from the child's 2025-11-25 tasks.
/// An ambiguous query makes the child ask a question during its task: toolshelf waits in the
/// child's tasks/result for it, shows it in tasks/get, and gives the child fastmcp's answer
/// from tasks/update.
#[tokio::test]
async fn fastmcp_runs_a_task_through_use_tool_on_2026_07_28() {
    // Not its exit status: server-everything stays up for a while after its task was cancelled,
    // and fastmcp does not wait for toolshelf to stop it (the process guard does the rest).
    let (seen, _, _dir) = run_fastmcp("task", "auto").await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    let report = seen["report"][0].as_str().unwrap_or_default();
    assert!(report.starts_with("# Research Report: tides"), "{seen}");
    let asked = seen["clarification_asked"].as_array().cloned();
    assert_eq!(asked.map(|asked| asked.len()), Some(1), "{seen}");
    let clarified = seen["clarified"][0].as_str().unwrap_or_default();
    assert!(
        clarified.starts_with("# Research Report: python (programming)"),
        "the agent's answer to the task's question did not reach the child: {seen}"
    );
    let handle = seen["task_id"].as_str().unwrap_or_default();
    assert!(
        handle.starts_with("ts-"),
        "the child's task id reached the agent: {seen}"
    );
    assert_eq!(seen["status"], json!("working"), "{seen}");
    assert_eq!(seen["cancelled"], json!("cancelled"), "{seen}");
}

/// fastmcp on 2026-07-28 takes no requests from servers: server-everything's sampling,
/// elicitation and roots requests reach it as input_required results of its use_tool call, and
/// its retry brings the answers to the child. The sealed requestState continues only the call it
/// came from, and only once.
#[tokio::test]
async fn a_2026_07_28_agent_answers_a_childs_requests_in_input_rounds() {
    let (seen, status) = fastmcp("relay", "auto").await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    assert_eq!(
        seen["conditional_tools"],
        asking_tools(),
        "the child is offered the capabilities the agent declared on its calls"
    );
    let text = |key: &str| seen[key].as_str().unwrap_or_default().to_owned();
    assert!(text("sampled").contains("sampled by the agent"), "{seen}");
    assert!(text("elicited").contains("Ada Lovelace"), "{seen}");
    assert!(text("roots").contains("file:///tmp/agent-root"), "{seen}");

    let round = &seen["round"];
    assert_eq!(round["result_type"], json!("input_required"), "{seen}");
    assert_eq!(round["methods"], json!(["elicitation/create"]));
    assert_eq!(round["other_tool"]["code"], json!(-32602));
    assert_eq!(
        round["other_tool"]["message"],
        json!(
            "requestState was not issued by this toolshelf for a call of 'demo/everything/get-roots-list', was altered, or is older than 10 minutes; call use_tool again without requestState and inputResponses"
        )
    );
    let answered = round["answered"].to_string();
    assert!(answered.contains("declined"), "{seen}");
    assert_eq!(round["again"]["code"], json!(-32602));
    assert_eq!(
        round["again"]["message"],
        json!(
            "the call of 'demo/everything/trigger-elicitation-request' that this requestState continues is no longer waiting (it was continued already, or it ended); call use_tool again without requestState and inputResponses"
        )
    );
    assert_eq!(status, "0");
}

/// One call whose child asks twice (the fixture, on 2025-06-18, under a 2026-07-28 agent): each
/// question ends a round, each round's requestState continues that round only (the first one is
/// stale once the second round began), and the answers of both rounds reach the child; fastmcp's
/// own driver does the same through its elicitation handler.
#[tokio::test]
async fn each_round_of_a_call_has_its_own_request_state() {
    let (seen, status) = fastmcp("rounds", "auto").await;
    let rounds = &seen["rounds"];
    assert_eq!(rounds["first"], json!({"i1": "question 1"}), "{seen}");
    assert_eq!(rounds["second"], json!({"i2": "question 2"}), "{seen}");
    assert_eq!(rounds["stale"]["code"], json!(-32602), "{seen}");
    let answer = |text: &Value| -> Value {
        serde_json::from_str(text[0].as_str().unwrap_or_default()).unwrap_or_default()
    };
    let done = answer(&rounds["done"]);
    assert_eq!(done["protocol"], json!("2025-06-18"), "{seen}");
    assert_eq!(
        done["answers"],
        json!([
            {"action": "accept", "content": {"answer": "one"}},
            {"action": "accept", "content": {"answer": "two"}}
        ])
    );
    // What the child reports after an answer reaches the request that carried the answer (the
    // stale retry was refused and got nothing), never a request that has been answered.
    assert_eq!(
        seen["round_progress"],
        json!([[], ["answered 1"], [], ["answered 2"]]),
        "{seen}"
    );
    let driven = answer(&seen["driven"]);
    assert_eq!(
        driven["answers"][1]["content"]["name"],
        json!("Ada Lovelace"),
        "{seen}"
    );
    assert_eq!(status, "0");
}

/// A child that speaks only 2026-07-28 refuses `initialize`; toolshelf asks it with
/// `server/discover` instead, sends each request with its own `_meta`, and answers the questions
/// it asks in `input_required` results with the agent's answers: relayed as rounds to an agent
/// on 2026-07-28, as requests to one on 2025-11-25 (fastmcp's legacy mode).
#[tokio::test]
async fn a_child_on_2026_07_28_only_is_started_and_asks_agents_of_both_eras() {
    for mode in ["auto", "legacy"] {
        let (seen, status) = fastmcp("modern", mode).await;
        assert_eq!(seen["status"]["modern"], json!("ready"), "{mode}: {seen}");
        let answered: Value =
            serde_json::from_str(seen["answered"][0].as_str().unwrap_or_default())
                .unwrap_or_default();
        assert_eq!(answered["protocol"], json!("2026-07-28"), "{mode}: {seen}");
        assert_eq!(
            answered["answers"][1]["content"]["name"],
            json!("Ada Lovelace"),
            "{mode}: {seen}"
        );
        assert_eq!(status, "0", "{mode}");
    }
}

/// An access rule's confirmation reaches a 2026-07-28 agent, which takes no request from a
/// server, as an input round of its use_tool call: accepted, the call goes on; declined, the
/// agent gets the refusal naming the rule.
#[tokio::test]
async fn a_2026_07_28_agent_confirms_in_an_input_round() {
    let (seen, status) = fastmcp("confirm", "auto").await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    let asked = seen["confirm_asked"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(asked.len(), 2, "{seen}");
    assert!(
        asked[0].as_str().unwrap_or_default().starts_with(
            "Allow the tool sleep of dev/fixture to run? toolshelf asks because of the rule toolboxes.dev.mcpServers.fixture.tools.sleep.access.confirm"
        ),
        "{seen}"
    );
    assert_eq!(seen["accepted"]["is_error"], json!(false), "{seen}");
    assert_eq!(seen["declined"]["is_error"], json!(true), "{seen}");
    assert_eq!(
        seen["declined"]["text"][0],
        json!(
            "Error executing tool 'sleep' in server 'fixture' (toolbox 'dev'): the access rule toolboxes.dev.mcpServers.fixture.tools.sleep.access.confirm asks the user to confirm each call, and the user declined it"
        ),
        "{seen}"
    );
    assert_eq!(status, "0");
}
