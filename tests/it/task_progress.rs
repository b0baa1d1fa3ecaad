//! Progress of a task-augmented call after its `CreateTaskResult`: a child written with the
//! official TypeScript SDK (`tests/interop/task_progress_server.cjs`) reports each step of its
//! task under the call's progress token after the task was created; the agent gets them under
//! its own token, after the answer, until the task completes.

use serde_json::{Value, json};

use crate::harness::{RawClient, config, interop_dir};

#[tokio::test]
async fn a_tasks_progress_after_its_creation_reaches_the_agent_under_its_token() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/task_progress_server.cjs"
    );
    let modules = interop_dir().join("node_modules");
    let counter = json!({
        "command": "node",
        "args": [script],
        "env": { "NODE_PATH": modules.to_str().expect("utf-8") },
    });
    let mut client = RawClient::start_on(
        &config(&[("work", "Work", json!({ "counter": counter }))]),
        "2025-11-25",
    )
    .await;
    let opened = client.open(1, "work").await;
    assert_ne!(opened["result"]["isError"], json!(true), "{opened}");
    client
        .send_line(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"work","server":"counter","name":"count"},"arguments":{"to":3}},"task":{"ttl":60000},"_meta":{"progressToken":"agent-p"}}}"#,
        )
        .await;
    let mut answered = false;
    let mut progress = Vec::new();
    let mut completed = false;
    while !completed {
        let message: Value = client.next().await;
        match message["method"].as_str() {
            Some("notifications/progress") => {
                assert!(answered, "progress before the answer: {message}");
                assert_eq!(
                    message["params"]["progressToken"],
                    json!("agent-p"),
                    "{message}"
                );
                progress.push(message["params"]["progress"].clone());
            }
            Some("notifications/tasks/status") => {
                assert_eq!(message["params"]["taskId"], json!("ts-1"), "{message}");
                completed = message["params"]["status"] == "completed";
            }
            _ => {
                assert_eq!(message["id"], json!(2), "{message}");
                assert_eq!(
                    message["result"]["task"]["taskId"],
                    json!("ts-1"),
                    "{message}"
                );
                answered = true;
            }
        }
    }
    assert_eq!(progress, [json!(1), json!(2), json!(3)]);
}
