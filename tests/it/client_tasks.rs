//! 2025-11-25 tasks through `use_tool`, driven by the Python `mcp` SDK, on stdio and over
//! `serve --http`: created, polled, their progress seen, and their result fetched.

use serde_json::{Value, json};

use crate::clients::demo_everything;
use crate::harness::{config, npm_server, python::python_client, write_config};

/// server-everything's `simulate-research-query` requires tasks. The `mcp` SDK (2025-11-25) runs
/// it through use_tool as a task: toolshelf declares tasks, forwards the task-augmented call,
/// and answers the SDK's tasks/get, tasks/list, tasks/result and tasks/cancel from the child
/// under a handle of its own. An ambiguous query makes the child ask the agent for a
/// clarification while the agent waits in tasks/result; the report carries the answer.
#[tokio::test]
async fn a_task_runs_to_completion_through_use_tool() {
    let (_dir, args) = demo_everything(npm_server("mcp-server-everything", &["stdio"]));
    check_task_run(&python_client("mcp_tasks.py", args).await);
}

/// The same client and tasks over `serve --http`: the session core serves 2025-11-25 tasks
/// whatever transport carries the session.
#[tokio::test]
async fn a_task_runs_to_completion_through_use_tool_over_http() {
    let (_dir, path) = write_config(&config(&[(
        "demo",
        "The MCP reference server",
        json!({ "everything": npm_server("mcp-server-everything", &["stdio"]) }),
    )]));
    let (_served, port) = crate::harness::http::serve(&path, "").await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen =
        crate::harness::python::agent("mcp_tasks.py", &["demo", "everything", "--url", &url]).await;
    check_task_run(&seen);
    // Over HTTP a task-augmented call that also asks for progress is served by the door too
    // (rmcp's path has no `task`): it is a task, whose progress goes to the session.
    let handle = seen["progress_task_id"].as_str().unwrap_or_default();
    assert!(handle.starts_with("ts-"), "{seen}");
    // A task handle is its session's: to another session of the same server it does not exist.
    let task = seen["task_id"].as_str().unwrap_or_default();
    assert_eq!(
        seen["from_another_session"]["code"],
        json!(-32602),
        "{seen}"
    );
    let said = seen["from_another_session"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        said.starts_with(&format!("Unknown task '{task}'")),
        "{seen}"
    );
}

/// What `mcp_tasks.py` saw of a task run through use_tool, on either transport.
fn check_task_run(seen: &Value) {
    assert_eq!(seen["protocol"], json!("2025-11-25"), "{seen}");
    assert_eq!(
        seen["tasks_capability"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    assert_eq!(
        seen["use_tool_execution"],
        json!({"taskSupport": "optional"})
    );
    assert_eq!(seen["execution"], json!({"taskSupport": "required"}));
    // Called without a task, the tool's own refusal comes back as the child wrote it.
    assert_eq!(seen["without_task"]["is_error"], json!(true));
    let refusal = seen["without_task"]["text"].as_str().unwrap_or_default();
    assert!(refusal.contains("requires task augmentation"), "{seen}");

    let handle = seen["task_id"].as_str().unwrap_or_default();
    assert!(
        handle.starts_with("ts-"),
        "the child's task id reached the agent: {seen}"
    );
    assert_eq!(seen["status_task_id"], json!(handle));
    assert_eq!(seen["listed"], json!([handle]));
    assert_eq!(seen["related_task"], json!(handle));
    assert_eq!(seen["final_status"], json!("completed"));
    // The child's status notices name the task by its handle, never by the child's id.
    let notices = seen["status_notices"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(notices.contains(&json!([handle, "completed"])), "{seen}");
    assert!(
        notices
            .iter()
            .all(|notice| notice[0].as_str().is_some_and(|id| id.starts_with("ts-"))),
        "{seen}"
    );
    let report = seen["report"].as_str().unwrap_or_default();
    assert!(report.starts_with("# Research Report: tides"), "{seen}");

    assert_eq!(
        seen["elicitation"].as_array().map(Vec::len),
        Some(1),
        "{seen}"
    );
    // The question names its task by toolshelf's handle.
    let asked_for = seen["elicitation_task"].as_str().unwrap_or_default();
    assert!(asked_for.starts_with("ts-"), "{seen}");
    assert_eq!(
        seen["elicitation_task"], seen["ambiguous_task_id"],
        "{seen}"
    );
    let clarified = seen["clarified_report"].as_str().unwrap_or_default();
    assert!(
        clarified.starts_with("# Research Report: python (programming)"),
        "{seen}"
    );
    assert_eq!(seen["cancelled_status"], json!("cancelled"));
    assert_eq!(seen["unknown"]["code"], json!(-32602));
    let unknown = seen["unknown"]["message"].as_str().unwrap_or_default();
    assert!(unknown.starts_with("Unknown task 'ts-999'"), "{seen}");
}
