//! What a real client meets: after `toolshelf check`, every kind of client (none; roots;
//! roots, sampling and elicitation; over stdio and HTTP) finds a tool by search, starting
//! nothing; a search names a server that could not start with its error, not with advice that
//! cannot help; a call into a toolbox whose open failed says why; a child that is no MCP server
//! is said to be one.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::{
    ClientKind, error_text, fixture, fixture_bin, http::wait_healthy, launch,
    python::python_client, serve_command_as, text, toolshelf, toolshelf_bin, write_config,
};
use crate::persisted_catalog::{check, dev_config, opened, scene, started};

/// Each kind of client's search, as search_kinds.py saw it, holds the fixture's echo.
fn every_kind_found_echo(seen: &Value, how: &str) {
    for kind in ["none", "roots", "capable"] {
        let said = seen[kind]["text"].as_str().unwrap_or_default();
        assert!(
            said.contains("dev/fx/echo(") && !said.contains("Not searched"),
            "{how}, a client declaring {kind}: {said}"
        );
    }
    assert_eq!(
        seen["capable"]["declared"],
        json!([
            "elicitation_callback",
            "list_roots_callback",
            "sampling_callback"
        ])
    );
}

#[tokio::test]
async fn after_check_every_kind_of_client_finds_a_tool_starting_nothing_over_stdio_and_http() {
    let (_dir, cache, starts, extra) = scene("");
    let config = dev_config(&starts, &extra, json!({}), &[]);
    let (_config_dir, path) = write_config(&config);
    check(&cache, &path);
    assert_eq!(started(&starts), 1);

    let cache_env = format!("XDG_CACHE_HOME={}", cache.display());
    let mut args = vec!["echo my arguments".into(), "stdio".into(), "--".into()];
    args.extend([
        "/usr/bin/env".into(),
        cache_env.into(),
        toolshelf_bin().into(),
        "serve".into(),
        "--config".into(),
        path.clone().into_os_string(),
    ]);
    let seen = python_client("search_kinds.py", args.clone()).await;
    every_kind_found_echo(&seen, "over stdio");
    assert_eq!(started(&starts), 1, "a search started the fixture");
    // The newcomer's first call: the tool the search found, its toolbox opened on demand.
    args.insert(0, "--call".into());
    let seen = python_client("search_kinds.py", args).await;
    every_kind_called_echo(&seen, "over stdio");

    let port = crate::harness::free_port();
    let mut command = launch::serve_http(toolshelf(), &path, port, None, &[]);
    let _server = command
        .env("XDG_CACHE_HOME", &cache)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::null())
        .spawn()
        .expect("serve --http");
    wait_healthy(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut args = vec!["echo my arguments".into(), "http".into(), url.into()];
    let before = started(&starts);
    let seen = python_client("search_kinds.py", args.clone()).await;
    every_kind_found_echo(&seen, "over HTTP");
    assert_eq!(started(&starts), before, "a search started the fixture");
    args.insert(0, "--call".into());
    let seen = python_client("search_kinds.py", args).await;
    every_kind_called_echo(&seen, "over HTTP");
}

/// Flat mode answers `tools/list` from the catalog `check` kept for a client that declares
/// roots too, starting nothing until a call.
#[tokio::test]
async fn after_check_a_flat_client_that_declares_roots_lists_the_tools_starting_nothing() {
    let (_dir, cache, starts, extra) = scene("");
    let config = dev_config(&starts, &extra, json!({}), &[]);
    let (_config_dir, path) = write_config(&config);
    check(&cache, &path);
    let mut command = toolshelf();
    command
        .args(["serve", "--flat", "--config"])
        .arg(&path)
        .env("XDG_CACHE_HOME", &cache);
    let shelf = serve_command_as(command, Stdio::null(), ClientKind::Roots).await;
    let names = shelf.names().await;
    assert!(names.contains(&"fx:echo".to_owned()), "{names:?}");
    assert_eq!(started(&starts), 1, "tools/list started the fixture");
}

/// Each kind of client's first call, the found echo, answered with its arguments.
fn every_kind_called_echo(seen: &Value, how: &str) {
    for kind in ["none", "roots", "capable"] {
        let said = seen[kind]["called"].as_str().unwrap_or_default();
        assert!(said.contains("first call"), "{how}, {kind}: {seen}");
    }
}

#[tokio::test]
async fn a_server_that_could_not_start_is_named_with_its_error_and_a_call_says_why() {
    let config = crate::harness::config(&[
        (
            "dev",
            "Development",
            json!({"fx": fixture(&[]), "broken": fixture(&["--exit-at-start", "3"])}),
        ),
        (
            "gh",
            "GitHub",
            json!({"gh": {"command": fixture_bin(), "env": {"TOKEN": "${TOOLSHELF_TEST_UNSET_GH}"}}}),
        ),
        (
            "ops",
            "Operations",
            json!({"bad": fixture(&["--exit-at-start", "4"])}),
        ),
        ("later", "Not opened", json!({"fx2": fixture(&[])})),
    ]);
    let (_dir, path) = write_config(&config);
    let mut command = toolshelf();
    command
        .args(["serve", "--no-cache", "--config"])
        .arg(&path)
        .env_remove("TOOLSHELF_TEST_UNSET_GH");
    let shelf = serve_command_as(command, Stdio::null(), ClientKind::Roots).await;
    opened(&shelf.open("dev").await);
    for toolbox in ["gh", "ops"] {
        let failed = shelf.open(toolbox).await;
        assert_eq!(failed.is_error, Some(true), "{failed:?}");
    }

    let found = shelf.call("open_toolbox", json!({"query": "echo"})).await;
    let said = text(&found);
    assert!(said.contains("\ndev/fx/echo("), "the working tools: {said}");
    assert!(
        said.contains("\nNot searched: server 'broken' of toolbox 'dev', which could not start: initialize failed: the server closed the connection; the process exited with status 3"),
        "{said}"
    );
    assert!(
        said.contains("\nNot searched: server 'gh' of toolbox 'gh', which could not start: variable TOOLSHELF_TEST_UNSET_GH (in env.TOKEN) is not set"),
        "{said}"
    );
    assert!(
        said.contains("\nNot searched (their tools are not known yet): later.\nopen_toolbox {\"toolbox\":\"later\"} lists"),
        "only what opening can list: {said}"
    );
    assert!(!said.contains("{\"toolbox\":\"dev\"}"), "{said}");
    let answer = opened(&found);
    assert_eq!(answer["notSearched"], json!(["later"]), "{answer}");
    assert_eq!(answer["failed"][0]["server"], "broken", "{answer}");

    // A call into a toolbox whose open failed: the server's own error, and what fixes it.
    let call = shelf.use_tool("ops", "bad", "echo", json!({})).await;
    let said = error_text(&call);
    assert!(
        said.starts_with("Error executing tool 'echo' in server 'bad' (toolbox 'ops'): the toolbox did not open, as this server could not start: initialize failed: the server closed the connection; the process exited with status 4"),
        "{said}"
    );
    assert!(
        said.ends_with("\nOnce the cause is fixed, call open_toolbox {\"toolbox\":\"ops\"} again: it starts the server anew."),
        "{said}"
    );
    let error = &call.structured_content.as_ref().expect("structured")["error"];
    assert_eq!(
        (&error["kind"], &error["retryable"]),
        (&json!("server_unavailable"), &json!(true))
    );
    let call = shelf.use_tool("gh", "gh", "echo", json!({})).await;
    let said = error_text(&call);
    assert!(
        said.contains("variable TOOLSHELF_TEST_UNSET_GH (in env.TOKEN) is not set")
            && said.ends_with("\nThe user has to fix this in toolshelf's config or environment and restart toolshelf (or reload its config); until then the server's tools cannot be called."),
        "{said}"
    );
    // A toolbox never opened keeps the table's text.
    let call = shelf.use_tool("later", "fx2", "echo", json!({})).await;
    assert_eq!(
        error_text(&call),
        "Error executing tool: Toolbox 'later' is not open"
    );
}

#[test]
fn a_child_that_prints_something_else_than_json_rpc_is_said_to_and_check_logs_no_exit() {
    let config = crate::harness::config(&[(
        "dev",
        "Development",
        json!({"hello": {"command": "echo", "args": ["hello"]},
               "crash": fixture(&["--exit-at-start", "1"])}),
    )]);
    let (_dir, path) = write_config(&config);
    let output = crate::harness::toolshelf_std()
        .args(["check", "--no-cache", "--config"])
        .arg(&path)
        .env_remove("RUST_LOG")
        .output()
        .expect("run check");
    assert_eq!(output.status.code(), Some(1));
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("failed: dev/hello: initialize failed: its first line on stdout was not JSON-RPC: \"hello\"; an MCP server over stdio writes only JSON-RPC messages to stdout"),
        "{said}"
    );
    let logged = String::from_utf8_lossy(&output.stderr);
    assert!(
        !logged.contains("child exited"),
        "check's own output says it: {logged}"
    );
}
