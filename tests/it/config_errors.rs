//! A corpus of broken configs: each is refused with exit status 2 and every problem listed with
//! its path and a fix, and nothing is started.

use std::process::Stdio;

/// Runs `toolshelf serve` on `text` (as `bad.json` in a fresh folder) and returns (status, stderr).
fn refuse(text: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("bad.json"), text).expect("write");
    let output = crate::harness::toolshelf_std()
        .args(["serve", "--config", "bad.json"])
        .current_dir(dir.path())
        .env_remove("TOOLSHELF_TEST_SURELY_UNSET")
        .env("TOOLSHELF_TEST_SET", "set-value")
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf");
    assert!(output.stdout.is_empty(), "nothing may reach stdout");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const CORPUS: &[(&str, &str)] = &[
    ("not_json", r#"{"toolboxes": {"a": }"#),
    ("trailing_comma", "{\"toolboxes\": {},}"),
    ("top_level_not_object", "[]"),
    ("empty_object", "{}"),
    ("no_toolboxes", r#"{"toolboxes": {}}"#),
    (
        "unknown_keys_everywhere",
        r#"{
        "toolboxs": {},
        "toolboxes": {
            "dev": {
                "descripton": "typo",
                "mcpServers": {
                    "fs": { "comand": "npx", "command": "npx", "argz": [] }
                }
            }
        }
    }"#,
    ),
    (
        "bad_names",
        r#"{"toolboxes": {
        "has space": { "mcpServers": { "ok": { "command": "x" } } },
        "ok": { "mcpServers": { "sl/ash": { "command": "x" }, "": { "command": "x" } } },
        "this-name-is-far-too-long-for-a-toolbox-name-because-it-has-more-than-64-chars": { "mcpServers": { "s": { "command": "x" } } }
    }}"#,
    ),
    (
        "missing_command_and_servers",
        r#"{"toolboxes": {
        "a": { "mcpServers": { "s": { "args": ["x"] } } },
        "b": { "description": "no servers" }
    }}"#,
    ),
    (
        "wrong_types",
        r#"{"toolboxes": {
        "a": { "description": 7, "mcpServers": { "s": {
            "command": ["npx"], "args": "x", "env": {"K": 1}, "cwd": false,
            "toolFilters": 3, "startupTimeout": "30", "callTimeout": -1
        } } }
    }}"#,
    ),
    (
        "empty_values",
        r#"{"toolboxes": {
        "a": { "mcpServers": { "s": { "command": "", "toolFilters": [] }, "t": { "command": "${TOOLSHELF_TEST_SURELY_UNSET:-}" } } }
    }}"#,
    ),
    (
        "variables",
        r#"{"toolboxes": {
        "a": { "mcpServers": { "s": {
            "command": "${TOOLSHELF_TEST_SURELY_UNSET}",
            "args": ["ok ${TOOLSHELF_TEST_SET}", "${TOOLSHELF_TEST_SURELY_UNSET}", "${unclosed"],
            "env": { "TOKEN": "${TOOLSHELF_TEST_SURELY_UNSET}", "FINE": "${TOOLSHELF_TEST_SURELY_UNSET:-d} $$5" },
            "cwd": "${1BAD}"
        } } }
    }}"#,
    ),
    (
        "variables_beside_other_problems",
        r#"{"toolboxes": {
        "a": { "mcpServers": {
            "s": { "comand": "x", "command": "${TOOLSHELF_TEST_SURELY_UNSET}",
                   "env": { "TOKEN": "${TOOLSHELF_TEST_SURELY_UNSET}", "N": 3 } },
            "t": { "command": "ok", "args": ["${TOOLSHELF_TEST_SURELY_UNSET}"], "startupTimeout": "5" }
        } },
        "b": { "mcpServers": {} }
    }}"#,
    ),
    (
        "naming",
        r#"{"toolboxes": {
        "dev": { "mcpServers": {
            "git": { "command": "x", "tags": ["git", "Version Control", "-x", "a"],
                     "tools": {
                         "git_status": { "alias": "status", "tags": ["read-only", "read_only"] },
                         "git_log": { "alias": "Log!" },
                         "git_diff": { "alias": "d" },
                         "git_show": { "alias": "status", "hiden": true }
                     } },
            "hg": { "command": "y", "tools": { "hg_status": { "alias": "status" } } }
        } },
        "other": { "mcpServers": { "git": { "command": "x", "tools": { "git_status": { "alias": "status" } } } } }
    }}"#,
    ),
    (
        "duplicate_aliases",
        r#"{"toolboxes": {
        "dev": { "mcpServers": {
            "git": { "command": "x", "tools": { "git_status": { "alias": "status" }, "git_show": { "alias": "status" } } },
            "hg": { "command": "y", "tools": { "hg_status": { "alias": "status" } } }
        } },
        "other": { "mcpServers": { "git": { "command": "x", "tools": { "git_status": { "alias": "status" } } } } }
    }}"#,
    ),
    (
        "remote_servers",
        r#"{"toolboxes": {
        "a": { "mcpServers": {
            "both": { "command": "x", "url": "https://example.com/mcp" },
            "neither": { "type": "http" },
            "stdio_with_url": { "type": "stdio", "url": "https://example.com/mcp" },
            "sse_with_command": { "type": "sse", "command": "x" },
            "local_keys": { "url": "https://example.com/mcp", "args": ["x"], "env": { "K": "v" }, "cwd": ".", "inheritEnv": true },
            "headers_on_stdio": { "command": "x", "headers": { "Authorization": "Bearer ${TOOLSHELF_TEST_SET}" } },
            "ftp": { "url": "ftp://example.com/mcp" },
            "not_a_url": { "url": "example.com/mcp?key=${TOOLSHELF_TEST_SET}" },
            "bad_headers": { "url": "https://example.com/mcp", "headers": {
                "Bad Name": "x", "Mcp-Session-Id": "x", "X-Secret": "${TOOLSHELF_TEST_SET}\u0001",
                "X-Unset": "Bearer ${TOOLSHELF_TEST_SURELY_UNSET}" } },
            "unknown_type": { "type": "websocket", "url": "wss://example.com/mcp" }
        } }
    }}"#,
    ),
    (
        "oauth",
        r#"{"toolboxes": {
        "a": { "mcpServers": {
            "on_stdio": { "command": "x", "auth": "oauth", "oauth": { "scopes": ["s"] } },
            "settings_without_auth": { "url": "https://example.com/mcp", "oauth": { "clientId": "c" } },
            "with_authorization": { "url": "https://example.com/mcp", "auth": "oauth", "headers": { "Authorization": "Bearer ${TOOLSHELF_TEST_SET}" } },
            "secret_without_id": { "url": "https://example.com/mcp", "auth": "oauth", "oauth": { "clientSecret": "${TOOLSHELF_TEST_SET}" } },
            "bad_document": { "url": "https://example.com/mcp", "auth": "oauth", "oauth": { "clientMetadataUrl": "http://example.com/" } },
            "unknown": { "url": "https://example.com/mcp", "auth": "basic", "oauth": { "callbackPort": 0, "redirect": "x" } }
        } }
    }}"#,
    ),
    (
        "prompt_aliases",
        r#"{"toolboxes": {
        "a": { "mcpServers": { "s": { "command": "x", "prompts": {
            "one": { "alias": "two" }, "two": {}, "three": { "alias": "same" }, "four": { "alias": "same" }
        } } } }
    }}"#,
    ),
    (
        "plain_file",
        r#"{"theme": "dark", "globalShortcut": "Ctrl+Space", "mcpServers": { "s": { "comand": "x" } }}"#,
    ),
    (
        "timeouts",
        r#"{"toolboxes": {
        "a": { "mcpServers": { "s": { "command": "x", "startupTimeout": 0, "callTimeout": 1e300 } } }
    }}"#,
    ),
];

#[test]
fn broken_configs_are_refused_with_every_problem() {
    let mut seen = String::new();
    for (name, text) in CORPUS {
        let (status, stderr) = refuse(text);
        assert_eq!(status, Some(2), "{name}: {stderr}");
        assert!(
            stderr.starts_with("error: the config file bad.json has "),
            "{name}: {stderr}"
        );
        assert!(
            !stderr.contains("set-value"),
            "{name}: a variable's value reached the log"
        );
        if *name == "unknown_keys_everywhere" {
            // docs/configuration.md shows this problem and the closing hint.
            let typo = stderr
                .lines()
                .find(|line| line.contains("fs.comand"))
                .expect("the typo's line");
            crate::docs::assert_quoted(typo);
            crate::docs::assert_quoted(stderr.lines().last().expect("a closing line"));
        }
        seen.push_str(&format!("## {name}\n{stderr}\n"));
    }
    insta::assert_snapshot!("config_errors", seen);
}

#[test]
fn a_missing_config_file_says_where_it_looked_and_what_to_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    // `serve ARGS` in `dir` without TOOLSHELF_CONFIG: its exit code and stderr, the folder
    // written as `<folder>`.
    let serve = |args: &[&str]| {
        let output = crate::harness::toolshelf_std()
            .arg("serve")
            .args(args)
            .current_dir(dir.path())
            .env_remove("TOOLSHELF_CONFIG")
            .stdin(Stdio::null())
            .output()
            .expect("run toolshelf");
        let folder = dir.path().canonicalize().expect("folder");
        let stderr = String::from_utf8_lossy(&output.stderr)
            .replace(&folder.display().to_string(), "<folder>")
            .replace(&dir.path().display().to_string(), "<folder>");
        (output.status.code(), stderr)
    };
    let (code, stderr) = serve(&[]);
    assert_eq!(code, Some(2));
    insta::assert_snapshot!("missing_config", stderr);
    // Given with --config: that is what is said, and --config is not suggested again.
    let (code, stderr) = serve(&["--config", "nowhere.json"]);
    assert_eq!(code, Some(2));
    insta::assert_snapshot!("missing_config_given", stderr);
}

#[test]
fn the_config_path_comes_from_the_environment_when_not_given() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("elsewhere.json"), "{}").expect("write");
    let output = crate::harness::toolshelf_std()
        .arg("serve")
        .current_dir(dir.path())
        .env("TOOLSHELF_CONFIG", "elsewhere.json")
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: the config file elsewhere.json has 1 problem"),
        "{stderr}"
    );
}
