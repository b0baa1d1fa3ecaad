//! `Shelf`: a running `toolshelf serve` with an rmcp client on its stdio that counts list
//! changes and resource updates, and the ways to start one.

use std::{
    path::Path,
    process::Stdio,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientConfig, ResourceUpdatedNotificationParam, Tool,
    },
    service::{NotificationContext, RunningService},
};
use serde_json::{Value, json};

use super::{DEADLINE, children_of, config, write_config};

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

/// A client that counts `notifications/tools/list_changed` and `notifications/resources/updated`,
/// declaring the capabilities of its kind.
#[derive(Clone, Default)]
pub struct Counting(Arc<AtomicUsize>, Arc<AtomicUsize>, ClientKind);

/// The capabilities a client declares, as real clients do.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// None at all (rmcp's default, and scripts).
    #[default]
    Bare,
    /// `roots`, as Claude Code, Claude Desktop, VS Code and Cursor declare.
    Roots,
    /// `roots`, `sampling` and `elicitation`, as VS Code declares.
    Capable,
}

impl ClientKind {
    pub fn capabilities(self) -> rmcp::model::ClientCapabilities {
        let mut declared = rmcp::model::ClientCapabilities::default();
        if self != ClientKind::Bare {
            let mut roots = rmcp::model::RootsCapabilities::default();
            roots.list_changed = Some(true);
            declared.roots = Some(roots);
        }
        if self == ClientKind::Capable {
            declared.sampling = Some(Default::default());
            declared.elicitation = Some(Default::default());
        }
        declared
    }
}

impl ClientHandler for Counting {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities = self.2.capabilities();
        info
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
pub async fn serve_command(command: tokio::process::Command, stderr: Stdio) -> Shelf {
    serve_command_as(command, stderr, ClientKind::Bare).await
}

/// As `serve_command`, the client declaring what clients of `kind` declare.
pub async fn serve_command_as(
    mut command: tokio::process::Command,
    stderr: Stdio,
    kind: ClientKind,
) -> Shelf {
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
    let counting = Counting(Arc::default(), Arc::default(), kind);
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
