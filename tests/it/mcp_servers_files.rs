//! A client's plain `{"mcpServers": {…}}` file (Claude Desktop's) served as it is: flat, and
//! through the Python `mcp` SDK.

use serde_json::{Value, json};

use crate::flat::{run, serve_flat_logged};
use crate::harness::{fixture, fixture_bin, text, write_config};

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
