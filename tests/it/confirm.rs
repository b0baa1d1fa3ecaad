//! Access rules that ask the user to confirm a call (`"confirm": "always"`, or
//! `"destructive"` for tools annotated `destructiveHint: true`): the Python `mcp` SDK as the
//! agent's client answers toolshelf's elicitation; an accepted call goes on, a declined or
//! cancelled one is refused naming the rule, and a client without elicitation is told the user
//! could not be asked. Calls no rule guards are never held up. On stdio and over HTTP.

use serde_json::{Value, json};

use crate::harness::{
    config, fixture, python::python_client, python::toolshelf_serve, write_config,
};

const RULE: &str = "toolboxes.dev.mcpServers.fixture.tools.echo.access.confirm";

fn guarded() -> Value {
    let mut config = config(&[("dev", "Fixture", json!({"fixture": fixture(&[])}))]);
    config["toolboxes"]["dev"]["mcpServers"]["fixture"]["tools"] =
        json!({"echo": {"access": {"confirm": "always"}}});
    config
}

async fn answered(answers: &str) -> Value {
    let (_dir, path) = write_config(&guarded());
    let mut args = vec![answers.into()];
    args.extend(toolshelf_serve(&[], &path));
    python_client("confirm_client.py", args).await
}

fn calls(seen: &Value) -> Vec<(String, bool, String)> {
    let calls = seen["calls"].as_array().cloned().unwrap_or_default();
    calls
        .iter()
        .map(|call| {
            let text = call["text"].as_str().unwrap_or_default().to_owned();
            (
                call["tool"].as_str().unwrap_or_default().to_owned(),
                call["error"] == json!(true),
                text,
            )
        })
        .collect()
}

#[tokio::test]
async fn a_guarded_call_waits_for_the_users_answer() {
    let seen = answered("accept,decline,cancel").await;
    let asked = seen["asked"].as_array().map(Vec::len);
    assert_eq!(asked, Some(3), "each echo asked once, sleep never: {seen}");
    let message = seen["asked"][0].as_str().unwrap_or_default();
    assert!(
        message.contains("echo of dev/fixture") && message.contains(RULE),
        "{message}"
    );
    let calls = calls(&seen);
    assert_eq!(
        calls[0],
        ("echo".into(), false, r#"{"said":"hi"}"#.into()),
        "{seen}"
    );
    let refused = |why: &str| {
        format!(
            "Error executing tool 'echo' in server 'fixture' (toolbox 'dev'): the access rule {RULE} asks the user to confirm each call, and {why}"
        )
    };
    assert_eq!(
        calls[1],
        ("echo".into(), true, refused("the user declined it"))
    );
    assert_eq!(
        calls[2],
        (
            "echo".into(),
            true,
            refused("the user cancelled the question")
        )
    );
    assert_eq!(
        (calls[3].0.as_str(), calls[3].1),
        ("sleep", false),
        "{seen}"
    );
    crate::docs::assert_quoted(&calls[1].2);
}

#[tokio::test]
async fn over_http_the_question_reaches_the_session_whose_call_it_is() {
    let (_dir, path) = write_config(&guarded());
    let token = "confirm-t0ken";
    let (_process, port) = crate::harness::http::serve(&path, token).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen = python_client(
        "confirm_client.py",
        vec!["accept,decline".into(), url.into(), token.into()],
    )
    .await;
    assert_eq!(seen["asked"].as_array().map(Vec::len), Some(2), "{seen}");
    let calls = calls(&seen);
    assert_eq!(
        calls[0],
        ("echo".into(), false, r#"{"said":"hi"}"#.into()),
        "{seen}"
    );
    assert!(
        calls[1].1 && calls[1].2.ends_with("and the user declined it"),
        "{seen}"
    );
    assert_eq!(
        (calls[2].0.as_str(), calls[2].1),
        ("sleep", false),
        "{seen}"
    );
}

/// A client without a session (fastmcp on 2026-07-28) takes no request from the server: the
/// question comes as an input round of its use_tool call, and its answer lets the call go on.
#[tokio::test]
async fn over_http_a_client_without_a_session_confirms_in_an_input_round() {
    let (_dir, path) = write_config(&guarded());
    let token = "confirm-t0ken";
    let (_process, port) = crate::harness::http::serve(&path, token).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen = crate::harness::python::agent(
        "fastmcp_http.py",
        &[&url, token, "dev", "fixture", "open", "confirm"],
    )
    .await;
    assert_eq!(seen["protocol"], json!(null), "no initialize: {seen}");
    assert_eq!(seen["asked"].as_array().map(Vec::len), Some(1), "{seen}");
    assert!(
        seen["asked"][0].as_str().unwrap_or_default().contains(RULE),
        "{seen}"
    );
    assert_eq!(seen["echo_error"], json!(false), "{seen}");
    assert_eq!(seen["echo"], json!(r#"{"via":"fastmcp"}"#), "{seen}");
}

#[tokio::test]
async fn a_client_without_elicitation_is_told_the_user_could_not_be_asked() {
    let seen = answered("none").await;
    let calls = calls(&seen);
    assert!(calls[0].1, "{seen}");
    assert!(
        calls[0].2.contains("the user could not be asked (elicitation/create from toolshelf cannot be relayed: the MCP client connected to toolshelf did not declare the elicitation capability): use an MCP client that supports elicitation, or change the rule"),
        "{seen}"
    );
    assert_eq!(
        (calls[1].0.as_str(), calls[1].1),
        ("sleep", false),
        "{seen}"
    );
}
