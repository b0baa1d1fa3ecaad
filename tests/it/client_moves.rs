//! Moving a client's servers into toolshelf (`consolidate`) on a real Claude Desktop file in a
//! home folder of the test's own: the servers leave the client and reach the agent through
//! toolshelf, with their secrets from an owner-only envFile; `--dry-run` shows every diff with
//! no secret; `--undo` gives every file back byte for byte, and refuses to lose a later edit.
//! And `install --env`: the entry's variables reach the config's `${VAR}`s.

use std::{os::unix::fs::PermissionsExt, path::Path, process::Stdio};

use serde_json::{Value, json};

use crate::harness::{
    ClientKind, config, fixture_bin, fresh_cache, serve_command_as, text, write_config,
};
use crate::install::run;

const SECRET: &str = "sk-live-4f2a9c1e7b3d5a60";

/// The client's `toolshelf` entry, started as Claude Desktop starts it: its command, args and
/// env only, from another folder; the agent declares roots, as Claude Desktop does.
async fn through_entry(entry: &Value, folder: &Path) -> crate::harness::Shelf {
    let mut command = tokio::process::Command::new(entry["command"].as_str().expect("command"));
    for arg in entry["args"].as_array().expect("args") {
        command.arg(arg.as_str().expect("an arg"));
    }
    command
        .current_dir(folder)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CACHE_HOME", fresh_cache());
    for (key, value) in entry["env"].as_object().into_iter().flatten() {
        command.env(key, value.as_str().expect("a string"));
    }
    serve_command_as(command, Stdio::null(), ClientKind::Roots).await
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

#[tokio::test]
async fn consolidate_moves_the_servers_and_their_secrets_and_undo_gives_every_file_back() {
    let home = tempfile::tempdir().expect("home");
    let client_file = home
        .path()
        .join(".config/Claude/claude_desktop_config.json");
    std::fs::create_dir_all(client_file.parent().expect("folder")).expect("mkdir");
    let before = format!(
        "{{\n  \"globalShortcut\": \"Ctrl+Space\",\n  \"mcpServers\": {{\n    \"fixture\": {{\n      \"command\": \"{}\",\n      \"env\": {{\"API_TOKEN\": \"{SECRET}\", \"MODE\": \"plain\"}}\n    }},\n    \"off\": {{\"command\": \"x\", \"disabled\": true}}\n  }}\n}}\n",
        fixture_bin()
    );
    std::fs::write(&client_file, &before).expect("write");
    let config = home.path().join("shelf/toolboxes.json");
    std::fs::create_dir_all(config.parent().expect("folder")).expect("mkdir");
    let config_arg = config.display().to_string();
    let env_file = home.path().join("shelf/toolboxes.fixture.env");
    let move_args = [
        "consolidate",
        "--client",
        "claude-desktop",
        "--config",
        &config_arg,
    ];

    let mut dry = move_args.to_vec();
    dry.push("--dry-run");
    let (code, said) = run(home.path(), &dry);
    assert_eq!(code, 0, "{said}");
    for file in [&client_file, &config, &env_file] {
        assert!(said.contains(&format!("+++ {}", file.display())), "{said}");
    }
    assert!(said.contains("+API_TOKEN=<secret>"), "{said}");
    assert!(!said.contains(SECRET), "a dry run prints no secret: {said}");
    assert!(said.ends_with("dry run: nothing changed\n"), "{said}");
    assert_eq!(std::fs::read_to_string(&client_file).expect("read"), before);
    assert!(!config.exists() && !env_file.exists());

    let (code, said) = run(home.path(), &move_args);
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains(SECRET), "{said}");
    assert!(
        said.contains("Undo it all with `toolshelf consolidate --undo --client claude-desktop`"),
        "{said}"
    );
    let client = read_json(&client_file);
    let servers = client["mcpServers"].as_object().expect("servers");
    let names: Vec<&String> = servers.keys().collect();
    assert_eq!(
        names,
        ["off", "toolshelf"],
        "moved out, disabled left: {client}"
    );
    assert_eq!(client["globalShortcut"], "Ctrl+Space");
    let written = std::fs::read_to_string(&config).expect("config");
    assert!(!written.contains(SECRET), "{written}");
    assert_eq!(
        read_json(&config)["toolboxes"]["fixture"]["mcpServers"]["fixture"]["envFile"],
        "toolboxes.fixture.env"
    );
    let mode = std::fs::metadata(&env_file)
        .expect("envFile")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(
        std::fs::read_to_string(&env_file)
            .expect("read")
            .contains(SECRET)
    );
    let backup = home
        .path()
        .join(".config/Claude/claude_desktop_config.json.toolshelf-backup");
    assert_eq!(std::fs::read_to_string(&backup).expect("backup"), before);

    // The agent reaches the moved server through toolshelf, its secret from the envFile.
    let elsewhere = tempfile::tempdir().expect("folder");
    let shelf = through_entry(&servers["toolshelf"], elsewhere.path()).await;
    assert_eq!(shelf.names().await, ["open_toolbox", "use_tool"]);
    let opened = shelf.open("fixture").await;
    assert_ne!(opened.is_error, Some(true), "{opened:?}");
    for (name, value) in [("API_TOKEN", SECRET), ("MODE", "plain")] {
        let read = shelf
            .use_tool("fixture", "fixture", "env", json!({"name": name}))
            .await;
        assert!(text(&read).contains(value), "{name}: {read:?}");
    }
    shelf.close().await;

    let (code, said) = run(home.path(), &move_args);
    assert_eq!(code, 2, "a second move is refused: {said}");
    assert!(said.contains("was consolidated already"), "{said}");

    // An undo that would lose an edit made since is refused, and changes nothing.
    std::fs::write(&config, written.replace("moved from", "MOVED FROM")).expect("edit");
    let undo = ["consolidate", "--undo", "--client", "claude-desktop"];
    let (code, said) = run(home.path(), &undo);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.starts_with(&format!(
            "error: changed since consolidate, so an undo would lose that change: {}",
            config.display()
        )),
        "{said}"
    );
    assert!(client_file.exists() && env_file.exists());
    std::fs::write(&config, &written).expect("edit back");

    let mut dry_undo = undo.to_vec();
    dry_undo.push("--dry-run");
    let (code, said) = run(home.path(), &dry_undo);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("-API_TOKEN=<secret>") && !said.contains(SECRET),
        "{said}"
    );
    let (code, said) = run(home.path(), &undo);
    assert_eq!(code, 0, "{said}");
    assert_eq!(std::fs::read_to_string(&client_file).expect("read"), before);
    assert!(
        !config.exists() && !env_file.exists(),
        "made by the move, gone"
    );
    let left: Vec<String> = std::fs::read_dir(client_file.parent().expect("folder"))
        .expect("list")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["claude_desktop_config.json"], "no backup, no record");
}

#[tokio::test]
async fn install_env_sets_the_entry_s_variables_and_uninstall_removes_its_backup() {
    let home = tempfile::tempdir().expect("home");
    let cursor = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().expect("folder")).expect("mkdir");
    let before = "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}}\n";
    std::fs::write(&cursor, before).expect("write");
    let server = json!({"command": fixture_bin(), "env": {"GREETING": "${TOOLSHELF_GREETING}"}});
    let (_dir, path) = write_config(&config(&[("dev", "Development", json!({"fx": server}))]));
    let config_arg = path.display().to_string();
    let install = |env: &str| {
        run(
            home.path(),
            &[
                "install",
                "--client",
                "cursor",
                "--config",
                &config_arg,
                "--env",
                env,
            ],
        )
    };
    let (code, said) = install("not a pair");
    assert_eq!(code, 2, "{said}");
    assert!(
        said.starts_with("error: --env not a pair…: not KEY=VALUE"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&cursor).expect("read"), before);

    let (code, said) = install("TOOLSHELF_GREETING=hello from the entry");
    assert_eq!(code, 0, "{said}");
    let entry = read_json(&cursor)["mcpServers"]["toolshelf"].clone();
    assert_eq!(
        entry["env"],
        json!({"TOOLSHELF_GREETING": "hello from the entry"})
    );
    let elsewhere = tempfile::tempdir().expect("folder");
    let shelf = through_entry(&entry, elsewhere.path()).await;
    assert_ne!(shelf.open("dev").await.is_error, Some(true));
    let read = shelf
        .use_tool("dev", "fx", "env", json!({"name": "GREETING"}))
        .await;
    assert!(text(&read).contains("hello from the entry"), "{read:?}");
    shelf.close().await;

    let (code, said) = run(home.path(), &["uninstall", "--client", "cursor"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.starts_with(&format!(
            "removed toolshelf's entry from {} (Cursor): the file is as it was before install, so its backup is removed too.",
            cursor.display()
        )),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&cursor).expect("read"), before);
    assert!(
        !home
            .path()
            .join(".cursor/mcp.json.toolshelf-backup")
            .exists()
    );
}

#[test]
fn two_servers_that_would_get_one_name_are_refused_and_nothing_changes() {
    let home = tempfile::tempdir().expect("home");
    let client_file = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(client_file.parent().expect("folder")).expect("mkdir");
    let before = r#"{"mcpServers": {"my notes": {"command": "a"}, "my-notes": {"command": "b"}}}"#;
    std::fs::write(&client_file, before).expect("write");
    let config = home.path().join("toolboxes.json");
    let config_arg = config.display().to_string();
    let (code, said) = run(
        home.path(),
        &["consolidate", "--client", "cursor", "--config", &config_arg],
    );
    assert_eq!(code, 2, "{said}");
    assert!(
        said.starts_with(
            "error: two of the client's servers become `my-notes` in toolbox `my-notes`"
        ),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&client_file).expect("read"), before);
    assert!(!config.exists());
}
