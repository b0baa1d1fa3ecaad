//! The packages `scripts/package.sh` builds, installed as a user would with the network cut off
//! (`unshare -rn`: a network namespace with no interface but loopback), each then serving a real
//! MCP session: `initialize`, `tools/list`, `open_toolbox` and a `use_tool` on the fixture.
//! The packages are built once per test run with the dev profile (the release build is the
//! same script without `TOOLSHELF_PACKAGE_PROFILE`).

use std::{
    os::unix::process::ExitStatusExt,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Mutex, OnceLock},
};

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, children_of, config, fixture, fresh_cache, serve_command, text, wait_all_gone,
    write_config,
};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The folder holding the built packages, built on first use; `TOOLSHELF_PACKAGES=OUT` tests
/// the packages a `scripts/package.sh OUT` built instead (a release's, say).
pub(crate) fn packages() -> PathBuf {
    if let Some(built) = std::env::var_os("TOOLSHELF_PACKAGES") {
        return PathBuf::from(built);
    }
    static BUILT: OnceLock<Mutex<bool>> = OnceLock::new();
    let out = Path::new(ROOT).join("target/packages");
    let mut built = BUILT
        .get_or_init(|| Mutex::new(false))
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    if !*built {
        let _ = std::fs::remove_dir_all(&out);
        let status = std::process::Command::new("bash")
            .arg(Path::new(ROOT).join("scripts/package.sh"))
            .arg(&out)
            .env("TOOLSHELF_PACKAGE_PROFILE", "dev")
            .stdin(Stdio::null())
            .status()
            .expect("run scripts/package.sh");
        assert!(status.success(), "scripts/package.sh failed: {status}");
        *built = true;
    }
    out
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
fn built(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("packages folder")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {prefix}…{suffix} in {dir:?}: {found:?}"
    );
    found.into_iter().next().unwrap_or_default()
}

/// `program args…` without a network.
fn offline(program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("unshare");
    command.arg("-rn").arg(program);
    command
}

fn fixture_config() -> (tempfile::TempDir, PathBuf) {
    write_config(&config(&[(
        "dev",
        "Development",
        json!({"fixture": fixture(&[])}),
    )]))
}

/// Serves a session through `command` (which ends in `serve --config`, given here): the client
/// sees the two tools, opens `dev` and calls the fixture's `echo`.
async fn session_through(mut command: tokio::process::Command, config: &Path) {
    command
        .arg("serve")
        .arg("--config")
        .arg(config)
        .env("XDG_CACHE_HOME", fresh_cache());
    let shelf = serve_command(command, Stdio::inherit()).await;
    assert_eq!(shelf.names().await, ["open_toolbox", "use_tool"]);
    let opened = shelf.open("dev").await;
    assert_ne!(opened.is_error, Some(true), "{opened:?}");
    let echoed = shelf
        .use_tool(
            "dev",
            "fixture",
            "echo",
            json!({"message": "through the package"}),
        )
        .await;
    assert!(text(&echoed).contains("through the package"), "{echoed:?}");
    shelf.close().await;
}

/// Runs `command` to its end, with the network cut off.
fn run_offline(dir: &Path, program: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new("unshare")
        .arg("-rn")
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env("npm_config_cache", Path::new(ROOT).join("target/npm-cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("run {program}: {error}"))
}

/// Installs the npm tarballs given into a new project folder, offline.
fn npm_install(tarballs: &[PathBuf]) -> tempfile::TempDir {
    let project = tempfile::tempdir().expect("project folder");
    std::fs::write(project.path().join("package.json"), r#"{"private": true}"#).expect("write");
    let mut args = vec!["install", "--offline", "--no-audit", "--no-fund"];
    let paths: Vec<String> = tarballs.iter().map(|t| t.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let installed = run_offline(project.path(), "npm", &args);
    assert!(
        installed.status.success(),
        "npm install: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    project
}

#[tokio::test]
async fn the_npm_packages_install_offline_and_npx_runs_a_session() {
    let out = packages();
    let launcher = built(&out, "toolshelf-mcp-0", ".tgz");
    let platform = built(&out, "toolshelf-mcp-linux-x64-", ".tgz");
    let project = npm_install(&[launcher, platform]);
    let (_dir, config) = fixture_config();
    let mut npx = offline("npx");
    npx.args(["--offline", "toolshelf-mcp"])
        .current_dir(project.path())
        .env("npm_config_cache", Path::new(ROOT).join("target/npm-cache"));
    session_through(npx, &config).await;

    // Into a client: the package writes its own entry, which starts it (an installed package
    // is started by its path, not through npx's cache).
    let client_file = project.path().join("cursor-mcp.json");
    let (file_arg, config_arg) = (
        client_file.display().to_string(),
        config.display().to_string(),
    );
    let install = [
        "--offline",
        "toolshelf-mcp",
        "install",
        "--client",
        "cursor",
        "--file",
        &file_arg,
        "--config",
        &config_arg,
    ];
    let installed = run_offline(project.path(), "npx", &install);
    assert!(installed.status.success(), "{installed:?}");
    let written: Value =
        serde_json::from_slice(&std::fs::read(&client_file).expect("client file")).expect("JSON");
    let entry = &written["mcpServers"]["toolshelf"];
    let command = entry["command"].as_str().expect("command");
    assert!(
        command.ends_with("node_modules/toolshelf-mcp-linux-x64/bin/toolshelf"),
        "{command}"
    );
    assert_eq!(entry["args"], json!(["serve", "--config", config_arg]));
    session_through(offline(command), &config).await;

    // The launcher ends as toolshelf ends: its exit code…
    let bad = run_offline(
        project.path(),
        "npx",
        &[
            "--offline",
            "toolshelf-mcp",
            "check",
            "--config",
            "/nonexistent.json",
        ],
    );
    let direct = std::process::Command::new(crate::harness::toolshelf_bin())
        .args(["check", "--config", "/nonexistent.json"])
        .output()
        .expect("toolshelf check");
    assert_eq!(bad.status.code(), direct.status.code());
    assert_eq!(bad.stderr, direct.stderr);
}

#[tokio::test]
async fn the_npm_launcher_passes_signals_on_and_dies_of_toolshelf_s_signal() {
    let out = packages();
    let project = npm_install(&[
        built(&out, "toolshelf-mcp-0", ".tgz"),
        built(&out, "toolshelf-mcp-linux-x64-", ".tgz"),
    ]);
    let launcher = project
        .path()
        .join("node_modules/toolshelf-mcp/bin/toolshelf.js");
    let (_dir, config) = fixture_config();
    let start = || {
        let mut node = tokio::process::Command::new("node");
        node.arg(&launcher)
            .args(["serve", "--config"])
            .arg(&config)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .kill_on_drop(true);
        node.spawn().expect("spawn the launcher")
    };
    let toolshelf_of = |launcher: u32| async move {
        crate::harness::eventually("toolshelf under the launcher", || async move {
            children_of(launcher).first().copied()
        })
        .await
    };

    // SIGTERM to the launcher reaches toolshelf, which stops.
    let mut node = start();
    let toolshelf = toolshelf_of(node.id().expect("pid")).await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(node.id().expect("pid") as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("signal the launcher");
    let status = tokio::time::timeout(DEADLINE, node.wait())
        .await
        .expect("ends")
        .expect("status");
    assert!(
        wait_all_gone(&[toolshelf]).await.is_empty(),
        "toolshelf outlived its launcher"
    );
    assert!(status.code().is_some() || status.signal().is_some());

    // toolshelf killed: the launcher dies of the same signal.
    let mut node = start();
    let toolshelf = toolshelf_of(node.id().expect("pid")).await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(toolshelf as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill toolshelf");
    let status = tokio::time::timeout(DEADLINE, node.wait())
        .await
        .expect("ends")
        .expect("status");
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

#[tokio::test]
async fn the_npm_launcher_without_its_platform_package_says_what_to_do() {
    let out = packages();
    let project = npm_install(&[built(&out, "toolshelf-mcp-0", ".tgz")]);
    let ran = run_offline(
        project.path(),
        "npx",
        &["--offline", "toolshelf-mcp", "--version"],
    );
    assert_eq!(ran.status.code(), Some(1));
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(
        said.contains(
            "toolshelf-mcp: the package toolshelf-mcp-linux-x64, which holds the binary for linux-x64, is not installed"
        ) && said.contains("docs/install.md"),
        "{said}"
    );
}

#[tokio::test]
async fn the_wheel_runs_a_session_through_uvx_offline() {
    let out = packages();
    let wheel = built(&out, "toolshelf_mcp-", ".whl");
    let uv_home = tempfile::tempdir().expect("uv folders");
    let (_dir, config) = fixture_config();
    let mut uvx = offline(Path::new(ROOT).join("target/package-tools/bin/uvx"));
    uvx.args(["--offline", "--no-index", "--find-links"])
        .arg(wheel.parent().expect("folder"))
        .arg("toolshelf-mcp")
        .env("UV_CACHE_DIR", uv_home.path().join("cache"))
        .env("UV_TOOL_DIR", uv_home.path().join("tools"))
        .env("UV_PYTHON_DOWNLOADS", "never");
    session_through(uvx, &config).await;
}

#[tokio::test]
async fn the_bundle_holds_the_binary_and_starts_as_its_manifest_says() {
    let out = packages();
    let bundle = built(&out, "toolshelf-", ".mcpb");
    let unpacked = tempfile::tempdir().expect("unpack folder");
    let (_dir, config) = fixture_config();
    let resolved = std::process::Command::new("python3")
        .arg(Path::new(ROOT).join("tests/packaging/bundle_command.py"))
        .arg(&bundle)
        .arg(unpacked.path())
        .arg(&config)
        .output()
        .expect("run bundle_command.py");
    assert!(
        resolved.status.success(),
        "{}",
        String::from_utf8_lossy(&resolved.stderr)
    );
    let command: Value = serde_json::from_slice(&resolved.stdout).expect("command as JSON");
    let program = command["command"].as_str().expect("command");
    assert!(program.starts_with(&unpacked.path().display().to_string()));
    let mut start = offline(program);
    // The manifest's own args end with `serve --config PATH`; `session_through` adds those.
    let args: Vec<&str> = command["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(args, ["serve", "--config", &config.display().to_string()]);
    start
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    session_through(start, &config).await;
}

/// The sizes docs/install.md quotes of a release's packages, each within 5 % of what
/// `scripts/package.sh OUT` built: run on those packages (`TOOLSHELF_PACKAGES=OUT cargo test
/// packaging`, the release check). A plain test run builds dev packages, which the table does
/// not describe, so there this test says it skipped.
#[test]
fn release_packages_are_the_sizes_the_docs_quote_when_given_a_release_build() {
    let Some(out) = std::env::var_os("TOOLSHELF_PACKAGES").map(PathBuf::from) else {
        eprintln!("skipped: TOOLSHELF_PACKAGES names no release build");
        return;
    };
    let install = crate::docs::document("docs/install.md");
    let rows: Vec<(String, u64)> = install
        .lines()
        .skip_while(|line| !line.starts_with("| file | bytes |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| {
            let name = line.split('`').nth(1)?.to_owned();
            let bytes = line
                .rsplit('|')
                .nth(1)?
                .trim()
                .replace(',', "")
                .parse()
                .ok()?;
            Some((name, bytes))
        })
        .collect();
    assert_eq!(rows.len(), 5, "the table of sizes: {rows:?}");
    for (name, quoted) in rows {
        let path = match name.starts_with("target/") {
            true => Path::new(ROOT).join(&name),
            false => out.join(&name),
        };
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|error| panic!("{path:?}: {error}"))
            .len();
        let drift = size.abs_diff(quoted) as f64 / quoted as f64;
        assert!(
            drift <= 0.05,
            "docs/install.md quotes {quoted} bytes for {name}; the build made {size}: rerun the release build and quote its sizes"
        );
    }
}
