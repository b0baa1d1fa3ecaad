//! `toolshelf install --client` and `uninstall` on real client files in a home folder of the
//! test's own: the entry each client gets starts toolshelf on the config from another folder,
//! with a client's bare environment; a second install changes nothing; uninstall gives the file
//! back byte for byte.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
};

use serde_json::{Value, json};

use crate::harness::{
    config, fixture, fresh_cache, serve_command, text, toolshelf_std, write_config,
};

/// A client's file in a home folder, as it was before toolshelf came (`None`: no file yet).
struct ClientFile {
    client: &'static str,
    path: &'static str,
    before: Option<&'static str>,
}

const FILES: [ClientFile; 7] = [
    ClientFile {
        client: "claude-code",
        path: ".claude.json",
        before: Some(
            "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\"type\": \"stdio\", \"command\": \"x\", \"args\": []}\n  },\n  \"projects\": {}\n}\n",
        ),
    },
    ClientFile {
        client: "claude-desktop",
        path: ".config/Claude/claude_desktop_config.json",
        before: None,
    },
    ClientFile {
        client: "vscode",
        path: ".config/Code/User/mcp.json",
        before: Some(
            "// my servers\n{\n  \"servers\": {\n    // keep this\n    \"a\": { \"type\": \"stdio\", \"command\": \"a\" },\n  },\n  \"inputs\": []\n}\n",
        ),
    },
    ClientFile {
        client: "cursor",
        path: ".cursor/mcp.json",
        before: Some("{\"mcpServers\":{}}"),
    },
    ClientFile {
        client: "codex",
        path: ".codex/config.toml",
        before: Some(
            "model = \"o3\"   # the model\n\n[mcp_servers.other]\ncommand = \"x\"\nargs = [\"1\"]\n\n[tui]\ntheme = \"dark\"\n",
        ),
    },
    ClientFile {
        client: "gemini",
        path: ".gemini/settings.json",
        before: Some("{\n\t\"theme\": \"GitHub\"\n}"),
    },
    ClientFile {
        client: "windsurf",
        path: ".codeium/windsurf/mcp_config.json",
        before: Some("{\n  \"mcpServers\": {}\n}\n"),
    },
];

/// `toolshelf ARGS` with `home` as the home folder; (exit code, stdout).
pub(crate) fn run(home: &Path, args: &[&str]) -> (i32, String) {
    let output = toolshelf_std()
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("CODEX_HOME")
        .env_remove("TOOLSHELF_CONFIG")
        .current_dir(home)
        .output()
        .expect("run toolshelf");
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code().unwrap_or(-1), said)
}

/// toolshelf's entry in `file`, read as the client reads its file.
fn entry(client: &str, file: &Path) -> Value {
    let text = std::fs::read_to_string(file).expect("client file");
    let (document, key): (Value, &str) = match client {
        "codex" => (toml_edit::de::from_str(&text).expect("TOML"), "mcp_servers"),
        _ => (
            jsonc_parser::parse_to_serde_value::<Value>(&text, &Default::default()).expect("JSON"),
            if client == "vscode" {
                "servers"
            } else {
                "mcpServers"
            },
        ),
    };
    document[key]["toolshelf"].clone()
}

/// Starts `entry` as a client does, from `folder` with a bare environment, and makes a call.
async fn session_through_entry(entry: &Value, folder: &Path) {
    let mut command = tokio::process::Command::new(entry["command"].as_str().expect("command"));
    let args: Vec<&str> = entry["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    command
        .args(&args)
        .current_dir(folder)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CACHE_HOME", fresh_cache());
    let shelf = serve_command(command, Stdio::null()).await;
    assert_eq!(shelf.names().await, ["open_toolbox", "use_tool"]);
    let opened = shelf.open("dev").await;
    assert_ne!(opened.is_error, Some(true), "{opened:?}");
    let echoed = shelf
        .use_tool("dev", "fixture", "echo", json!({"message": "installed"}))
        .await;
    assert!(text(&echoed).contains("installed"), "{echoed:?}");
    shelf.close().await;
}

/// A config with the fixture in toolbox `dev`, and its path as an argument.
fn dev_config() -> (tempfile::TempDir, String) {
    let (dir, path) = write_config(&config(&[(
        "dev",
        "Development",
        json!({"fixture": fixture(&[])}),
    )]));
    (dir, path.display().to_string())
}

fn home_with_files() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home");
    for file in &FILES {
        if let Some(before) = file.before {
            let path = home.path().join(file.path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, before).expect("write");
        }
    }
    home
}

#[tokio::test]
async fn every_client_s_entry_starts_toolshelf_and_uninstall_gives_the_file_back() {
    let home = home_with_files();
    let (_dir, config_arg) = dev_config();
    let elsewhere = tempfile::tempdir().expect("another folder");
    for file in &FILES {
        let path: PathBuf = home.path().join(file.path);
        let install = ["install", "--client", file.client, "--config", &config_arg];
        let (code, said) = run(home.path(), &install);
        assert_eq!(code, 0, "{}: {said}", file.client);
        assert!(
            said.starts_with(&format!("wrote {}", path.display())),
            "{said}"
        );

        let entry = entry(file.client, &path);
        assert_eq!(
            entry["args"],
            json!(["serve", "--config", config_arg]),
            "{}",
            file.client
        );
        session_through_entry(&entry, elsewhere.path()).await;

        let written = std::fs::read(&path).expect("read");
        let (code, said) = run(home.path(), &install);
        assert_eq!(code, 0);
        assert!(
            said.starts_with(&format!(
                "{} already has this `toolshelf` entry",
                path.display()
            )) && said.ends_with("nothing changed\n"),
            "{said}"
        );
        assert_eq!(
            std::fs::read(&path).expect("read"),
            written,
            "a second install changed {path:?}"
        );

        let (code, said) = run(home.path(), &["uninstall", "--client", file.client]);
        assert_eq!(code, 0, "{said}");
        assert!(
            said.starts_with(&format!(
                "removed toolshelf's entry from {}",
                path.display()
            )),
            "{said}"
        );
        let mut backup = path.clone().into_os_string();
        backup.push(".toolshelf-backup");
        assert!(
            !Path::new(&backup).exists(),
            "{}: the round trip is exact, so install's backup goes",
            file.client
        );
        match file.before {
            Some(before) => assert_eq!(
                std::fs::read_to_string(&path).expect("read"),
                before,
                "{}: uninstall did not give the file back",
                file.client
            ),
            None => assert!(!path.exists(), "{path:?} was made by install and stays"),
        }
    }
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let home = home_with_files();
    let (_dir, config_arg) = dev_config();
    let (code, said) = run(
        home.path(),
        &[
            "install",
            "--client",
            "gemini",
            "--config",
            &config_arg,
            "--dry-run",
        ],
    );
    assert_eq!(code, 0, "{said}");
    let path = home.path().join(".gemini/settings.json");
    assert!(said.contains(&format!("--- {}", path.display())), "{said}");
    assert!(
        said.contains("+\t\"mcpServers\": {"),
        "the file's own tab indent: {said}"
    );
    assert!(
        said.ends_with(&format!("dry run: {} not changed\n", path.display())),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(path).expect("read"),
        "{\n\t\"theme\": \"GitHub\"\n}"
    );
}

#[test]
fn a_file_that_cannot_be_edited_or_a_scope_a_client_lacks_is_refused_at_once() {
    let home = home_with_files();
    let (_dir, config_arg) = dev_config();
    let (code, said) = run(
        home.path(),
        &[
            "install",
            "--client",
            "claude-desktop",
            "--scope",
            "project",
            "--config",
            &config_arg,
        ],
    );
    assert_eq!(
        (code, said.as_str()),
        (
            2,
            "error: Claude Desktop has no project config; use --scope user\n"
        )
    );

    let broken = home.path().join(".cursor/mcp.json");
    std::fs::write(&broken, "{\"mcpServers\": ").expect("write");
    let (code, said) = run(
        home.path(),
        &["install", "--client", "cursor", "--config", &config_arg],
    );
    assert_eq!(code, 2, "{said}");
    assert!(
        said.starts_with(&format!(
            "error: cannot edit {} (Cursor's config): ",
            broken.display()
        )) && said.ends_with("Fix the file, or give another with --file.\n"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(&broken).expect("read"),
        "{\"mcpServers\": "
    );
}

/// A client's own CLI, run offline with `home` as its home folder.
fn client_cli(home: &Path, folder: &Path, program: &str, args: &[&str]) -> String {
    let cli = crate::harness::client_clis_dir()
        .join("node_modules/.bin")
        .join(program);
    let output = std::process::Command::new("unshare")
        .arg("-rn")
        .arg(&cli)
        .args(args)
        .current_dir(folder)
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .env("XDG_CACHE_HOME", fresh_cache())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("run {program}: {error}"));
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn codex_reads_the_entry_back_and_gemini_connects_through_it() {
    let home = home_with_files();
    let (_dir, config_arg) = dev_config();
    for client in ["codex", "gemini"] {
        let (code, said) = run(
            home.path(),
            &["install", "--client", client, "--config", &config_arg],
        );
        assert_eq!(code, 0, "{said}");
    }
    let toolshelf = std::fs::canonicalize(crate::harness::toolshelf_bin()).expect("binary");

    let codex = client_cli(
        home.path(),
        home.path(),
        "codex",
        &["mcp", "get", "toolshelf", "--json"],
    );
    let json_at = codex.find('{').unwrap_or_else(|| panic!("codex: {codex}"));
    let read: Value = serde_json::Deserializer::from_str(&codex[json_at..])
        .into_iter()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("codex: {codex}"));
    assert_eq!(read["transport"]["type"], "stdio", "{codex}");
    assert_eq!(
        read["transport"]["command"],
        toolshelf.display().to_string()
    );
    assert_eq!(
        read["transport"]["args"],
        json!(["serve", "--config", config_arg])
    );

    // Gemini CLI lists the servers of trusted folders only, and connects to each it lists.
    let project = tempfile::tempdir().expect("project");
    let trusted = json!({ project.path().display().to_string(): "TRUST_FOLDER" });
    std::fs::write(
        home.path().join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .expect("trust");
    let gemini = client_cli(home.path(), project.path(), "gemini", &["mcp", "list"]);
    let line = format!(
        "✓ toolshelf: {} serve --config {config_arg} (stdio) - Connected",
        toolshelf.display()
    );
    assert!(gemini.contains(&line), "{gemini}");
}
