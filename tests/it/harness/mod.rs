//! Test builders: a config on disk, a running `toolshelf serve` with an rmcp client on its
//! stdio, calls with a deadline, and a look at the processes toolshelf started.

pub mod http;
pub mod launch;
pub mod python;

pub use launch::free_port;

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientConfig, ResourceUpdatedNotificationParam, Tool,
    },
    service::{NotificationContext, RunningService},
};
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

/// A running toolshelf with a connected client.
pub struct Shelf {
    pub client: RunningService<RoleClient, Counting>,
    pub pid: u32,
    /// toolshelf's process, for tests that signal it and wait for its exit.
    pub process: tokio::process::Child,
    /// How many `notifications/tools/list_changed` and `notifications/resources/updated` came.
    pub changes: Arc<AtomicUsize>,
    pub updates: Arc<AtomicUsize>,
    _dir: Option<tempfile::TempDir>,
}

/// A client that counts `notifications/tools/list_changed` and `notifications/resources/updated`.
#[derive(Clone, Default)]
pub struct Counting(Arc<AtomicUsize>, Arc<AtomicUsize>);

impl ClientHandler for Counting {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_resource_updated(
        &self,
        _params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

/// Writes `config` to a fresh folder and returns (folder, config path).
pub fn write_config(config: &Value) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("toolboxes.json");
    std::fs::write(&path, serde_json::to_vec_pretty(config).expect("json")).expect("write config");
    (dir, path)
}

/// Starts `toolshelf serve` on `config` and initializes a client.
pub async fn start(config: &Value) -> Shelf {
    let (dir, path) = write_config(config);
    start_at(dir, &path, &[]).await
}

/// Starts toolshelf with one toolbox, `dev`, of `servers`.
pub async fn start_dev(servers: Value) -> Shelf {
    start(&config(&[("dev", "Development", servers)])).await
}

/// Starts toolshelf on `config` with its log (at `filter`, or toolshelf's default filter for
/// `None`) going to the returned file.
pub async fn start_logged(
    config: &Value,
    filter: Option<&str>,
) -> (Shelf, tempfile::NamedTempFile) {
    let (dir, path) = write_config(config);
    let log = tempfile::NamedTempFile::new().expect("log file");
    let file = log.reopen().expect("log file");
    let env: Vec<(&str, &str)> = filter.map(|f| ("RUST_LOG", f)).into_iter().collect();
    let shelf = spawn(dir, &path, &env, Stdio::from(file)).await;
    (shelf, log)
}

pub async fn start_at(dir: tempfile::TempDir, path: &Path, env: &[(&str, &str)]) -> Shelf {
    let log = std::env::var("TOOLSHELF_TEST_LOG").ok();
    let stderr = if log.is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    };
    let filter = log.unwrap_or_else(|| "warn".into());
    let mut env = env.to_vec();
    env.push(("RUST_LOG", &filter));
    spawn(dir, path, &env, stderr).await
}

async fn spawn(dir: tempfile::TempDir, path: &Path, env: &[(&str, &str)], stderr: Stdio) -> Shelf {
    spawn_with(dir, path, env, &[], stderr).await
}

/// `toolshelf serve --config PATH ARGS` with `env`, initialized.
pub async fn spawn_with(
    dir: tempfile::TempDir,
    path: &Path,
    env: &[(&str, &str)],
    args: &[&str],
    stderr: Stdio,
) -> Shelf {
    let mut command = crate::harness::toolshelf();
    command
        .arg("serve")
        .arg("--config")
        .arg(path)
        .args(args)
        .env_remove("RUST_LOG");
    for (key, value) in env {
        command.env(key, value);
    }
    let mut shelf = serve_command(command, stderr).await;
    shelf._dir = Some(dir);
    shelf
}

/// Runs `command` (a `toolshelf serve`) and initializes a client that counts list changes.
pub async fn serve_command(mut command: tokio::process::Command, stderr: Stdio) -> Shelf {
    // Quiet unless the caller chose a filter (or removed it).
    if !command
        .as_std()
        .get_envs()
        .any(|(key, _)| key == "RUST_LOG")
    {
        command.env("RUST_LOG", "warn");
    }
    let mut process = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolshelf");
    let pid = process.id().expect("toolshelf pid");
    let stdin = process.stdin.take().expect("stdin");
    let stdout = process.stdout.take().expect("stdout");
    let counting = Counting::default();
    let (changes, updates) = (counting.0.clone(), counting.1.clone());
    let client = tokio::time::timeout(DEADLINE, counting.serve((stdout, stdin)))
        .await
        .expect("initialize in time")
        .expect("initialize");
    Shelf {
        client,
        pid,
        process,
        changes,
        updates,
        _dir: None,
    }
}

impl Shelf {
    pub async fn tools(&self) -> Vec<Tool> {
        tokio::time::timeout(DEADLINE, self.client.list_all_tools())
            .await
            .expect("tools/list in time")
            .expect("tools/list")
    }

    pub async fn names(&self) -> Vec<String> {
        self.tools()
            .await
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    pub async fn try_call(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ErrorData> {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object");
        };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        match tokio::time::timeout(DEADLINE, self.client.call_tool(params))
            .await
            .expect("an answer in time")
        {
            Ok(result) => Ok(result),
            Err(rmcp::ServiceError::McpError(error)) => Err(error),
            Err(other) => panic!("not a JSON-RPC answer: {other}"),
        }
    }

    /// Calls one of toolshelf's tools; `arguments` must be a JSON object.
    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object");
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        tokio::time::timeout(DEADLINE, self.client.call_tool(params))
            .await
            .expect("answer in time")
            .expect("a tool result, not a protocol error")
    }

    pub async fn open(&self, toolbox: &str) -> CallToolResult {
        self.call("open_toolbox", json!({ "toolbox": toolbox }))
            .await
    }

    /// `use_tool` with the structured identifier.
    pub async fn use_tool(
        &self,
        toolbox: &str,
        server: &str,
        name: &str,
        arguments: Value,
    ) -> CallToolResult {
        self.call(
            "use_tool",
            json!({ "tool": { "toolbox": toolbox, "server": server, "name": name }, "arguments": arguments }),
        )
        .await
    }

    /// The pids of toolshelf's direct children.
    pub fn children(&self) -> Vec<u32> {
        children_of(self.pid)
    }

    /// Closes the client side (toolshelf's stdin) and waits for toolshelf to exit.
    pub async fn close(self) {
        let Shelf {
            mut client,
            mut process,
            ..
        } = self;
        tokio::time::timeout(DEADLINE, client.close())
            .await
            .expect("the client closes in time")
            .expect("close");
        tokio::time::timeout(DEADLINE, process.wait())
            .await
            .expect("toolshelf exits in time")
            .expect("exit status");
    }
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

/// Direct children of `pid`, from /proc.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if parent_of(child) == Some(pid) && !is_guard(child) {
            found.push(child);
        }
    }
    found
}

/// The process guard toolshelf starts beside its children is not one of them.
fn is_guard(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        cmdline.split(|byte| *byte == 0).nth(1) == Some(toolshelf::GUARD_COMMAND.as_bytes())
    })
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(1)?.parse().ok()
}

/// True while `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|at| stat.get(at + 2..at + 3))
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

/// Waits (bounded) until none of `pids` is alive.
pub async fn wait_all_gone(pids: &[u32]) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|pid| is_alive(*pid)).collect();
        if alive.is_empty() || tokio::time::Instant::now() > deadline {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The folder where the pinned npm servers are installed, installing them on first use.
pub fn interop_dir() -> PathBuf {
    static INSTALLED: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    install_once(&INSTALLED, "install-interop.sh", "target/interop", &[])
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

/// The path of `toolboxes.example.json`, the README's config.
pub const EXAMPLE_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/toolboxes.example.json");

/// `toolboxes.example.json` as JSON.
pub fn example_config() -> Value {
    let text = std::fs::read_to_string(EXAMPLE_CONFIG).expect("read the example config");
    serde_json::from_str(&text).expect("the example config is JSON")
}

/// A server entry that runs an installed npm server binary with `args`.
pub fn npm_server(bin: &str, args: &[&str]) -> Value {
    let path = interop_dir().join("node_modules/.bin").join(bin);
    json!({ "command": path, "args": args })
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

/// A hand-driven JSON-RPC client on toolshelf's stdio (or a server's), for what an SDK client
/// hides: the exact order and bytes of messages on the wire, and input that is not JSON at all.
pub struct RawClient {
    _process: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _dir: Option<tempfile::TempDir>,
}

impl RawClient {
    /// Starts `toolshelf serve` on `config` and completes initialization (protocol 2025-06-18).
    pub async fn start(config: &Value) -> Self {
        Self::start_on(config, "2025-06-18").await
    }

    /// Starts `toolshelf serve` on `config` and initializes on protocol `version`.
    pub async fn start_on(config: &Value, version: &str) -> Self {
        let (dir, path) = write_config(config);
        let mut command = crate::harness::toolshelf();
        command
            .args(["serve", "--config"])
            .arg(&path)
            .env("RUST_LOG", "warn");
        Self::spawn(command, Some(dir), version).await
    }

    /// Starts `command` as an MCP server on stdio and initializes on protocol `version`.
    pub async fn spawn(
        command: tokio::process::Command,
        dir: Option<tempfile::TempDir>,
        version: &str,
    ) -> Self {
        Self::spawn_logged(command, dir, version, Stdio::null()).await
    }

    /// As `spawn`, with the server's stderr going to `log`.
    pub async fn spawn_logged(
        command: tokio::process::Command,
        dir: Option<tempfile::TempDir>,
        version: &str,
        log: Stdio,
    ) -> Self {
        Self::spawn_declaring(command, dir, version, log, json!({})).await
    }

    /// As `spawn_logged`, the client declaring `capabilities`.
    pub async fn spawn_declaring(
        mut command: tokio::process::Command,
        dir: Option<tempfile::TempDir>,
        version: &str,
        log: Stdio,
        capabilities: Value,
    ) -> Self {
        use tokio::io::AsyncBufReadExt;
        let mut process = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the server");
        let stdin = process.stdin.take().expect("stdin");
        let stdout = process.stdout.take().expect("stdout");
        let mut client = Self {
            _process: process,
            stdin: Some(stdin),
            lines: tokio::io::BufReader::new(stdout).lines(),
            _dir: dir,
        };
        let init = json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}});
        client.request(0, "initialize", init).await;
        client
            .send_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
            )
            .await;
        client
    }

    pub async fn send_line(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self._process.id().expect("the server is running")
    }

    /// Closes the server's stdin: the end of the client's input.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line the server writes, as written.
    pub async fn next_line(&mut self) -> String {
        tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await
            .expect("a message in time")
            .expect("read")
            .expect("the server closed stdout")
    }

    /// The next message the server writes.
    pub async fn next(&mut self) -> Value {
        serde_json::from_str(&self.next_line().await).expect("the server wrote JSON")
    }

    /// Sends a request and returns (everything the server wrote before the answer, the answer's
    /// line as written).
    pub async fn request_raw(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
    ) -> (Vec<Value>, String) {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&request.to_string()).await;
        let mut before = Vec::new();
        loop {
            let line = self.next_line().await;
            let message: Value = serde_json::from_str(&line).expect("the server wrote JSON");
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return (before, line);
            }
            before.push(message);
        }
    }

    /// Opens `toolbox` with request `id` and returns the answer.
    pub async fn open(&mut self, id: u64, toolbox: &str) -> Value {
        let params = json!({"name": "open_toolbox", "arguments": {"toolbox": toolbox}});
        self.request(id, "tools/call", params).await.1
    }

    /// Sends a request and returns (everything the server wrote before the answer, the answer).
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> (Vec<Value>, Value) {
        let (before, line) = self.request_raw(id, method, params).await;
        (
            before,
            serde_json::from_str(&line).expect("the server wrote JSON"),
        )
    }
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
