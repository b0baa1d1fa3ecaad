//! Shelf mode (`serve --flat`), driven by an rmcp client: every child's tool listed as
//! `server:tool`, routed by that name, the flat naming errors byte for byte, a child's own JSON-RPC
//! error passed on unchanged, a failed server left out and announced when it comes back, a
//! child's list change announced; progress and cancellation through flat names.

use std::{path::Path, process::Stdio, sync::atomic::Ordering};

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, Shelf, config, eventually, fixture, fixture_bin, text, write_config,
};

/// `toolshelf serve --flat ARGS` on the config at `path`, initialized.
async fn serve_flat(path: &Path, args: &[&str]) -> Shelf {
    serve_flat_logged(path, args, Stdio::null()).await
}

/// As `serve_flat`, toolshelf's log going to `stderr`.
pub(crate) async fn serve_flat_logged(path: &Path, args: &[&str], stderr: Stdio) -> Shelf {
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--flat", "--config"])
        .arg(path)
        .args(args);
    crate::harness::serve_command(command, stderr).await
}

#[tokio::test]
async fn flat_mode_lists_routes_and_answers_with_the_flat_naming_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let extra = dir.path().join("extra-tools");
    std::fs::write(&extra, "first_extra\n").expect("write");
    let mark = dir.path().join("refuse");
    std::fs::write(&mark, "").expect("write");
    let brittle_mark = dir.path().join("brittle");
    let brittle_arg = brittle_mark.to_str().expect("utf-8");
    let extra_arg = extra.to_str().expect("utf-8");
    let mark_arg = mark.to_str().expect("utf-8");
    let config = config(&[
        (
            "one",
            "One",
            json!({ "fs": fixture(&["--extra-tools-file", extra_arg]) }),
        ),
        (
            "two",
            "Two",
            json!({
                "db": fixture(&[]),
                "late": fixture(&["--fail-if-exists", mark_arg]),
                "brittle": fixture(&["--fail-if-exists", brittle_arg]),
            }),
        ),
    ]);
    let (_config_dir, path) = write_config(&config);
    let flat = serve_flat(&path, &[]).await;

    // Every tool of every started server, under its server's name; the failed one left out.
    let tools = flat.tools().await;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert!(names.contains(&"fs:echo"), "{names:?}");
    assert!(names.contains(&"db:echo"), "{names:?}");
    assert!(
        !names.iter().any(|name| name.starts_with("late:")),
        "{names:?}"
    );
    // The child's schema as it wrote it; a `{}` one completed to an object schema.
    let echo = tools
        .iter()
        .find(|tool| tool.name == "fs:echo")
        .expect("fs:echo");
    assert_eq!(
        Value::Object((*echo.input_schema).clone()),
        json!({"type": "object", "properties": {"message": {"type": "string"}}})
    );
    let structured = tools
        .iter()
        .find(|tool| tool.name == "db:structured")
        .expect("structured");
    assert_eq!(structured.title.as_deref(), Some("Structured answer"));
    assert!(structured.output_schema.is_some());
    let extra_tool = tools
        .iter()
        .find(|tool| tool.name == "fs:first_extra")
        .expect("extra");
    assert_eq!(
        Value::Object((*extra_tool.input_schema).clone()),
        json!({"type": "object"})
    );

    // Routed to the server the name names, with the tool's own name.
    let echoed = flat
        .try_call("db:echo", json!({"message": "hi"}))
        .await
        .expect("a result");
    assert!(
        text(&echoed).contains("\"message\":\"hi\""),
        "{}",
        text(&echoed)
    );

    // The flat naming errors, byte for byte.
    let mut errors = serde_json::Map::new();
    for name in [
        "echo",
        ":echo",
        "fs:",
        "fss:echo",
        "fs:ehco",
        "nothing:alike",
    ] {
        let error = flat.try_call(name, json!({})).await.expect_err(name);
        errors.insert(
            name.into(),
            json!({"code": error.code.0, "message": error.message}),
        );
    }
    insta::assert_json_snapshot!("flat_naming_errors", errors);

    // A child's JSON-RPC error comes back as the child wrote it.
    let direct = crate::harness::RawClient::spawn(
        tokio::process::Command::new(fixture_bin()),
        None,
        "2025-06-18",
    );
    let mut direct = direct.await;
    let (_, theirs) = direct
        .request(
            1,
            "tools/call",
            json!({"name": "protocol_error", "arguments": {}}),
        )
        .await;
    let ours = flat
        .try_call("fs:protocol_error", json!({}))
        .await
        .expect_err("the child's error");
    assert_eq!(
        json!({"code": ours.code.0, "message": ours.message, "data": ours.data}),
        json!({"code": theirs["error"]["code"], "message": theirs["error"]["message"], "data": theirs["error"].get("data")})
    );
    // toolshelf's own failure is a tool result naming the tool, its server and its toolbox.
    let crashed = flat
        .try_call("fs:crash", json!({}))
        .await
        .expect("a result");
    assert_eq!(crashed.is_error, Some(true));
    let said = text(&crashed);
    assert!(
        said.contains("crash") && said.contains("fs") && said.contains("one"),
        "{said}"
    );

    // The failed server is retried in the background; the agent hears when it is back.
    let before = flat.changes.load(Ordering::SeqCst);
    std::fs::remove_file(&mark).expect("remove the mark");
    eventually("the late server is announced", || async {
        (flat.changes.load(Ordering::SeqCst) > before).then_some(())
    })
    .await;
    assert!(flat.names().await.contains(&"late:echo".to_owned()));
    let late = flat
        .try_call("late:pid", json!({}))
        .await
        .expect("a result");
    assert_ne!(late.is_error, Some(true), "{}", text(&late));

    // A server that cannot start again after a crash leaves the list, and comes back.
    assert!(flat.names().await.contains(&"brittle:echo".to_owned()));
    std::fs::write(&brittle_mark, "").expect("write");
    let crashed = flat
        .try_call("brittle:crash", json!({}))
        .await
        .expect("a result");
    assert_eq!(crashed.is_error, Some(true));
    let before = flat.changes.load(Ordering::SeqCst);
    let refused = flat
        .try_call("brittle:echo", json!({}))
        .await
        .expect("a result");
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    eventually("the failed server's departure is announced", || async {
        (flat.changes.load(Ordering::SeqCst) > before).then_some(())
    })
    .await;
    assert!(
        !flat
            .names()
            .await
            .iter()
            .any(|name| name.starts_with("brittle:"))
    );
    let before = flat.changes.load(Ordering::SeqCst);
    std::fs::remove_file(&brittle_mark).expect("remove the mark");
    eventually("its return is announced", || async {
        (flat.changes.load(Ordering::SeqCst) > before).then_some(())
    })
    .await;
    assert!(flat.names().await.contains(&"brittle:echo".to_owned()));

    // A child's own list change reaches the agent, and the list follows it.
    let before = flat.changes.load(Ordering::SeqCst);
    std::fs::write(&extra, "first_extra\nsecond_extra\n").expect("write");
    flat.try_call("fs:notify_list_changed", json!({}))
        .await
        .expect("a result");
    eventually("the list change is passed on", || async {
        (flat.changes.load(Ordering::SeqCst) > before).then_some(())
    })
    .await;
    let names = eventually("the new tool is listed", || async {
        let names = flat.names().await;
        names
            .contains(&"fs:second_extra".to_owned())
            .then_some(names)
    })
    .await;
    assert!(names.contains(&"fs:first_extra".to_owned()));

    // A child's announcement that changes nothing does not reach the agent: after one such and
    // one real change, the agent has heard of exactly one.
    let before = flat.changes.load(Ordering::SeqCst);
    flat.try_call("fs:notify_list_changed", json!({}))
        .await
        .expect("a result");
    // Replaced whole (a rename): the re-list the first announcement started may read the file
    // at any moment, and a file caught truncated by the write would be a change of its own.
    let staged = extra.with_extension("new");
    std::fs::write(&staged, "first_extra\n").expect("write");
    std::fs::rename(&staged, &extra).expect("rename");
    flat.try_call("fs:notify_list_changed", json!({}))
        .await
        .expect("a result");
    eventually("the removal is listed", || async {
        (!flat.names().await.contains(&"fs:second_extra".to_owned())).then_some(())
    })
    .await;
    eventually("the change is passed on", || async {
        (flat.changes.load(Ordering::SeqCst) > before).then_some(())
    })
    .await;
    assert_eq!(flat.changes.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn a_separator_and_chosen_toolboxes() {
    let config = config(&[
        ("one", "One", json!({ "fs": fixture(&[]) })),
        ("two", "Two", json!({ "db": fixture(&[]) })),
    ]);
    let (_dir, path) = write_config(&config);
    let flat = serve_flat(&path, &["--separator", "__", "--toolbox", "two"]).await;
    let names = flat.names().await;
    assert!(names.contains(&"db__echo".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|name| name.starts_with("fs")),
        "{names:?}"
    );
    let echoed = flat
        .try_call("db__echo", json!({"message": "x"}))
        .await
        .expect("a result");
    assert!(text(&echoed).contains("\"message\":\"x\""));
    let error = flat
        .try_call("db:echo", json!({}))
        .await
        .expect_err("no separator");
    assert_eq!(
        error.message,
        "Tool name must be prefixed with server key: db:echo"
    );
}

/// Runs `toolshelf ARGS` to its end; returns (exit code, stderr).
pub(crate) async fn run(args: &[&str], path: &Path) -> (Option<i32>, String) {
    let output = crate::harness::toolshelf()
        .args(args)
        .arg("--config")
        .arg(path)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output();
    let output = tokio::time::timeout(DEADLINE, output)
        .await
        .expect("toolshelf ends in time")
        .expect("run toolshelf");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn what_flat_mode_cannot_serve_is_refused_at_start() {
    let clash = config(&[
        ("one", "One", json!({ "fs": fixture(&[]) })),
        ("two", "Two", json!({ "fs": fixture(&[]) })),
    ]);
    let (_dir, path) = write_config(&clash);
    let (code, stderr) = run(&["serve", "--flat"], &path).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("toolboxes.one.mcpServers.fs and toolboxes.two.mcpServers.fs")
            && stderr.contains("--toolbox"),
        "{stderr}"
    );
    // Serving one of the two is fine; an unknown toolbox is not.
    let (code, stderr) = run(&["serve", "--flat", "--toolbox", "three"], &path).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--toolbox three") && stderr.contains("one, two"),
        "{stderr}"
    );
    let underscore = config(&[("one", "One", json!({ "my_fs": fixture(&[]) }))]);
    let (_dir, path) = write_config(&underscore);
    let (code, stderr) = run(&["serve", "--flat", "--separator", "_"], &path).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("contains the separator"), "{stderr}");
}

#[tokio::test]
async fn flat_calls_carry_progress_and_cancellation() {
    let events = tempfile::NamedTempFile::new().expect("events file");
    let events_path = events.path().to_str().expect("utf-8 path").to_owned();
    let config = config(&[(
        "dev",
        "Development",
        json!({ "fx": fixture(&["--events", &events_path]) }),
    )]);
    let (dir, path) = write_config(&config);
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--flat", "--config"])
        .arg(&path)
        .env("RUST_LOG", "warn");
    let mut raw = crate::harness::RawClient::spawn(command, Some(dir), "2025-11-25").await;

    // The child's progress reaches the agent under the agent's token, before the answer.
    let call = json!({"name": "fx:progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "p-1"}});
    let (before, answer) = raw.request(1, "tools/call", call).await;
    let progress: Vec<&Value> = before
        .iter()
        .filter(|message| message["method"] == json!("notifications/progress"))
        .collect();
    assert_eq!(progress.len(), 3, "{before:?}");
    assert!(
        progress
            .iter()
            .all(|message| message["params"]["progressToken"] == json!("p-1"))
    );
    assert!(answer.get("result").is_some(), "{answer}");

    // A cancelled call gets no answer, and the child hears of it.
    let sleep = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "fx:sleep", "arguments": {"ms": 60000}}});
    raw.send_line(&sleep.to_string()).await;
    crate::harness::wait_for_line(events.path(), "start sleep").await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}});
    raw.send_line(&cancel.to_string()).await;
    crate::harness::wait_for_line(events.path(), "cancelled sleep").await;
    let (before, answer) = raw
        .request(3, "tools/call", json!({"name": "fx:echo", "arguments": {}}))
        .await;
    assert!(
        before
            .iter()
            .all(|message| message.get("id") != Some(&json!(2))),
        "{before:?}"
    );
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!("{}"),
        "{answer}"
    );
}
