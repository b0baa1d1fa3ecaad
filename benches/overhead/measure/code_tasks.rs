//! Code mode's tokens and turns: `benches/code/tokens_and_turns.py` solves multi-step tasks over
//! the filesystem, memory and everything servers step by step through `use_tool`, in one
//! `run_code` script, and in one script through FastMCP's CodeMode, and reports what each way
//! costs the agent. It needs the interop servers and the tests' Python venv (fastmcp and
//! pydantic-monty), which `cargo test` installs.

use serde_json::{Value, json};

use super::*;

const WAYS: [&str; 3] = ["use_tool", "run_code", "fastmcp_code_mode"];

impl Bench<'_> {
    /// Each task's calls, tokens written and read, and time per script, by way; `None` when
    /// the venv or the servers are missing.
    pub(super) fn code_tasks(&self) -> anyhow::Result<Option<Value>> {
        let (Some(python), Some(bin)) = (&self.options.python, &self.options.npm_bin) else {
            let _ = writeln!(
                std::io::stderr(),
                "code mode's tasks not measured: they need target/pyenv and target/interop \
                 (bash scripts/install-python.sh and scripts/install-interop.sh, which cargo \
                 test runs)"
            );
            return Ok(None);
        };
        let interop = bin
            .parent()
            .and_then(Path::parent)
            .context("the interop folder")?;
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/code/tokens_and_turns.py"
        );
        let done = std::process::Command::new(python)
            .arg(script)
            .arg(&self.options.toolshelf)
            .arg("node")
            .arg(self.dir.join("code-tasks"))
            .arg(self.rounds(1, 5).to_string())
            .env("TOOLSHELF_INTEROP", interop)
            .stderr(Stdio::inherit())
            .output()?;
        if !done.status.success() {
            bail!("{script} failed: {}", String::from_utf8_lossy(&done.stderr));
        }
        let report: Value = serde_json::from_slice(&done.stdout)?;
        let mut tasks = serde_json::Map::new();
        for (name, task) in report.as_object().context("tasks by name")? {
            let mut ways = serde_json::Map::new();
            for way in WAYS {
                let figures = &task[way];
                ways.insert(
                    way.into(),
                    json!({
                        "calls": figures["calls"],
                        "tokens_written": figures["written"]["tokens"],
                        "tokens_read": figures["read"]["tokens"],
                        "bytes_read": figures["read"]["bytes"],
                        "ms": figures.get("ms"),
                    }),
                );
            }
            tasks.insert(name.clone(), ways.into());
        }
        Ok(Some(tasks.into()))
    }
}

/// A line per task for the terminal: each way's calls, tokens and time per script.
pub(super) fn summary(tasks: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    for (task, ways) in tasks.as_object().into_iter().flatten() {
        let way = |name: &str| {
            let figures = &ways[name];
            let ms = figures["ms"].as_f64();
            format!(
                "calls {}, tokens written {}, read {} ({} bytes){}",
                figures["calls"],
                figures["tokens_written"],
                figures["tokens_read"],
                figures["bytes_read"],
                ms.map(|ms| format!(", {ms} ms a script"))
                    .unwrap_or_default()
            )
        };
        lines.push(format!(
            "  task {task}: use_tool {}; run_code {}; FastMCP CodeMode {}",
            way("use_tool"),
            way("run_code"),
            way("fastmcp_code_mode")
        ));
    }
    if !lines.is_empty() {
        lines.push("  the table docs/code-mode.md quotes:".into());
        lines.extend(markdown(tasks).lines().map(|row| format!("  {row}")));
    }
    lines
}

/// The table docs/code-mode.md quotes: calls, tokens and bytes by task and way, and their totals
/// (times vary from run to run, so they stay out of it).
pub fn markdown(tasks: &Value) -> String {
    let mut table = String::from(
        "| task | agent calls: `use_tool` / `run_code` | tokens read: `use_tool` / `run_code` / FastMCP | bytes read: `use_tool` / `run_code` | tokens written: `use_tool` / `run_code` / FastMCP |\n|---|---|---|---|---|\n",
    );
    let mut totals = [0u64; 10];
    let rows = tasks.as_object().into_iter().flatten();
    for (task, ways) in rows {
        let figures = [
            &ways["use_tool"]["calls"],
            &ways["run_code"]["calls"],
            &ways["use_tool"]["tokens_read"],
            &ways["run_code"]["tokens_read"],
            &ways["fastmcp_code_mode"]["tokens_read"],
            &ways["use_tool"]["bytes_read"],
            &ways["run_code"]["bytes_read"],
            &ways["use_tool"]["tokens_written"],
            &ways["run_code"]["tokens_written"],
            &ways["fastmcp_code_mode"]["tokens_written"],
        ]
        .map(|figure| figure.as_u64().unwrap_or_default());
        for (total, figure) in totals.iter_mut().zip(figures) {
            *total += figure;
        }
        table.push_str(&row(task, &figures));
    }
    table.push_str(&row("all", &totals));
    table
}

fn row(task: &str, figures: &[u64; 10]) -> String {
    let [
        calls,
        script_calls,
        read,
        script_read,
        theirs_read,
        bytes,
        script_bytes,
        written,
        script_written,
        theirs_written,
    ] = figures.map(|figure| figure.to_string());
    format!(
        "| {task} | {calls} / {script_calls} | {read} / {script_read} / {theirs_read} | {bytes} / {script_bytes} | {written} / {script_written} / {theirs_written} |\n"
    )
}
