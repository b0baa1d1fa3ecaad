//! The shell commands, run as processes against real children (the fixture, server-everything):
//! `tools` and `call`, their output, exit codes and what they leave running.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{config, fixture_bin, is_alive, npm_server, toolshelf_std, write_config};

/// Runs `toolshelf ARGS` with `cache` as the user's cache folder; (status, stdout, stderr).
pub(crate) fn run(cache: &Path, args: &[&str]) -> (i32, String, String) {
    let output = toolshelf_std()
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolshelf");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A toolbox `dev` of two fixtures (`fx`, with an alias and a tag, and `other`), each counting
/// its starts in a file of `dir`, and a toolbox `demo` of server-everything.
fn shell_config(dir: &Path) -> Value {
    let starts = |name: &str| dir.join(name).display().to_string();
    let mut fx = json!({"command": fixture_bin(), "args": ["--starts-file", starts("fx-starts")]});
    fx["tools"] = json!({"echo": {"alias": "say", "tags": ["read-only"]}});
    config(&[
        (
            "dev",
            "Development",
            json!({
                "fx": fx,
                "other": {"command": fixture_bin(), "args": ["--starts-file", starts("other-starts")]},
            }),
        ),
        (
            "demo",
            "The MCP reference server",
            json!({"everything": npm_server("mcp-server-everything", &["stdio"])}),
        ),
    ])
}

pub(crate) fn starts(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn tools_lists_a_table_or_open_toolbox_s_json_and_reads_the_catalog_the_second_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let (_config_dir, path) = write_config(&shell_config(dir.path()));
    let config = path.to_str().expect("utf-8");

    let (code, table, stderr) = run(&cache, &["tools", "dev", "--config", config]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("tools_table", table);
    assert_eq!(starts(&dir.path().join("fx-starts")), 1);

    let (code, printed, stderr) = run(&cache, &["tools", "--config", config, "dev", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let opened: Value = serde_json::from_str(&printed).expect("JSON");
    assert_eq!(opened["toolbox"], "dev");
    assert_eq!(opened["servers"][0]["catalog"], "cached", "{opened}");
    assert_eq!(opened["servers"][0]["tools"][0]["alias"], "say");
    assert_eq!(
        starts(&dir.path().join("fx-starts")),
        1,
        "the second listing came from the catalog"
    );

    let (code, printed, stderr) = run(&cache, &["tools", "--json", "--config", config]);
    assert_eq!(code, 0, "{stderr}");
    let every: Value = serde_json::from_str(&printed).expect("JSON");
    let names: Vec<&str> = every
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|opened| opened["toolbox"].as_str())
        .collect();
    assert_eq!(names, ["dev", "demo"]);

    let (code, _, stderr) = run(&cache, &["tools", "dve", "--config", config]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("Toolbox 'dve' does not exist\nDid you mean: dev?"),
        "{stderr}"
    );
}

#[test]
fn call_types_its_arguments_prints_the_result_and_leaves_nothing_running() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let (_config_dir, path) = write_config(&shell_config(dir.path()));
    let config = path.to_str().expect("utf-8");
    let saved = dir.path().join("saved");
    let saved_arg = saved.to_str().expect("utf-8");

    let deep = format!(r#"{{"d":{}{}}}"#, "[".repeat(101), "]".repeat(101));
    let mut transcript = String::new();
    for args in [
        // Typed by server-everything's schema: numbers, not strings.
        vec!["call", "demo", "everything", "get-sum", "a=2", "b=3"],
        // Options after the arguments, and an alias.
        vec!["call", "dev", "fx", "say", "message=hi"],
        vec![
            "call",
            "dev",
            "fx",
            "echo",
            "--args",
            r#"{"message": "base", "n": 1}"#,
            "n:=[1,2]",
        ],
        vec!["call", "dev", "fx", "echo", "message=x", "--json"],
        vec!["call", "dev", "fx", "mixed", "--save-dir", saved_arg],
        vec!["call", "dev", "fx", "fail"],
        vec!["call", "dev", "fx", "ech"],
        vec!["call", "dev", "fxx", "echo"],
        vec!["call", "dve", "fx", "echo"],
        vec!["call", "dev", "fx", "echo", "--args", "[1]"],
        vec!["call", "demo", "everything", "get-sum", "a=two"],
        vec!["call", "dev", "fx", "echo", "lonely"],
        // Nested deeper than a child reads (serde_json here stops at 128 levels, children too
        // once the request's own levels are added).
        vec!["call", "dev", "fx", "echo", "--args", &deep],
    ] {
        let mut with_config = args.clone();
        with_config.extend(["--config", config]);
        let (code, stdout, stderr) = run(&cache, &with_config);
        let shown = args.join(" ").replace(saved_arg, "SAVED");
        transcript.push_str(&format!(
            "$ toolshelf {shown}\nexit {code}\nstdout:\n{}stderr:\n{}\n",
            stdout.replace(saved_arg, "SAVED"),
            stderr.replace(saved_arg, "SAVED")
        ));
    }
    insta::assert_snapshot!("call_transcript", transcript);

    // server-filesystem (npm): a file of the folder it serves, its path typed as a string.
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).expect("folder");
    std::fs::write(served.join("note.txt"), "read through toolshelf call\n").expect("write");
    let served_arg = served.to_str().expect("utf-8");
    let (_files_dir, files_path) = write_config(&crate::harness::config(&[(
        "files",
        "Files",
        json!({"fs": npm_server("mcp-server-filesystem", &[served_arg])}),
    )]));
    let note = served.join("note.txt");
    let (code, stdout, stderr) = run(
        &cache,
        &[
            "call",
            "files",
            "fs",
            "read_text_file",
            &format!("path={}", note.display()),
            "--config",
            files_path.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "read through toolshelf call\n");
    let png = std::fs::read(saved.join("content-1.png")).expect("the image was saved");
    assert_eq!(&png[1..4], b"PNG");

    let (code, pid, stderr) = run(&cache, &["call", "dev", "fx", "pid", "--config", config]);
    assert_eq!(code, 0, "{stderr}");
    let pid: u32 = pid.trim().parse().expect("the fixture's pid");
    assert!(!is_alive(pid), "the server outlived `call`");
    assert_eq!(
        starts(&dir.path().join("other-starts")),
        0,
        "only the named server starts"
    );
}

#[test]
fn completions_and_the_man_page_come_from_the_parser_s_definitions() {
    let cache = tempfile::tempdir().expect("temp dir");
    for shell in ["bash", "zsh", "fish"] {
        let (code, script, stderr) = run(cache.path(), &["completions", shell]);
        assert_eq!(code, 0, "{stderr}");
        // The script asks toolshelf itself at each TAB (see config_commands for names).
        assert!(
            script.contains(&format!("COMPLETE={shell}"))
                || script.contains(&format!("COMPLETE=\"{shell}\"")),
            "{shell}: {script}"
        );
        let offered = std::process::Command::new(crate::harness::toolshelf_bin())
            .args(["--", "toolshelf", ""])
            .env("COMPLETE", shell)
            .env("_CLAP_IFS", "\n")
            .env("_CLAP_COMPLETE_INDEX", "1")
            .output()
            .expect("ask for completions");
        let offered = String::from_utf8_lossy(&offered.stdout);
        for command in ["call", "tools", "check", "serve", "install"] {
            assert!(
                offered
                    .lines()
                    .any(|line| line.split([':', '\t']).next() == Some(command)),
                "{shell}: no {command} in {offered}"
            );
        }
        if shell == "bash" {
            let mut checked = std::process::Command::new("bash")
                .arg("-n")
                .stdin(std::process::Stdio::piped())
                .spawn()
                .expect("bash");
            std::io::Write::write_all(&mut checked.stdin.take().expect("stdin"), script.as_bytes())
                .expect("write");
            assert!(
                checked.wait().expect("bash -n").success(),
                "bash: a syntax error"
            );
        }
    }
    let (code, page, _) = run(cache.path(), &["man"]);
    assert_eq!(code, 0);
    assert!(page.contains(".TH toolshelf 1"), "{page}");
    assert!(
        page.contains("call") && page.contains("completions"),
        "{page}"
    );
}

/// `toolshelf ARGS` on a pseudo-terminal (stderr is a terminal): what it wrote, and its status.
fn on_terminal(cache: &Path, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/terminal.py");
    let output = std::process::Command::new("python3")
        .arg(script)
        .arg(crate::harness::toolshelf_bin())
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run on a terminal");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn progress_is_drawn_on_a_terminal_and_nowhere_else() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let (_config_dir, path) = write_config(&config(&[(
        "dev",
        "Development",
        json!({
            "fx": {"command": fixture_bin()},
            "slow": {"command": fixture_bin(), "args": ["--init-delay-ms", "600"]},
        }),
    )]));
    let config = path.to_str().expect("utf-8");
    let call = [
        "call",
        "dev",
        "fx",
        "progress",
        "steps:=4",
        "interval_ms:=250",
        "--config",
        config,
    ];

    let drawn = on_terminal(&cache, &call);
    assert!(
        drawn.contains("dev/fx progress ["),
        "no progress bar: {drawn}"
    );
    assert!(drawn.contains("100% at 4"), "{drawn}");
    assert!(
        drawn.contains("sent 4 progress notifications\r\n"),
        "{drawn}"
    );
    assert!(drawn.trim_end().ends_with("exit 0"), "{drawn}");
    let (code, stdout, stderr) = run(&cache, &call);
    assert_eq!(code, 0);
    assert_eq!(stdout, "sent 4 progress notifications\n");
    assert_eq!(stderr, "", "progress drawn into a pipe");

    let checked = on_terminal(&cache, &["check", "--config", config]);
    assert!(
        checked.contains("dev/slow starting"),
        "no spinner: {checked}"
    );
    assert!(checked.contains("dev/fx ready in"), "{checked}");
    assert!(checked.trim_end().ends_with("exit 0"), "{checked}");
    let (code, stdout, stderr) = run(&cache, &["check", "--config", config]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stderr.contains("starting"),
        "a spinner in a pipe: {stderr}"
    );
    assert!(stdout.starts_with("TOOLBOX"), "{stdout}");
}

#[test]
fn a_failed_start_is_said_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_config_dir, path) = write_config(&crate::harness::config(&[(
        "dev",
        "Dev",
        json!({"gone": {"command": "/no/such/program"}}),
    )]));
    let config = path.to_str().expect("utf-8");
    let output = toolshelf_std()
        .args(["call", "dev", "gone", "x", "--config", config])
        .env("XDG_CACHE_HOME", dir.path())
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolshelf");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("cannot run '/no/such/program'").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.starts_with("error: executing tool 'x' in server 'gone'"),
        "{stderr}"
    );
}
