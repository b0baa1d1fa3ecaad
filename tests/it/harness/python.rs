//! The Python clients of tests/python (the `mcp` SDK, fastmcp), run in the test venv: each
//! prints one JSON object with what it saw.

use std::{ffi::OsString, path::Path, process::Stdio};

use serde_json::Value;

use crate::harness::{DEADLINE, python_env, toolshelf_bin};

/// Runs the client tests/python/`script` with `args` in the test venv; returns the JSON it
/// printed.
pub(crate) async fn python_client(script: &str, args: Vec<OsString>) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let output = tokio::process::Command::new(python_env().join("bin/python"))
        .arg(&script)
        .env("XDG_CACHE_HOME", crate::harness::fresh_cache())
        .args(args)
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(DEADLINE, output)
        .await
        .expect("the client finishes in time")
        .expect("run the client");
    assert!(
        output.status.success(),
        "{} failed: {}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client printed JSON")
}

/// Runs a client of tests/python that talks to a `serve --http` at an address in `args`;
/// returns the JSON it printed, whatever its exit status.
pub(crate) async fn agent(script: &str, args: &[&str]) -> Value {
    let script = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let output = tokio::process::Command::new(python_env().join("bin/python"))
        .arg(&script)
        .args(args)
        .stdin(Stdio::null())
        .output();
    let output = tokio::time::timeout(DEADLINE, output)
        .await
        .expect("the client finishes in time")
        .expect("run the client");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{script}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The end of a stdio client's command line: `-- toolshelf serve FLAGS --config PATH`, the
/// toolshelf the client starts.
pub(crate) fn toolshelf_serve(flags: &[&str], config_path: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["--".into(), toolshelf_bin().into(), "serve".into()];
    args.extend(flags.iter().map(OsString::from));
    args.push("--config".into());
    args.push(config_path.into());
    args
}
