//! The command line: `schema`, `check`, `--help`.

use std::process::{Output, Stdio};

use serde_json::json;

use crate::harness::{EXAMPLE_CONFIG, config, example_config, fixture, write_config};

fn run(args: &[&str]) -> Output {
    crate::harness::toolshelf_std()
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf")
}

#[test]
fn schema_prints_the_config_schema_and_it_accepts_the_example() {
    let output = run(&["schema"]);
    assert!(output.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    insta::assert_json_snapshot!("config_schema", schema);
    let example = example_config();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&example)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // What the loader refuses, the printed schema refuses too.
    for refused in [
        json!({"toolboxes": {}}),
        json!({"toolboxes": {"a": {"mcpServers": {}}}}),
    ] {
        assert!(!validator.is_valid(&refused), "{refused}");
        let (_dir, path) = write_config(&refused);
        let output = run(&["check", "--config", path.to_str().expect("utf-8")]);
        assert_eq!(output.status.code(), Some(2), "{refused}");
    }
    let path = std::path::Path::new(EXAMPLE_CONFIG);
    let loaded = toolshelf::config::load(path).expect("the example config is valid");
    assert_eq!(loaded.toolboxes.len(), 3);
    // The filesystem server serves the config's own folder, wherever the client starts toolshelf.
    let fs = loaded.toolboxes["files"].server("fs").expect("files/fs");
    let fs = fs.local().expect("fs is a local server");
    let served = fs.cwd.as_deref().expect("the example sets cwd");
    assert_eq!(
        served.canonicalize().expect("cwd exists"),
        path.parent()
            .expect("folder")
            .canonicalize()
            .expect("folder exists")
    );
    assert_eq!(fs.args.last().map(String::as_str), Some("."));
}

#[test]
fn check_opens_every_toolbox_and_prints_a_table() {
    let (_dir, path) = write_config(&config(&[
        (
            "dev",
            "Fixture",
            json!({ "a": fixture(&[]), "b": fixture(&["--page-size", "3"]) }),
        ),
        ("ops", "Ops", json!({ "c": fixture(&[]) })),
    ]));
    let output = run(&["check", "--config", path.to_str().expect("utf-8")]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let redacted: String = stdout
        .lines()
        .map(|line| {
            // Start-up times vary: keep the column, not the number.
            let mut cells: Vec<&str> = line.split_whitespace().collect();
            if cells.len() == 6 && cells[5] == "ms" {
                cells[4] = "N";
            }
            cells.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("check_ok", redacted);
}

#[test]
fn check_fails_when_a_server_fails() {
    let (_dir, path) = write_config(&config(&[(
        "dev",
        "Fixture",
        json!({ "good": fixture(&[]), "bad": fixture(&["--exit-at-start", "4"]) }),
    )]));
    let output = run(&["check", "--config", path.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert!(
        rows.contains(&vec!["dev", "bad", "failed", "-", "-"]),
        "{stdout}"
    );
    assert!(stdout.contains("failed: dev/bad: initialize failed: the server closed the connection; the process exited with status 4"), "{stdout}");
}

#[test]
fn every_command_has_help() {
    let mut all = String::new();
    for args in [
        &["--help"][..],
        &["serve", "--help"],
        &["check", "--help"],
        &["tools", "--help"],
        &["call", "--help"],
        &["import", "--help"],
        &["cache", "--help"],
        &["login", "--help"],
        &["logout", "--help"],
        &["completions", "--help"],
        &["man", "--help"],
        &["schema", "--help"],
    ] {
        let output = run(args);
        assert!(output.status.success());
        if args.len() > 1 {
            let help = String::from_utf8_lossy(&output.stdout);
            assert!(
                help.contains("Example: `toolshelf"),
                "{args:?} has no example"
            );
        }
        all.push_str(&format!(
            "$ toolshelf {}\n{}\n",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout)
        ));
    }
    // The default log filter `--help` names is the docs'.
    let filter = "warn,toolshelf=info,rmcp=error";
    assert!(all.contains(&format!("Default: {filter}")), "{all}");
    crate::docs::assert_quoted(&format!("(default `{filter}`"));
    insta::assert_snapshot!("help", all);
}

#[test]
fn usage_errors_exit_with_two() {
    let output = run(&["serve", "--bogus"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn check_on_real_servers_logs_nothing_when_all_is_well() {
    // server-everything announces a list change as it starts, which once raced check's
    // shutdown ("re-listing failed" and a Node EPIPE trace); npx and the servers write banners.
    let everything = crate::harness::npm_server("mcp-server-everything", &[]);
    let memory = crate::harness::npm_server("mcp-server-memory", &[]);
    let (_dir, path) = write_config(&config(&[
        ("demo", "Demo", json!({ "everything": everything })),
        ("memory", "Memory", json!({ "memory": memory })),
    ]));
    let output = crate::harness::toolshelf_std()
        .args(["check", "--config"])
        .arg(&path)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}
