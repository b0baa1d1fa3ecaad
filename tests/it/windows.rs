//! toolshelf's Windows build, run under Wine 8 and driven by a real MCP client (rmcp, declaring
//! roots as desktop clients do) on Linux over stdio: the fixture's Windows build started by a
//! bare name (`PATHEXT` finds `toolshelf-fixture.exe`) and through a `.cmd` shim (as `npx` is
//! `npx.cmd`), a call, a child that crashes and is started again, a config error naming a
//! Windows path, toolshelf killed with its children gone (their Job Objects), and `install
//! --client claude-desktop` into Wine's %APPDATA% with a session through its entry, ended by
//! Ctrl-C. The builds
//! come from `scripts/cross-build.sh`, Wine from `scripts/fetch-wine.sh`, both into target/.

use std::{path::Path, process::Stdio};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::harness::{ClientKind, eventually, is_alive, serve_command_as, text};

/// Runs `script` from scripts/ with `args` and gives the last line it printed.
fn script(name: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name);
    let output = std::process::Command::new("bash")
        .arg(&path)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "scripts/{name} failed: see its message above"
    );
    let printed = String::from_utf8_lossy(&output.stdout);
    printed.lines().last().expect("a path").to_owned()
}

/// `path` as Windows programs under Wine see it (drive Z: is the Linux root).
fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// A folder with toolshelf.exe, the fixture, the `.cmd` shim and Wine's missing DLL, and the
/// Wine wrapper.
fn windows_folder() -> (tempfile::TempDir, String) {
    let built = script(
        "cross-build.sh",
        &["x86_64-pc-windows-gnu", "toolshelf", "toolshelf-fixture"],
    );
    let wine = script("fetch-wine.sh", &[]);
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["toolshelf.exe", "toolshelf-fixture.exe"] {
        std::fs::copy(Path::new(&built).join(file), dir.path().join(file)).expect("copy");
    }
    let stub = Path::new(&wine).with_file_name("bcryptprimitives.dll");
    std::fs::copy(stub, dir.path().join("bcryptprimitives.dll")).expect("copy the stub");
    std::fs::write(
        dir.path().join("fixture-shim.cmd"),
        "@\"%~dp0toolshelf-fixture.exe\" %*\r\n",
    )
    .expect("shim");
    (dir, wine)
}

/// `wine toolshelf.exe ARGS…` in `folder`.
fn toolshelf(wine: &str, folder: &Path, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(wine);
    command.arg(folder.join("toolshelf.exe")).args(args);
    command
}

/// `toolshelf install ARGS…` under Wine, from the toolshelf.exe in `folder`; it must succeed.
async fn install(wine: &str, folder: &Path, args: &[&str]) {
    let installed = toolshelf(wine, folder, &[&["install"], args].concat())
        .output()
        .await
        .expect("wine runs");
    assert!(installed.status.success(), "{installed:?}");
}

/// The Linux pids of the Windows processes running `exe` (Wine runs each as a process of its
/// own whose command line names it).
fn running(exe: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let line = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&line)
            .replace('\0', " ")
            .contains(exe)
        {
            pids.push(pid);
        }
    }
    pids
}

/// Processes killed when the test ends, however: a child the test failed to see end must not
/// outlive it (it would hold the test's pipes open).
struct Leftovers(Vec<u32>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

/// Stops Wine's own processes of the prefix (its server and services) when the test ends.
struct WineServer(std::path::PathBuf);

impl Drop for WineServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new(self.0.join("root/usr/lib/wine/wineserver64"))
            .arg("-k")
            .env("WINEPREFIX", self.0.join("prefix"))
            .status();
    }
}

#[tokio::test]
async fn toolshelf_for_windows_serves_a_session_under_wine() {
    let (dir, wine) = windows_folder();
    let _server = WineServer(
        Path::new(&wine)
            .parent()
            .expect("the wine folder")
            .to_owned(),
    );
    let folder = windows_path(dir.path());
    let config = json!({"toolboxes": {
        "dev": {"description": "The fixture under Wine", "mcpServers": {
            "plain": {"command": "toolshelf-fixture", "env": {"PATH": folder}},
            "shim": {"command": "fixture-shim", "env": {"PATH": format!("{folder};C:\\windows\\system32")}}
        }},
        // A child that never reads its stdin: only its Job Object ends it with toolshelf.
        "stuck": {"description": "A fixture that hangs", "mcpServers": {
            "hang": {"command": "toolshelf-fixture", "args": ["--starts-file", format!("{folder}\\starts"), "--hang"], "env": {"PATH": folder}}
        }}
    }});
    std::fs::write(dir.path().join("config.json"), config.to_string()).expect("config");
    let config_path = format!("{folder}\\config.json");

    // A config error names the Windows path it could not read.
    let missing = format!("{folder}\\missing.json");
    let refused = toolshelf(&wine, dir.path(), &["check", "--config", &missing])
        .output()
        .await
        .expect("wine runs");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains(&missing), "{said}");

    let command = toolshelf(&wine, dir.path(), &["serve", "--config", &config_path]);
    let shelf = serve_command_as(command, Stdio::null(), ClientKind::Roots).await;
    let names: Vec<String> = shelf
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.into())
        .collect();
    assert_eq!(names, ["open_toolbox", "use_tool"]);
    let opened: Value = serde_json::from_str(&text(&shelf.open("dev").await)).expect("JSON");
    for (at, server) in ["plain", "shim"].iter().enumerate() {
        assert_eq!(opened["servers"][at]["name"], json!(server), "{opened}");
        assert_eq!(opened["servers"][at]["status"], json!("ready"), "{opened}");
    }
    for server in ["plain", "shim"] {
        let echoed = shelf
            .use_tool("dev", server, "echo", json!({"message": "hi"}))
            .await;
        assert_eq!(text(&echoed), r#"{"message":"hi"}"#, "{server}");
    }

    // A child that crashes is started again by the next call.
    let crashed = shelf.use_tool("dev", "plain", "crash", json!({})).await;
    assert_eq!(crashed.is_error, Some(true));
    let again = shelf
        .use_tool("dev", "plain", "echo", json!({"message": "back"}))
        .await;
    assert_eq!(text(&again), r#"{"message":"back"}"#);

    // toolshelf killed outright while it starts a child that reads nothing: the child's Job
    // Object ends it with toolshelf (the others would end anyway, their stdin closed).
    let peer = shelf.client.peer().clone();
    tokio::spawn(async move {
        let open = CallToolRequestParams::new("open_toolbox").with_arguments(
            json!({"toolbox": "stuck"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let _ = peer.call_tool(open).await;
    });
    // Running, not only created: it has written its line (Wine ends a process that is still
    // starting when its parent dies, job or not).
    let starts = dir.path().join("starts");
    eventually("the hanging child runs", || {
        let started = std::fs::read_to_string(&starts).is_ok_and(|text| text.contains("started"));
        async move { started.then_some(()) }
    })
    .await;
    let stuck = Leftovers(running("--starts-file"));
    assert!(!stuck.0.is_empty(), "the hanging child runs under Wine");
    let _ = std::process::Command::new("kill")
        .args(["-9", &shelf.pid.to_string()])
        .status();
    eventually("the children end with toolshelf", || {
        let alive: Vec<u32> = stuck
            .0
            .iter()
            .copied()
            .filter(|pid| is_alive(*pid))
            .collect();
        async move { alive.is_empty().then_some(()) }
    })
    .await;
    drop(shelf);

    // Into Claude Desktop on Windows: `install --client` writes its entry into Wine's
    // %APPDATA%, and a session runs through that entry as the client would start it.
    let prefix = Path::new(&wine).with_file_name("prefix");
    install(
        &wine,
        dir.path(),
        &["--client", "claude-desktop", "--config", &config_path],
    )
    .await;
    let users = std::fs::read_dir(prefix.join("drive_c/users")).expect("Wine's users");
    let written: Vec<std::path::PathBuf> = users
        .flatten()
        .map(|user| {
            user.path()
                .join("AppData/Roaming/Claude/claude_desktop_config.json")
        })
        .filter(|file| file.is_file())
        .collect();
    assert_eq!(written.len(), 1, "one Claude Desktop config in {prefix:?}");
    let client: Value =
        serde_json::from_slice(&std::fs::read(&written[0]).expect("reads")).expect("JSON");
    let entry = &client["mcpServers"]["toolshelf"];
    let program = entry["command"].as_str().expect("command");
    assert_eq!(program, format!("{folder}\\toolshelf.exe"), "{entry}");
    assert_eq!(
        entry["args"],
        json!(["serve", "--config", config_path]),
        "{entry}"
    );
    let mut command = tokio::process::Command::new(&wine);
    command
        .arg(program)
        .args(["serve", "--config", &config_path]);
    let shelf = serve_command_as(command, Stdio::null(), ClientKind::Roots).await;
    shelf.open("dev").await;
    let echoed = shelf
        .use_tool(
            "dev",
            "shim",
            "echo",
            json!({"message": "from the client's entry"}),
        )
        .await;
    assert_eq!(text(&echoed), r#"{"message":"from the client's entry"}"#);

    // Ctrl-C (Wine turns SIGINT into a console program's CTRL_C_EVENT) stops toolshelf, its
    // stdin still open, and its children with it.
    let children = Leftovers(running("toolshelf-fixture"));
    assert!(!children.0.is_empty(), "the toolbox's children run");
    let mut shelf = shelf;
    let _ = std::process::Command::new("kill")
        .args(["-INT", &shelf.pid.to_string()])
        .status();
    let ended = tokio::time::timeout(crate::harness::DEADLINE, shelf.process.wait()).await;
    assert!(ended.is_ok(), "toolshelf for Windows did not end on Ctrl-C");
    assert_eq!(
        crate::harness::wait_all_gone(&children.0).await,
        Vec::<u32>::new(),
        "children outlived toolshelf's Ctrl-C"
    );
    drop(shelf);

    // Run from npx's cache, the entry is npx's, through `cmd /c`: clients start no `.cmd`.
    let cached = dir
        .path()
        .join("_npx/1a2b/node_modules/toolshelf-mcp-win32-x64/bin");
    std::fs::create_dir_all(&cached).expect("npx's cache");
    for file in ["toolshelf.exe", "bcryptprimitives.dll"] {
        std::fs::copy(dir.path().join(file), cached.join(file)).expect("copy");
    }
    let file = format!("{folder}\\cursor.json");
    install(
        &wine,
        &cached,
        &[
            "--client",
            "cursor",
            "--file",
            &file,
            "--config",
            &config_path,
        ],
    )
    .await;
    let client: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("cursor.json")).expect("reads"))
            .expect("JSON");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        client["mcpServers"]["toolshelf"],
        json!({"command": "cmd", "args": ["/c", "npx", "-y", format!("toolshelf-mcp@{version}"), "serve", "--config", config_path]})
    );
}
