//! Test builders: a config on disk, toolshelf's binaries, bounded waits and redactions; a running
//! `toolshelf serve` with an rmcp client (`shelf`) or a hand-driven one (`raw_client`); `serve
//! --http` and its raw sessions (`http`); how processes start and become ready (`launch`, shared
//! with the benchmark); what was fetched into `target/` (`installs`); the processes toolshelf
//! started (`processes`); the Python clients (`python`).

pub mod authorization;
pub mod http;
mod installs;
pub mod launch;
mod processes;
pub mod python;
mod raw_client;
mod shelf;

pub use installs::{client_clis_dir, interop_dir, lint_env, npm_server, python_env};
pub use launch::free_port;
pub use processes::{children_of, is_alive, wait_all_gone};
pub use raw_client::RawClient;
pub use shelf::{
    ClientKind, Shelf, serve_command, serve_command_as, spawn_with, start, start_at, start_dev,
    start_logged,
};

use std::{
    path::{Path, PathBuf},
    sync::OnceLock,
    time::Duration,
};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// Every wait in the tests is bounded by this.
pub const DEADLINE: Duration = Duration::from_secs(60);

pub fn toolshelf_bin() -> &'static str {
    env!("CARGO_BIN_EXE_toolshelf")
}

/// `toolshelf`, with a persisted catalog of its own (see `fresh_cache`).
pub fn toolshelf() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(toolshelf_bin());
    command.env("XDG_CACHE_HOME", fresh_cache());
    command
}

/// As `toolshelf`, for a process run to its end.
pub fn toolshelf_std() -> std::process::Command {
    let mut command = std::process::Command::new(toolshelf_bin());
    command.env("XDG_CACHE_HOME", fresh_cache());
    command
}

/// The stderr of `toolshelf ARGS` (without `TOOLSHELF_TOKEN`, nothing on stdin), which must
/// exit with status 2: refused at start.
pub fn refused_at_start(args: &[&str]) -> String {
    let output = toolshelf_std()
        .args(args)
        .env_remove("TOOLSHELF_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolshelf");
    assert_eq!(output.status.code(), Some(2));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A cache folder no other toolshelf of the tests uses: one test's persisted catalog never
/// answers another's open (the same fixture command appears in many tests). Under cargo's
/// folder for integration tests' files; emptied when the tests start.
pub fn fresh_cache() -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let root = ROOT.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("caches");
        let _ = std::fs::remove_dir_all(&root);
        root
    });
    let folder = root.join(
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .to_string(),
    );
    std::fs::create_dir_all(&folder).expect("a cache folder");
    folder
}

pub fn fixture_bin() -> &'static str {
    env!("CARGO_BIN_EXE_toolshelf-fixture")
}

/// A server entry that runs the fixture with `args`.
pub fn fixture(args: &[&str]) -> Value {
    json!({ "command": fixture_bin(), "args": args })
}

/// A config with one toolbox per `(name, description, servers)`.
pub fn config(toolboxes: &[(&str, &str, Value)]) -> Value {
    let mut boxes = serde_json::Map::new();
    for (name, description, servers) in toolboxes {
        boxes.insert(
            (*name).to_owned(),
            json!({ "description": description, "mcpServers": servers }),
        );
    }
    json!({ "toolboxes": boxes })
}

/// Writes `config` to a fresh folder and returns (folder, config path).
pub fn write_config(config: &Value) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("toolboxes.json");
    std::fs::write(&path, serde_json::to_vec_pretty(config).expect("json")).expect("write config");
    (dir, path)
}

/// The text of the first content block.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

/// The text of an `isError` result; fails the test if the result is not an error.
pub fn error_text(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error, got {result:?}"
    );
    text(result)
}

/// The path of `toolboxes.example.json`, the README's config.
pub const EXAMPLE_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/toolboxes.example.json");

/// `toolboxes.example.json` as JSON.
pub fn example_config() -> Value {
    let text = std::fs::read_to_string(EXAMPLE_CONFIG).expect("read the example config");
    serde_json::from_str(&text).expect("the example config is JSON")
}

/// `text` with wall-clock times (`HH:MM:SS`) and waits (`(in 2 s)`) replaced, for snapshots.
pub fn redact_clock(text: &str) -> String {
    let text = redact_times_of_day(text);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("(in ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 4..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(" s)") {
            out.push_str("(in N s)");
            rest = &after[digits + 3..];
        } else {
            out.push_str("(in ");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn redact_times_of_day(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut index = 0;
    while index < text.len() {
        let window = bytes.get(index..index + 8);
        let is_clock = window.is_some_and(|w| {
            w.iter().enumerate().all(|(i, b)| {
                if i == 2 || i == 5 {
                    *b == b':'
                } else {
                    b.is_ascii_digit()
                }
            })
        });
        if is_clock {
            out.push_str("HH:MM:SS");
            index += 8;
        } else {
            let ch = text[index..].chars().next().unwrap_or(' ');
            out.push(ch);
            index += ch.len_utf8();
        }
    }
    out
}

/// The tools of an `open_toolbox` result, each with its server's name added as `server`.
pub fn opened_tools(opened: &Value) -> Vec<Value> {
    let servers = opened["servers"].as_array().expect("servers");
    servers
        .iter()
        .flat_map(|server| {
            let tools = server["tools"].as_array().cloned().unwrap_or_default();
            tools.into_iter().map(|mut tool| {
                tool["server"] = server["name"].clone();
                tool
            })
        })
        .collect()
}

/// Polls `probe` every 50 ms until it returns `Some`, failing the test at the deadline.
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never happened: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (bounded) until the file at `path` has the line `line` (the fixture's `--events`).
pub async fn wait_for_line(path: &Path, line: &str) {
    eventually(&format!("the child wrote '{line}'"), || async {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .any(|seen| seen == line)
            .then_some(())
    })
    .await;
}
