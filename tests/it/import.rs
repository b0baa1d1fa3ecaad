//! `toolshelf import`: real-shaped config files of each client (written here in each client's
//! documented format, at the place the client keeps them), turned into toolshelf configs that
//! load, with every literal secret replaced by a variable.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{fixture_bin, toolshelf_std};

/// Secrets written in the clients' files; none may reach an imported config.
const SECRETS: &[&str] = &[
    "ghp_1234567890abcdefghij",
    "sk-live-123",
    "xoxb-1-2-3",
    "hunter2",
];

/// Runs `toolshelf import ARGS` in `project` with `home` as the home folder.
fn import(home: &Path, project: &Path, args: &[&str]) -> (i32, String, String) {
    let output = toolshelf_std()
        .arg("import")
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .expect("run toolshelf import");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn write(path: &Path, file: &Value) {
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
    std::fs::write(path, serde_json::to_vec_pretty(file).expect("json")).expect("write");
}

/// Each client's file at its usual place, each with a local server (the fixture) and secrets.
fn clients(home: &Path, project: &Path) -> Vec<(&'static str, std::path::PathBuf, Value)> {
    let fixture = fixture_bin();
    vec![
        (
            "claude-desktop",
            home.join(".config/Claude/claude_desktop_config.json"),
            json!({
                "mcpServers": {
                    "github": {"command": fixture, "args": [], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_1234567890abcdefghij"}},
                    "my files": {"command": fixture, "args": ["--name", "files"]},
                    "old": {"command": fixture, "disabled": true}
                },
                "globalShortcut": "Ctrl+Space"
            }),
        ),
        (
            "claude-code",
            project.join(".mcp.json"),
            json!({"mcpServers": {
                "fx": {"type": "stdio", "command": fixture, "args": [], "env": {"LEVEL": "${LEVEL:-info}"}},
                "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer sk-live-123"}}
            }}),
        ),
        (
            "cursor",
            home.join(".cursor/mcp.json"),
            json!({"mcpServers": {
                "slack": {"command": fixture, "env": {"SLACK_BOT_TOKEN": "xoxb-1-2-3", "SLACK_TEAM_ID": "T01"}},
                "web": {"url": "https://web.example.com/sse"}
            }}),
        ),
        (
            "vscode",
            project.join(".vscode/mcp.json"),
            json!({
                "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
                "servers": {
                    "remote": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${input:api-key}"}},
                    "local": {"type": "stdio", "command": fixture, "args": ["${workspaceFolder}/data"], "env": {"DB_PASSWORD": "hunter2"}, "envFile": "${workspaceFolder}/.env"}
                }
            }),
        ),
        (
            "windsurf",
            home.join(".codeium/windsurf/mcp_config.json"),
            json!({"mcpServers": {
                "fx": {"command": fixture, "args": []},
                "remote": {"serverUrl": "https://remote.example.com/mcp", "headers": {"X-Api-Key": "hunter2"}}
            }}),
        ),
    ]
}

#[test]
fn each_client_s_config_imports_into_one_that_loads_without_its_secrets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    std::fs::create_dir_all(&project).expect("project");
    let mut transcript = String::new();
    for (client, path, file) in clients(&home, &project) {
        write(&path, &file);
        let (code, stdout, stderr) = import(&home, &project, &["--from", client]);
        assert_eq!(code, 0, "{client}: {stderr}");
        let imported: Value = serde_json::from_str(&stdout).expect("pure JSON on stdout");
        for secret in SECRETS {
            assert!(
                !stdout.contains(secret),
                "{client}: a secret was copied: {stdout}"
            );
        }
        let loaded = toolshelf::config::parse(&stdout, &project, &|_| Some("set".into()));
        assert!(loaded.is_ok(), "{client}: {loaded:?}");
        transcript.push_str(&format!(
            "$ toolshelf import --from {client}\n{}\n{}\n",
            serde_json::to_string_pretty(&imported).expect("json"),
            stderr
        ));
        std::fs::remove_file(&path).expect("remove");
    }
    let transcript = transcript
        .replace(fixture_bin(), "FIXTURE")
        .replace(&dir.path().display().to_string(), "TMP");
    insta::assert_snapshot!("import_transcript", transcript);
}

#[test]
fn an_imported_config_runs_and_the_file_is_found_written_and_not_overwritten() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    std::fs::create_dir_all(&project).expect("project");
    let all = clients(&home, &project);
    let (_, desktop_path, desktop) = &all[0];
    write(desktop_path, desktop);

    // The only client config there is: found without --from.
    let target = dir.path().join("toolboxes.json");
    let target_arg = target.to_str().expect("utf-8");
    let (code, stdout, stderr) = import(
        &home,
        &project,
        &["--toolbox", "all", "--write", target_arg],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.is_empty(),
        "--write prints nothing on stdout: {stdout}"
    );
    assert!(
        stderr.contains("read ") && stderr.contains("(Claude Desktop)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("set GITHUB_PERSONAL_ACCESS_TOKEN"),
        "{stderr}"
    );

    // What toolshelf check makes of it, with the variable set: every server starts.
    let checked = toolshelf_std()
        .args(["check", "--config", target_arg])
        .env("GITHUB_PERSONAL_ACCESS_TOKEN", "from-the-environment")
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .output()
        .expect("check");
    // Exit 0: every server of the imported config started.
    assert!(checked.status.success(), "{checked:?}");
    let table = String::from_utf8_lossy(&checked.stdout);
    assert!(table.contains("my-files"), "{table}");

    let (code, _, stderr) = import(
        &home,
        &project,
        &["--toolbox", "all", "--write", target_arg],
    );
    assert_eq!(code, 2, "an existing file is not replaced");
    assert!(stderr.contains("--force"), "{stderr}");
    let (code, _, stderr) = import(&home, &project, &["--write", target_arg, "--force"]);
    assert_eq!(code, 0, "{stderr}");

    // Two clients' configs: the user is asked to choose.
    let (_, cursor_path, cursor) = &all[2];
    write(cursor_path, cursor);
    let (code, _, stderr) = import(&home, &project, &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("name one with --from"), "{stderr}");
    assert!(
        stderr.contains("(Cursor)") && stderr.contains("(Claude Desktop)"),
        "{stderr}"
    );
}
