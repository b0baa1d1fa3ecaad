//! The measurements of the overhead benchmark. Shared with the integration tests, which run it
//! in quick mode as a smoke check (they assert shapes, never timings).
//!
//! Every comparison runs the same rmcp client against the fixture child twice: directly, and
//! through `toolshelf serve`. Direct and proxied runs alternate (ABAB…) so machine drift hits both.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use anyhow::{Context as _, bail};
use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::RunningService,
    transport::TokioChildProcess,
};
use serde_json::{Value, json};

mod code;
pub mod code_tasks;
mod context;
mod floor;
mod gateway;
mod http;
mod opening;
mod report;
mod search;
mod stats;
mod stdio;
mod targets;

pub use report::table;
use stats::*;
use targets::targets;

use super::{
    http_child::{DirectHttp, HttpServer},
    http_serve::{self, ServedHttp},
    issuer::Issuer,
};

/// What to run and how much of it.
pub struct Options {
    /// A smoke run: every figure, few samples, well under 30 s.
    pub quick: bool,
    pub toolshelf: PathBuf,
    pub fixture: PathBuf,
    /// `toolshelf-floor`: the smallest relays, the floors toolshelf is compared with.
    pub floor: PathBuf,
    /// `node_modules/.bin` of the interop servers, when installed: the context figures are then
    /// also measured on real servers, whose tool lists look like what agents meet.
    pub npm_bin: Option<PathBuf>,
    /// The tests' Python venv's interpreter, when installed (fastmcp and pydantic-monty): code
    /// mode's tasks are then measured beside FastMCP's CodeMode.
    pub python: Option<PathBuf>,
    /// Only these sections (`--only`), for working on one path; every section when empty.
    pub only: Vec<String>,
}

impl Options {
    fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|only| only == section)
    }
}

/// The sections `--only` can name, in the order they run.
pub const SECTIONS: &[&str] = &[
    "stdio",
    "open",
    "spawn",
    "context",
    "search",
    "code",
    "http_child",
    "http_serve",
    "gateway",
];

type Client = RunningService<RoleClient, ()>;

/// The targets docs/performance.md states next to the figures.
pub const TARGET_ADDED_P50_US: f64 = 50.0;
pub const TARGET_P99_RATIO: f64 = 1.3;
pub const TARGET_OVER_FLOOR_P50_US: f64 = 10.0;
pub const TARGET_P99_RATIO_OVER_FLOOR: f64 = 0.1;
pub const TARGET_1MB_ADDED_P50_US: f64 = 500.0;
pub const TARGET_THROUGHPUT_32: f64 = 0.8;
pub const TARGET_THROUGHPUT_32_OVER_FLOOR: f64 = 0.9;
pub const TARGET_IDLE_RSS_KB: u64 = 8 * 1024;
pub const TARGET_RSS_GROWTH_KB: u64 = 2 * 1024;
pub const TARGET_OPEN_16_RATIO: f64 = 1.2;
pub const TARGET_WARM_OPEN_MS: f64 = 5.0;
pub const TARGET_TOOLS_LIST_BYTES: usize = 2400;
pub const TARGET_HTTP_ADDED_P50_US: f64 = 100.0;
pub const TARGET_HTTP_THROUGHPUT_64: f64 = 0.8;
pub const TARGET_HTTP_THROUGHPUT_OVER_FLOOR_64: f64 = 0.9;
pub const TARGET_HTTP_OVER_FLOOR_P50_US: f64 = 25.0;
pub const TARGET_HTTP_CPU_OVER_FLOOR: f64 = 1.5;
pub const TARGET_HTTP_SESSION_KB: f64 = 50.0;
pub const TARGET_SEARCH_P50_US: f64 = 1000.0;
pub const TARGET_SEARCH_LOAD_MS: f64 = 50.0;
pub const TARGET_CODE_ONE_CALL_ADDED_P50_US: f64 = 1000.0;
pub const TARGET_GATEWAY_ADDED_P50_US: f64 = 10.0;
pub const TARGET_SPAWN_OVER_FIXTURE: f64 = 2.0;

/// Runs every measurement and returns all figures as JSON.
pub async fn run(options: &Options) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let bench = Bench {
        options,
        dir: dir.path(),
    };
    let mut report = json!({
        "machine": machine(),
        "quick": options.quick,
    });
    if options.runs("stdio") {
        let (direct, proxied, pid) = bench.pair().await?;
        report["latency"] = bench.latency(&direct, &proxied).await?;
        report["floor"] = bench.stdio_floor(&direct).await?;
        report["payload"] = bench.payload(&direct, &proxied).await?;
        report["throughput"] = bench.throughput(&direct, &proxied).await?;
        report["memory"] = bench.memory(&proxied, pid).await?;
        drop(direct);
        close(proxied).await;
    }
    if options.runs("open") {
        report["open"] = bench.cold_open().await?;
    }
    if options.runs("spawn") {
        report["spawn"] = bench.spawn().await?;
    }
    if options.runs("context") {
        report["context"] = bench.context().await?;
    }
    if options.runs("search") {
        report["search"] = bench.search().await?;
    }
    if options.runs("code") {
        report["code"] = bench.code().await?;
        report["code"]["tasks"] = json!(bench.code_tasks()?);
    }
    if let Some(bin) = &options.npm_bin {
        if options.runs("http_child") {
            report["http_child"] = bench.http_child(bin).await?;
        }
        if options.runs("http_serve") {
            report["http_serve"] = bench.http_serve(bin).await?;
        }
    } else if options.runs("http_child") || options.runs("http_serve") {
        // Said, not left to a table of nulls: the sections need server-everything beside the
        // fixture.
        let _ = writeln!(
            std::io::stderr(),
            "http_child and http_serve not measured: they need the interop servers in \
             target/interop (bash scripts/install-interop.sh, which cargo test runs)"
        );
    }
    if options.runs("gateway") {
        report["gateway"] = bench.gateway().await?;
    }
    report["targets"] = targets(&report);
    Ok(report)
}

struct Bench<'a> {
    options: &'a Options,
    dir: &'a Path,
}

impl Bench<'_> {
    fn rounds(&self, quick: usize, full: usize) -> usize {
        if self.options.quick { quick } else { full }
    }

    fn fixture_server(&self, args: &[&str]) -> Value {
        json!({ "command": self.options.fixture, "args": args, "idleTimeout": 0 })
    }

    /// Writes a config with `toolboxes` and returns its path.
    fn config(&self, name: &str, toolboxes: Value) -> anyhow::Result<PathBuf> {
        let path = self.dir.join(format!("{name}.json"));
        std::fs::write(
            &path,
            serde_json::to_vec(&json!({ "toolboxes": toolboxes }))?,
        )?;
        Ok(path)
    }

    async fn direct(&self, args: &[&str]) -> anyhow::Result<Client> {
        Ok(self.direct_with_pid(args).await?.0)
    }

    /// As `direct`, with the fixture's pid.
    async fn direct_with_pid(&self, args: &[&str]) -> anyhow::Result<(Client, u32)> {
        let mut command = tokio::process::Command::new(&self.options.fixture);
        command.args(args);
        connect(command).await
    }

    /// `toolshelf serve` on `config`, connected, without the persisted catalog; returns the
    /// client and toolshelf's pid.
    async fn toolshelf(&self, config: &Path) -> anyhow::Result<(Client, u32)> {
        self.toolshelf_with(config, None).await
    }

    /// As `toolshelf`, with the persisted catalog in `cache` (the user's cache folder) if given.
    async fn toolshelf_with(
        &self,
        config: &Path,
        cache: Option<&Path>,
    ) -> anyhow::Result<(Client, u32)> {
        let mut command = tokio::process::Command::new(&self.options.toolshelf);
        command
            .arg("serve")
            .arg("--config")
            .arg(config)
            .env("RUST_LOG", "error");
        match cache {
            Some(cache) => command.env("XDG_CACHE_HOME", cache),
            None => command.arg("--no-cache"),
        };
        connect(command).await
    }

    /// A direct client of the fixture and a client of toolshelf with the fixture opened.
    async fn pair(&self) -> anyhow::Result<(Client, Client, u32)> {
        let direct = self.direct(&[]).await?;
        let config = self.config(
            "pair",
            json!({"bench": {"mcpServers": {"fx": self.fixture_server(&[])}}}),
        )?;
        let (proxied, pid) = self.toolshelf(&config).await?;
        let opened = call(&proxied, "open_toolbox", json!({"toolbox": "bench"})).await?;
        if opened.is_error == Some(true) {
            bail!("open_toolbox failed: {opened:?}");
        }
        Ok((direct, proxied, pid))
    }

    /// Sequential round trips of `tool`, alternating direct and proxied blocks.
    async fn alternate(
        &self,
        direct: &Client,
        proxied: &Client,
        tool: &str,
        arguments: Value,
        rounds: usize,
        per_round: usize,
    ) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        // Warm-up: connections, caches, allocator.
        for _ in 0..per_round.min(100) {
            call(direct, tool, arguments.clone()).await?;
            use_tool(proxied, tool, arguments.clone()).await?;
        }
        for _ in 0..rounds {
            for _ in 0..per_round {
                let began = Instant::now();
                call(direct, tool, arguments.clone()).await?;
                a.push(began.elapsed());
            }
            for _ in 0..per_round {
                let began = Instant::now();
                use_tool(proxied, tool, arguments.clone()).await?;
                b.push(began.elapsed());
            }
        }
        Ok((a, b))
    }
}

/// `command` started and connected as an MCP client; with the process's pid.
async fn connect(command: tokio::process::Command) -> anyhow::Result<(Client, u32)> {
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()?;
    let pid = transport.id().context("the started process has no pid")?;
    Ok((().serve(transport).await?, pid))
}

async fn close(mut client: Client) {
    let _ = tokio::time::timeout(Duration::from_secs(15), client.close()).await;
}

async fn call(client: &Client, tool: &str, arguments: Value) -> anyhow::Result<CallToolResult> {
    let Value::Object(arguments) = arguments else {
        bail!("arguments must be an object");
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    Ok(client.call_tool(params).await?)
}

async fn use_tool(client: &Client, tool: &str, arguments: Value) -> anyhow::Result<CallToolResult> {
    let result = call(
        client,
        "use_tool",
        json!({"tool": {"toolbox": "bench", "server": "fx", "name": tool}, "arguments": arguments}),
    )
    .await?;
    if result.is_error == Some(true) {
        bail!("use_tool failed: {result:?}");
    }
    Ok(result)
}

/// VmRSS of `pid`, in KiB.
fn rss_kb(pid: u32) -> anyhow::Result<u64> {
    status_kb(pid, "VmRSS:")
}

/// The memory of `pid` no other process shares (RssAnon: heap, stacks), in KiB. The rest of
/// VmRSS is mostly the binary's own code, mapped from the page cache and shared by every
/// toolshelf; how much of it start-up maps varies from build to build with the code's layout.
fn private_kb(pid: u32) -> anyhow::Result<u64> {
    status_kb(pid, "RssAnon:")
}

fn status_kb(pid: u32, field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in /proc/PID/status"))
}

fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    json!({ "cpu": cpu, "cores": cores })
}
