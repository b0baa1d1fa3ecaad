//! Shelf mode (`serve --flat`), driven by an rmcp client: every child's tool listed as
//! `server:tool`, routed by that name, the flat naming errors byte for byte, a child's own JSON-RPC
//! error passed on unchanged, a failed server left out and announced when it comes back, a
//! child's list change announced; children's prompts and resources in both modes; and plain
//! `mcpServers` files (Claude Desktop's shape).
#![allow(
    deprecated,
    reason = "resources/subscribe is legacy-only in rmcp, and the revisions before 2026-07-28 have it"
)]

use std::{path::Path, process::Stdio, sync::atomic::Ordering};

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams,
    Reference, SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, Shelf, config, eventually, fixture, fixture_bin, text, write_config,
};

/// `toolshelf serve --flat ARGS` on the config at `path`, initialized.
async fn serve_flat(path: &Path, args: &[&str]) -> Shelf {
    serve_flat_logged(path, args, Stdio::null()).await
}

/// As `serve_flat`, toolshelf's log going to `stderr`.
async fn serve_flat_logged(path: &Path, args: &[&str], stderr: Stdio) -> Shelf {
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
    std::fs::write(&extra, "first_extra\n").expect("write");
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
async fn run(args: &[&str], path: &Path) -> (Option<i32>, String) {
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
async fn a_claude_desktop_file_is_served_as_it_is() {
    let file = json!({
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "fs": { "command": fixture_bin(), "args": [], "autoApprove": ["echo"] },
            "off": { "command": "no-such-program", "disabled": true },
        },
    });
    let (dir, path) = write_config(&file);
    let log = dir.path().join("stderr");
    let stderr = std::fs::File::create(&log).expect("log file");
    let flat = serve_flat_logged(
        &path,
        &["--log-level", "warn,toolshelf=info"],
        stderr.into(),
    )
    .await;
    let names = flat.names().await;
    assert!(names.contains(&"fs:echo".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|name| name.starts_with("off:")),
        "{names:?}"
    );
    let said = std::fs::read_to_string(&log).expect("log");
    // The default separator breaks the MCP guidance for tool names: said once, at start, as a
    // note (it is the convention's own), not a warning.
    assert_eq!(said.matches("--separator __").count(), 1, "{said}");
    let note = said
        .lines()
        .find(|line| line.contains("--separator __"))
        .unwrap_or_default();
    assert!(note.contains(" INFO ") && !note.contains("WARN"), "{said}");
    for key in [
        "globalShortcut",
        "mcpServers.fs.autoApprove",
        "mcpServers.off",
    ] {
        assert!(said.contains(key), "{key} is not named: {said}");
    }
    drop(flat);

    // Toolbox mode reads the same file as one toolbox, `default`.
    let shelf = crate::harness::start_at(dir, &path, &[]).await;
    let opened = shelf.open("default").await;
    assert_ne!(opened.is_error, Some(true), "{}", text(&opened));
    let echoed = shelf
        .use_tool("default", "fs", "echo", json!({"message": "m"}))
        .await;
    assert!(text(&echoed).contains("\"message\":\"m\""));

    // A key no client is known to write is an error, named with its place.
    let unknown = json!({ "mcpServers": { "fs": { "command": fixture_bin() } }, "theme": "dark" });
    let (_dir, path) = write_config(&unknown);
    let (code, stderr) = run(&["serve", "--flat"], &path).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("theme: toolshelf does not know this key"),
        "{stderr}"
    );
}

#[tokio::test]
async fn the_python_sdk_uses_a_claude_desktop_file_in_flat_mode() {
    let dir = tempfile::tempdir().expect("temp dir");
    let extra = dir.path().join("extra-tools");
    // The fixture lists these with an input schema of `{}`, which the SDK refuses as it is.
    std::fs::write(&extra, "empty_extra\n").expect("write");
    let root = dir.path().join("shared");
    std::fs::create_dir(&root).expect("mkdir");
    std::fs::write(root.join("notes.txt"), "flat").expect("write");
    let root = root.to_str().expect("utf-8").to_owned();
    let mut memory = crate::harness::npm_server("mcp-server-memory", &[]);
    memory["env"] = json!({ "MEMORY_FILE_PATH": dir.path().join("memory.jsonl") });
    // The shape of Claude Desktop's claude_desktop_config.json, a setting of its own included.
    let file = json!({
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "fx": fixture(&["--extra-tools-file", extra.to_str().expect("utf-8")]),
            "everything": crate::harness::npm_server("mcp-server-everything", &["stdio"]),
            "filesystem": crate::harness::npm_server("mcp-server-filesystem", &[&root]),
            "memory": memory,
        },
    });
    let (_config_dir, path) = write_config(&file);
    let mut args = vec![root.clone().into()];
    args.extend(crate::harness::python::toolshelf_serve(&["--flat"], &path));
    let seen = crate::harness::python::python_client("flat_client.py", args).await;
    assert_eq!(seen["list_changed"], json!(true), "{seen}");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for server in ["fx:", "everything:", "filesystem:", "memory:"] {
        assert!(
            tools.iter().any(|tool| tool.starts_with(server)),
            "{server} {tools:?}"
        );
    }
    assert_eq!(seen["schemas"]["fx:empty_extra"], json!({"type": "object"}));
    assert!(
        seen["fixture_echo"]
            .as_str()
            .is_some_and(|text| text.contains("flat")),
        "{seen}"
    );
    assert_eq!(seen["everything_echo"], json!("Echo: flat"));
    assert!(
        seen["filesystem_listing"]
            .as_str()
            .is_some_and(|text| text.contains("notes.txt")),
        "{seen}"
    );
    assert_eq!(seen["memory_is_error"], json!(false), "{seen}");
    assert_eq!(
        seen["unrouted"],
        json!({"code": -32602, "message": "Tool name must be prefixed with server key: echo"})
    );
    assert!(
        seen["prompts"]
            .as_array()
            .is_some_and(|prompts| prompts.contains(&json!("everything:args-prompt"))),
        "{seen}"
    );
    assert!(
        seen["prompt_text"]
            .as_str()
            .is_some_and(|text| text.contains("Lisbon")),
        "{seen}"
    );
    // server-everything's seven, and what the other servers list.
    assert!(seen["resources"].as_u64() >= Some(7), "{seen}");
    assert_eq!(seen["read_uri"], seen["first_uri"]);
}

/// `toolshelf serve ARGS` with server-everything as server `everything` of toolbox `demo`, its
/// entry with the keys of `more`.
async fn everything_shelf(args: &[&str], more: Value) -> (Shelf, tempfile::TempDir) {
    let mut server = crate::harness::npm_server("mcp-server-everything", &["stdio"]);
    if let (Some(server), Value::Object(more)) = (server.as_object_mut(), more) {
        server.extend(more);
    }
    let config = config(&[(
        "demo",
        "The MCP reference server",
        json!({ "everything": server }),
    )]);
    let (dir, path) = write_config(&config);
    let mut process = crate::harness::toolshelf();
    process.args(["serve", "--config"]).arg(&path).args(args);
    let flat = crate::harness::serve_command(process, Stdio::null()).await;
    (flat, dir)
}

#[tokio::test]
async fn prompts_and_resources_of_children_in_flat_mode() {
    let (flat, _dir) = everything_shelf(&["--flat"], json!({})).await;
    let client = &flat.client;

    // Prompts, named as tools are.
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert!(names.contains(&"everything:args-prompt"), "{names:?}");
    assert!(
        names.iter().all(|name| name.starts_with("everything:")),
        "{names:?}"
    );
    let mut arguments = serde_json::Map::new();
    arguments.insert("city".into(), json!("Paris"));
    let got = client
        .get_prompt(GetPromptRequestParams::new("everything:args-prompt").with_arguments(arguments))
        .await
        .expect("prompts/get");
    assert!(
        serde_json::to_string(&got.messages)
            .unwrap_or_default()
            .contains("Paris")
    );
    // A server that is not served: toolshelf's error, with the closest name (a prompt the
    // server does not have is the server's to answer).
    let missing = client
        .get_prompt(GetPromptRequestParams::new("evrything:args-prompt"))
        .await
        .expect_err("no such prompt");
    assert!(
        missing.to_string().contains(
            "Prompt not found: evrything:args-prompt\nDid you mean: everything:args-prompt?"
        ),
        "{missing}"
    );

    // Resources and templates as the server wrote them; reads reach it.
    let resources = client.list_all_resources().await.expect("resources/list");
    let first = resources.first().expect("a resource").uri.clone();
    let read = client
        .read_resource(ReadResourceRequestParams::new(first.clone()))
        .await
        .expect("resources/read");
    assert!(
        serde_json::to_string(&read)
            .unwrap_or_default()
            .contains(&first)
    );
    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    assert!(
        templates
            .iter()
            .any(|template| template.uri_template == "demo://resource/dynamic/text/{resourceId}")
    );
    // A URI nobody listed reaches the server whose template it matches.
    let dynamic = client
        .read_resource(ReadResourceRequestParams::new(
            "demo://resource/dynamic/text/3",
        ))
        .await
        .expect("a templated read");
    assert!(
        serde_json::to_string(&dynamic)
            .unwrap_or_default()
            .contains("dynamic/text/3")
    );
    let nowhere = client
        .read_resource(ReadResourceRequestParams::new("nowhere://x"))
        .await
        .expect_err("no server has it");
    assert!(
        nowhere
            .to_string()
            .contains("Resource not found: nowhere://x"),
        "{nowhere}"
    );

    // Completions of a prompt's argument reach the server, under its own prompt name.
    let mut completion = CompleteRequestParams::new(
        Reference::for_prompt("everything:completable-prompt"),
        ArgumentInfo::new("department", "Eng"),
    );
    completion.context = None;
    let completed = client
        .complete(completion)
        .await
        .expect("completion/complete");
    assert!(
        completed
            .completion
            .values
            .iter()
            .any(|value| value == "Engineering"),
        "{completed:?}"
    );

    // A subscription: the server's updates of the resource reach the agent.
    client
        .subscribe(SubscribeRequestParams::new(first.clone()))
        .await
        .expect("resources/subscribe");
    flat.try_call("everything:toggle-subscriber-updates", json!({}))
        .await
        .expect("a result");
    eventually("an update of the subscribed resource", || async {
        (flat.updates.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    client
        .unsubscribe(UnsubscribeRequestParams::new(first))
        .await
        .expect("resources/unsubscribe");
}

#[tokio::test]
async fn prompts_and_resources_of_open_toolboxes_in_toolbox_mode() {
    let overrides = json!({
        "tags": ["demo"],
        "prompts": {
            "simple-prompt": { "alias": "hello", "description": "Says hello", "tags": ["greeting"] },
            "resource-prompt": { "hidden": true },
        },
    });
    let (shelf, _dir) = everything_shelf(&[], overrides).await;
    let client = &shelf.client;
    // Nothing is open: nothing is offered.
    assert!(
        client
            .list_all_prompts()
            .await
            .expect("prompts/list")
            .is_empty()
    );
    assert!(
        client
            .list_all_resources()
            .await
            .expect("resources/list")
            .is_empty()
    );
    let opened = shelf
        .try_call("open_toolbox", json!({"toolbox": "demo"}))
        .await
        .expect("open_toolbox");
    assert_ne!(opened.is_error, Some(true));
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    // The config's overrides: an alias, a description, tags, a hidden prompt.
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert!(!names.contains(&"everything:simple-prompt"), "{names:?}");
    assert!(!names.contains(&"everything:resource-prompt"), "{names:?}");
    let hello = prompts
        .iter()
        .find(|prompt| prompt.name == "everything:hello")
        .expect("the alias is listed");
    assert_eq!(hello.description.as_deref(), Some("Says hello"));
    assert_eq!(
        hello
            .meta
            .as_ref()
            .and_then(|meta| meta.get("toolshelf/tags")),
        Some(&json!(["demo", "greeting"]))
    );
    // The alias and the server's own name both reach the prompt; a hidden one is not there.
    for name in ["everything:hello", "everything:simple-prompt"] {
        let got = client
            .get_prompt(GetPromptRequestParams::new(name))
            .await
            .expect("prompts/get");
        assert!(!got.messages.is_empty(), "{name}");
    }
    let hidden = client
        .get_prompt(GetPromptRequestParams::new("everything:resource-prompt"))
        .await
        .expect_err("hidden");
    assert!(
        hidden
            .to_string()
            .contains("Prompt not found: everything:resource-prompt"),
        "{hidden}"
    );
    let resources = client.list_all_resources().await.expect("resources/list");
    assert_eq!(resources.len(), 7, "{resources:?}");
    // A subscription: the updates of the resource reach the agent here too.
    let first = resources.first().expect("a resource").uri.clone();
    client
        .subscribe(SubscribeRequestParams::new(first))
        .await
        .expect("resources/subscribe");
    let toggled = shelf
        .try_call(
            "use_tool",
            json!({"tool": {"toolbox": "demo", "server": "everything", "name": "toggle-subscriber-updates"}}),
        )
        .await
        .expect("use_tool");
    assert_ne!(toggled.is_error, Some(true));
    eventually("an update of the subscribed resource", || async {
        (shelf.updates.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    // Toolbox mode still has exactly two tools.
    assert_eq!(shelf.names().await, ["open_toolbox", "use_tool"]);
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
