//! What the tests fetch on first use, into `target/`: the pinned npm servers, the Python
//! clients' virtual environment, the linters of `deploy/`.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Mutex, OnceLock},
};

use serde_json::{Value, json};

/// The folder where the pinned npm servers are installed, installing them on first use.
pub fn interop_dir() -> PathBuf {
    static INSTALLED: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    install_once(&INSTALLED, "install-interop.sh", "target/interop", &[])
}

/// The folder where the pinned MCP clients' own CLIs (Codex, Gemini) are installed, on first use.
pub fn client_clis_dir() -> PathBuf {
    static INSTALLED: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    let packages = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients");
    install_once(
        &INSTALLED,
        "install-interop.sh",
        "target/clients",
        &[packages],
    )
}

/// The virtual environment with the pinned Python MCP clients, installed on first use.
pub fn python_env() -> PathBuf {
    static INSTALLED: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    install_once(&INSTALLED, "install-python.sh", "target/pyenv", &[])
}

/// The folder of the Python venv with deploy/'s linters (hadolint, kubernetes-validate),
/// installed on first use.
pub fn lint_env() -> PathBuf {
    static INSTALLED: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    let requirements = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/deploy/requirements.txt");
    install_once(
        &INSTALLED,
        "install-python.sh",
        "target/lintenv",
        &[requirements],
    )
}

/// Runs `scripts/{script} folder args…` once per test run (the script itself skips what is
/// installed already).
fn install_once(
    installed: &'static OnceLock<Mutex<Option<PathBuf>>>,
    script: &str,
    folder: &str,
    args: &[&str],
) -> PathBuf {
    let lock = installed.get_or_init(|| Mutex::new(None));
    let mut guard = lock.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(dir) = guard.as_ref() {
        return dir.clone();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join(folder);
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts").join(script))
        .arg(&dir)
        .args(args)
        .stdin(Stdio::null())
        .status()
        .unwrap_or_else(|error| panic!("run scripts/{script}: {error}"));
    assert!(
        status.success(),
        "scripts/{script} failed: see its output above"
    );
    *guard = Some(dir.clone());
    dir
}

/// A server entry that runs an installed npm server binary with `args`.
pub fn npm_server(bin: &str, args: &[&str]) -> Value {
    let path = interop_dir().join("node_modules/.bin").join(bin);
    json!({ "command": path, "args": args })
}
