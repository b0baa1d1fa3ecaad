//! The measurements of the overhead benchmark. Shared with the integration tests, which run it
//! in quick mode as a smoke check (they assert shapes, never timings).
//!
//! Every comparison runs the same rmcp client against the fixture child twice: directly, and
//! through `toolshelf serve`. Direct and proxied runs alternate (ABAB…) so machine drift hits both.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use anyhow::{Context as _, bail};
use futures::{StreamExt, stream};
use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::RunningService,
    transport::TokioChildProcess,
};
use serde_json::{Value, json};

use super::{
    http_child::{DirectHttp, HttpServer},
    http_serve::{self, ServedHttp},
};

/// What to run and how much of it.
pub struct Options {
    /// A smoke run: every figure, few samples, well under 30 s.
    pub quick: bool,
    pub toolshelf: PathBuf,
    pub fixture: PathBuf,
    /// `node_modules/.bin` of the interop servers, when installed: the context figures are then
    /// also measured on real servers, whose tool lists look like what agents meet.
    pub npm_bin: Option<PathBuf>,
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
    "http_child",
    "http_serve",
];

type Client = RunningService<RoleClient, ()>;

/// The targets docs/performance.md states next to the figures.
pub const TARGET_ADDED_P50_US: f64 = 50.0;
pub const TARGET_P99_RATIO: f64 = 1.3;
pub const TARGET_THROUGHPUT_32: f64 = 0.8;
pub const TARGET_IDLE_RSS_KB: u64 = 8 * 1024;
pub const TARGET_RSS_GROWTH_KB: u64 = 2 * 1024;
pub const TARGET_OPEN_16_RATIO: f64 = 1.2;
pub const TARGET_WARM_OPEN_MS: f64 = 5.0;
pub const TARGET_TOOLS_LIST_BYTES: usize = 2400;
pub const TARGET_HTTP_ADDED_P50_US: f64 = 100.0;
pub const TARGET_HTTP_THROUGHPUT_64: f64 = 0.8;
pub const TARGET_HTTP_SESSION_KB: f64 = 50.0;

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
    if let Some(bin) = &options.npm_bin {
        if options.runs("http_child") {
            report["http_child"] = bench.http_child(bin).await?;
        }
        if options.runs("http_serve") {
            report["http_serve"] = bench.http_serve(bin).await?;
        }
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
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()?;
        let pid = transport.id().context("toolshelf has no pid")?;
        let client = ().serve(transport).await?;
        Ok((client, pid))
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

    /// 1. Sequential round trip of a no-op tool.
    async fn latency(&self, direct: &Client, proxied: &Client) -> anyhow::Result<Value> {
        let (rounds, per_round) = (self.rounds(4, 40), self.rounds(50, 500));
        let (a, b) = self
            .alternate(direct, proxied, "echo", json!({}), rounds, per_round)
            .await?;
        Ok(compare(&a, &b))
    }

    /// 2. The same with large text results.
    async fn payload(&self, direct: &Client, proxied: &Client) -> anyhow::Result<Value> {
        let mut figures = serde_json::Map::new();
        for (label, bytes, per_round) in [("100KB", 100_000, 50), ("1MB", 1_000_000, 10)] {
            let rounds = self.rounds(2, 10);
            let per_round = if self.options.quick { 3 } else { per_round };
            let arguments = json!({"bytes": bytes});
            let (a, b) = self
                .alternate(direct, proxied, "big", arguments, rounds, per_round)
                .await?;
            figures.insert(label.into(), compare(&a, &b));
        }
        Ok(Value::Object(figures))
    }

    /// 3. Calls per second with N calls in flight on one connection.
    async fn throughput(&self, direct: &Client, proxied: &Client) -> anyhow::Result<Value> {
        let total = self.rounds(200, 4000);
        let rounds = self.rounds(1, 3);
        let mut figures = serde_json::Map::new();
        for in_flight in [1usize, 8, 32, 128] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                a.push(rate(total, in_flight, || call(direct, "echo", json!({}))).await?);
                b.push(rate(total, in_flight, || use_tool(proxied, "echo", json!({}))).await?);
            }
            figures.insert(in_flight.to_string(), rates(&mut a, &mut b));
        }
        Ok(Value::Object(figures))
    }

    /// 6. A streamable-HTTP child (server-everything's `echo` on loopback): added latency over
    ///    the same call made directly with an HTTP client.
    async fn http_child(&self, bin: &Path) -> anyhow::Result<Value> {
        let server = HttpServer::start(bin).await?;
        let direct = DirectHttp::connect(&server.url, None).await?;
        let remote = json!({ "url": server.url, "idleTimeout": 0 });
        let config = self.config("http", json!({"bench": {"mcpServers": {"fx": remote}}}))?;
        let (proxied, _) = self.toolshelf(&config).await?;
        let opened = call(&proxied, "open_toolbox", json!({"toolbox": "bench"})).await?;
        if opened.is_error == Some(true) {
            bail!("open_toolbox failed: {opened:?}");
        }
        let (rounds, per_round) = (self.rounds(2, 20), self.rounds(20, 200));
        let arguments = json!({"message": "x"});
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..per_round.min(100) {
            direct.call("echo", arguments.clone()).await?;
            use_tool(&proxied, "echo", arguments.clone()).await?;
        }
        for _ in 0..rounds {
            timed(&mut a, per_round, || direct.call("echo", arguments.clone())).await?;
            timed(&mut b, per_round, || {
                use_tool(&proxied, "echo", arguments.clone())
            })
            .await?;
        }
        close(proxied).await;
        Ok(compare(&a, &b))
    }

    /// 7. `toolshelf serve --http`, its children on stdio: the fixture and server-everything,
    ///    each against the same server serving streamable HTTP by itself, called by the same HTTP
    ///    client; beside them server-everything over stdio, directly and through `toolshelf
    ///    serve`. Sessions opened and memory per idle session are measured with the fixture,
    ///    whose HTTP server is rmcp's as toolshelf's is; sessions at once with both.
    async fn http_serve(&self, bin: &Path) -> anyhow::Result<Value> {
        let everything = bin.join("mcp-server-everything");
        let fixture_http = HttpServer::fixture(&self.options.fixture).await?;
        let everything_http = HttpServer::start(bin).await?;
        let config = self.dir.join("http_serve.json");
        std::fs::write(
            &config,
            serde_json::to_vec(&json!({
                "http": {"maxSessions": 4096},
                "toolboxes": {"bench": {"mcpServers": {
                    "fx": self.fixture_server(&[]),
                    "ev": {"command": everything, "idleTimeout": 0},
                }}},
            }))?,
        )?;
        let served = ServedHttp::start(&self.options.toolshelf, &config).await?;
        let token = Some(http_serve::TOKEN);
        let echo = json!({"message": "x"});
        let use_echo = |server: &str| json!({"tool": {"toolbox": "bench", "server": server, "name": "echo"}, "arguments": echo});
        let (use_fx, use_ev) = (use_echo("fx"), use_echo("ev"));
        let open = json!({"toolbox": "bench"});

        // Sessions opened per second, then what each costs toolshelf while it sits idle with its
        // toolbox open (the children are running before the first is counted).
        let first = DirectHttp::connect(&served.url, token).await?;
        first.call("open_toolbox", open.clone()).await?;
        let count = self.rounds(10, 200);
        let (direct_sessions, direct_took) =
            http_serve::open_sessions(&fixture_http.url, None, count, true).await?;
        http_serve::close_all(direct_sessions).await;
        let before_kb = rss_kb(served.pid)?;
        let (sessions, took) = http_serve::open_sessions(&served.url, token, count, true).await?;
        for session in &sessions {
            session.call("open_toolbox", open.clone()).await?;
        }
        let after_kb = rss_kb(served.pid)?;
        http_serve::close_all(sessions).await;
        let per_second = |took: Duration| round(count as f64 / took.as_secs_f64());
        let sessions_figures = json!({
            "sessions": count,
            "direct_sessions_per_s": per_second(direct_took),
            "proxied_sessions_per_s": per_second(took),
            "rss_before_kb": before_kb,
            "rss_after_kb": after_kb,
            "kb_per_idle_session": round3((after_kb as f64 - before_kb as f64) / count as f64),
        });

        // Round trips, six paths in alternating blocks.
        let stdio_direct = connect(tokio::process::Command::new(&everything)).await?;
        let (stdio_proxied, _) = self.toolshelf(&config).await?;
        call(&stdio_proxied, "open_toolbox", open.clone()).await?;
        let direct_fx = DirectHttp::connect(&fixture_http.url, None).await?;
        let direct_ev = DirectHttp::connect(&everything_http.url, None).await?;
        let (rounds, per_round) = (self.rounds(2, 20), self.rounds(20, 200));
        let stdio_use = |tool: &str, arguments: Value| {
            call(
                &stdio_proxied,
                "use_tool",
                json!({"tool": {"toolbox": "bench", "server": "ev", "name": tool}, "arguments": arguments}),
            )
        };
        let mut samples: [Vec<Duration>; 6] = Default::default();
        for round in 0..=rounds {
            // Round 0 warms every path up and is not counted.
            let mut blocks: [Vec<Duration>; 6] = Default::default();
            timed(&mut blocks[0], per_round, || {
                direct_fx.call("echo", echo.clone())
            })
            .await?;
            timed(&mut blocks[1], per_round, || {
                first.call("use_tool", use_fx.clone())
            })
            .await?;
            timed(&mut blocks[2], per_round, || {
                direct_ev.call("echo", echo.clone())
            })
            .await?;
            timed(&mut blocks[3], per_round, || {
                first.call("use_tool", use_ev.clone())
            })
            .await?;
            timed(&mut blocks[4], per_round, || {
                call(&stdio_direct, "echo", echo.clone())
            })
            .await?;
            timed(&mut blocks[5], per_round, || {
                stdio_use("echo", echo.clone())
            })
            .await?;
            if round > 0 {
                for (all, block) in samples.iter_mut().zip(blocks) {
                    all.extend(block);
                }
            }
        }
        drop(stdio_direct);
        close(stdio_proxied).await;
        http_serve::close_all(vec![direct_fx, direct_ev, first]).await;

        // Agents working at once, one session and one connection each: against the fixture
        // (the targets), and against server-everything as the issue defines the direct path,
        // with fewer calls (its own HTTP transport serves ~500 a second to one session).
        let fixture_rates = SessionsRate {
            direct_url: &fixture_http.url,
            proxied_url: &served.url,
            direct_arguments: &echo,
            proxied_arguments: &use_fx,
            open: &open,
            total: self.rounds(128, 12_800),
            rounds: self.rounds(1, 5),
        };
        let throughput = fixture_rates.measure().await?;
        let everything_rates = SessionsRate {
            direct_url: &everything_http.url,
            proxied_arguments: &use_ev,
            total: self.rounds(64, 1_280),
            rounds: self.rounds(1, 3),
            ..fixture_rates
        };
        let throughput_everything = everything_rates.measure().await?;
        let [
            fx_direct,
            fx_proxied,
            ev_direct,
            ev_proxied,
            stdio_direct,
            stdio_proxied,
        ] = samples;
        Ok(json!({
            "latency_fixture": compare(&fx_direct, &fx_proxied),
            "latency_everything": compare(&ev_direct, &ev_proxied),
            "latency_stdio": compare(&stdio_direct, &stdio_proxied),
            "sessions": throughput,
            "sessions_everything": throughput_everything,
            "open_sessions": sessions_figures,
        }))
    }

    /// 5. toolshelf's resident memory: idle, with 16 children open, and over many calls.
    async fn memory(&self, proxied: &Client, pid_with_one: u32) -> anyhow::Result<Value> {
        // A fresh toolshelf for the idle and 16-children figures.
        let servers: serde_json::Map<String, Value> = (0..16)
            .map(|index| (format!("fx{index}"), self.fixture_server(&[])))
            .collect();
        let config = self.config("memory", json!({"many": {"mcpServers": servers}}))?;
        let (client, pid) = self.toolshelf(&config).await?;
        let idle = rss_kb(pid)?;
        call(&client, "open_toolbox", json!({"toolbox": "many"})).await?;
        let with_16 = rss_kb(pid)?;
        close(client).await;

        // Growth over many calls, on the toolshelf that has served all the runs above.
        let calls = self.rounds(2_000, 100_000);
        rate(calls / 10, 32, || use_tool(proxied, "echo", json!({}))).await?;
        let before = rss_kb(pid_with_one)?;
        rate(calls, 32, || use_tool(proxied, "echo", json!({}))).await?;
        let after = rss_kb(pid_with_one)?;
        Ok(json!({
            "idle_kb": idle,
            "with_16_children_kb": with_16,
            "calls": calls,
            "before_calls_kb": before,
            "after_calls_kb": after,
            "growth_kb": after as i64 - before as i64,
        }))
    }

    /// 4. Cold open of 1, 4 and 16 children that each take 200 ms to start, against the
    ///    slowest of the same children started directly; and a re-open.
    async fn cold_open(&self) -> anyhow::Result<Value> {
        let mut figures = serde_json::Map::new();
        let delay = ["--init-delay-ms", "200"];
        for count in [1usize, 4, 16] {
            let starts = (0..count).map(|_| async {
                let began = Instant::now();
                let client = self.direct(&delay).await?;
                client.list_all_tools().await?;
                let took = began.elapsed();
                drop(client);
                anyhow::Ok(took)
            });
            let direct: Vec<Duration> = futures::future::try_join_all(starts).await?;
            let slowest = direct.iter().max().copied().unwrap_or_default();

            let servers: serde_json::Map<String, Value> = (0..count)
                .map(|index| (format!("fx{index}"), self.fixture_server(&delay)))
                .collect();
            let config = self.config(
                &format!("open{count}"),
                json!({"slow": {"mcpServers": servers}}),
            )?;
            let (client, _) = self.toolshelf(&config).await?;
            let began = Instant::now();
            let opened = call(&client, "open_toolbox", json!({"toolbox": "slow"})).await?;
            let open = began.elapsed();
            if opened.is_error == Some(true) {
                bail!("open of {count} failed: {opened:?}");
            }
            let began = Instant::now();
            call(&client, "open_toolbox", json!({"toolbox": "slow"})).await?;
            let reopen = began.elapsed();
            close(client).await;
            let mut figure = json!({
                "open_ms": ms(open),
                "slowest_child_ms": ms(slowest),
                "ratio": round3(open.as_secs_f64() / slowest.as_secs_f64()),
                "reopen_us": us(reopen),
            });
            if count != 4 {
                figure["warm_open_ms"] = self.warm_open(&config, count).await?;
            }
            figures.insert(count.to_string(), figure);
        }
        Ok(Value::Object(figures))
    }

    /// 4b. The first open of a new toolshelf whose persisted catalog holds every server of the
    ///    toolbox (filled by one run before): answered from the catalog, the children starting
    ///    behind the answer.
    async fn warm_open(&self, config: &Path, count: usize) -> anyhow::Result<Value> {
        let cache = self.dir.join(format!("cache-{count}"));
        let (client, _) = self.toolshelf_with(config, Some(&cache)).await?;
        call(&client, "open_toolbox", json!({"toolbox": "slow"})).await?;
        close(client).await;
        let mut times = Vec::new();
        for _ in 0..self.rounds(2, 15) {
            let (client, _) = self.toolshelf_with(config, Some(&cache)).await?;
            let began = Instant::now();
            let opened = call(&client, "open_toolbox", json!({"toolbox": "slow"})).await?;
            times.push(began.elapsed());
            let from = opened
                .structured_content
                .as_ref()
                .and_then(|opened| opened.pointer("/servers/0/catalog"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            close(client).await;
            if from != "cached" {
                bail!("the warm open of {count} did not come from the catalog: {opened:?}");
            }
        }
        Ok(percentiles_ms(&mut times))
    }

    /// 6. From spawning `toolshelf serve` to the answer of `initialize`.
    async fn spawn(&self) -> anyhow::Result<Value> {
        let config = self.config(
            "spawn",
            json!({"bench": {"mcpServers": {"fx": self.fixture_server(&[])}}}),
        )?;
        let mut times = Vec::new();
        for _ in 0..self.rounds(3, 20) {
            let began = Instant::now();
            let (client, _) = self.toolshelf(&config).await?;
            times.push(began.elapsed());
            close(client).await;
        }
        Ok(json!({ "initialize_ms": percentiles_ms(&mut times) }))
    }

    /// 7. Bytes the agent reads: toolshelf's tools/list with 10 toolboxes, and open_toolbox
    ///    against the child's own tools/list.
    async fn context(&self) -> anyhow::Result<Value> {
        let toolboxes: serde_json::Map<String, Value> = (0..10)
            .map(|index| {
                let toolbox = json!({
                    "description": format!("Toolbox number {index}: what its servers are for, in one line"),
                    "mcpServers": {"main": self.fixture_server(&[]), "extra": self.fixture_server(&[])},
                });
                (format!("toolbox-{index}"), toolbox)
            })
            .collect();
        let config = self.config("context", Value::Object(toolboxes))?;
        let (client, _) = self.toolshelf(&config).await?;
        let listed = client.list_tools(None).await?;
        let tools_list = serde_json::to_vec(&listed)?.len();
        let opened = call(&client, "open_toolbox", json!({"toolbox": "toolbox-0"})).await?;
        let open_text = opened
            .content
            .first()
            .and_then(|block| block.as_text())
            .map(|text| text.text.len())
            .unwrap_or(0);
        let open_result = serde_json::to_vec(&opened)?.len();
        close(client).await;
        let child_list = raw_tools_list_bytes(&self.options.fixture, &[]).await?;
        let mut figures = json!({
            "tools_list_bytes_10_toolboxes": tools_list,
            "tools_list_tokens_estimate": tools_list / 4,
            "open_toolbox_text_bytes": open_text,
            "open_toolbox_result_bytes": open_result,
            "children_tools_list_bytes": 2 * child_list,
        });
        if let Some(bin) = &self.options.npm_bin {
            figures["real_servers"] = self.real_servers(bin).await?;
        }
        Ok(figures)
    }

    /// open_toolbox text against the servers' own tools/list, for the npm servers.
    async fn real_servers(&self, bin: &Path) -> anyhow::Result<Value> {
        let (mut ours, mut theirs) = (0usize, 0usize);
        let mut each = serde_json::Map::new();
        let root = self.dir.to_str().context("temp dir is not UTF-8")?;
        for (name, program, args) in [
            ("filesystem", "mcp-server-filesystem", vec![root]),
            ("memory", "mcp-server-memory", vec![]),
            ("everything", "mcp-server-everything", vec![]),
        ] {
            let listed = raw_tools_list_bytes(&bin.join(program), &args).await?;
            let server = json!({ "command": bin.join(program), "args": args });
            let config =
                self.config(name, json!({ "real": { "mcpServers": { name: server } } }))?;
            let (client, _) = self.toolshelf(&config).await?;
            let opened = call(&client, "open_toolbox", json!({"toolbox": "real"})).await?;
            close(client).await;
            let text = opened
                .content
                .first()
                .and_then(|block| block.as_text())
                .map(|text| text.text.len())
                .unwrap_or(0);
            each.insert(
                name.into(),
                json!({ "tools_list_bytes": listed, "open_toolbox_text_bytes": text }),
            );
            ours += text;
            theirs += listed;
        }
        Ok(json!({
            "servers": each,
            "open_toolbox_text_bytes": ours,
            "children_tools_list_bytes": theirs,
            "ratio": round3(ours as f64 / theirs as f64),
        }))
    }
}

/// Bytes of a server's own `tools/list` result as it writes it (compact JSON, every field kept:
/// an SDK client would drop the fields it does not model and undercount).
async fn raw_tools_list_bytes(program: &Path, args: &[&str]) -> anyhow::Result<usize> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().context("no stdout")?).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for message in messages {
        stdin.write_all(format!("{message}\n").as_bytes()).await?;
    }
    stdin.flush().await?;
    while let Some(line) = lines.next_line().await? {
        let message: Value = serde_json::from_str(&line)?;
        if message["id"] == json!(2) {
            return Ok(serde_json::to_vec(&message["result"])?.len());
        }
    }
    bail!("{} ended before answering tools/list", program.display())
}

async fn connect(command: tokio::process::Command) -> anyhow::Result<Client> {
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()?;
    Ok(().serve(transport).await?)
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

/// Runs `call` `count` times one after another, adding each one's time to `samples`.
async fn timed<F, Fut, T>(samples: &mut Vec<Duration>, count: usize, call: F) -> anyhow::Result<()>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    for _ in 0..count {
        let began = Instant::now();
        call().await?;
        samples.push(began.elapsed());
    }
    Ok(())
}

/// Calls per second for `total` calls with `in_flight` at once.
async fn rate<F, Fut>(total: usize, in_flight: usize, call: F) -> anyhow::Result<f64>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<CallToolResult>>,
{
    let began = Instant::now();
    let mut results = stream::iter(0..total)
        .map(|_| call())
        .buffer_unordered(in_flight);
    while let Some(result) = results.next().await {
        result?;
    }
    Ok(total as f64 / began.elapsed().as_secs_f64())
}

fn compare(direct: &[Duration], proxied: &[Duration]) -> Value {
    let (mut a, mut b) = (direct.to_vec(), proxied.to_vec());
    let (da, db) = (percentiles_us(&mut a), percentiles_us(&mut b));
    json!({
        "samples": direct.len(),
        "direct_us": da,
        "proxied_us": db,
        "added_p50_us": round(db["p50"].as_f64().unwrap_or(0.0) - da["p50"].as_f64().unwrap_or(0.0)),
        "added_p99_us": round(db["p99"].as_f64().unwrap_or(0.0) - da["p99"].as_f64().unwrap_or(0.0)),
        "ratio_p50": round3(db["p50"].as_f64().unwrap_or(0.0) / da["p50"].as_f64().unwrap_or(1.0)),
        "ratio_p99": round3(db["p99"].as_f64().unwrap_or(0.0) / da["p99"].as_f64().unwrap_or(1.0)),
    })
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * fraction).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn percentiles_us(samples: &mut [Duration]) -> Value {
    samples.sort_unstable();
    json!({
        "p50": us(percentile(samples, 0.50)),
        "p90": us(percentile(samples, 0.90)),
        "p99": us(percentile(samples, 0.99)),
    })
}

fn percentiles_ms(samples: &mut [Duration]) -> Value {
    samples.sort_unstable();
    json!({
        "p50": ms(percentile(samples, 0.50)),
        "p90": ms(percentile(samples, 0.90)),
        "p99": ms(percentile(samples, 0.99)),
    })
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn us(duration: Duration) -> f64 {
    round(duration.as_secs_f64() * 1e6)
}

fn ms(duration: Duration) -> f64 {
    round(duration.as_secs_f64() * 1e4) / 10.0
}

fn round(value: f64) -> f64 {
    value.round()
}

fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// VmRSS of `pid`, in KiB.
fn rss_kb(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS in /proc/PID/status")
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

/// Each target with the figure measured and whether it is met.
fn targets(report: &Value) -> Value {
    let number = |pointer: &str| {
        report
            .pointer(pointer)
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN)
    };
    let check = |name: &str, measured: f64, target: f64, at_most: bool| {
        let met = if at_most {
            measured <= target
        } else {
            measured >= target
        };
        json!({ "target": name, "measured": measured, "limit": target, "met": met })
    };
    json!([
        check(
            "added latency p50 (us)",
            number("/latency/added_p50_us"),
            TARGET_ADDED_P50_US,
            true
        ),
        check(
            "proxied p99 / direct p99",
            number("/latency/ratio_p99"),
            TARGET_P99_RATIO,
            true
        ),
        check(
            "throughput at 32 in flight, proxied / direct",
            number("/throughput/32/ratio"),
            TARGET_THROUGHPUT_32,
            false
        ),
        check(
            "idle RSS (KiB)",
            number("/memory/idle_kb"),
            TARGET_IDLE_RSS_KB as f64,
            true
        ),
        check(
            "RSS growth over the calls (KiB)",
            number("/memory/growth_kb"),
            TARGET_RSS_GROWTH_KB as f64,
            true
        ),
        check(
            "open of 16 children / slowest child",
            number("/open/16/ratio"),
            TARGET_OPEN_16_RATIO,
            true
        ),
        check(
            "open of 16 children from the persisted catalog, p50 (ms)",
            number("/open/16/warm_open_ms/p50"),
            TARGET_WARM_OPEN_MS,
            true
        ),
        check(
            "tools/list bytes, 10 toolboxes",
            number("/context/tools_list_bytes_10_toolboxes"),
            TARGET_TOOLS_LIST_BYTES as f64,
            true
        ),
        check(
            "open_toolbox text bytes / children's tools/list bytes (fixture)",
            number("/context/open_toolbox_text_bytes")
                / number("/context/children_tools_list_bytes"),
            1.0,
            true
        ),
        check(
            "the same, npm servers (filesystem, memory, everything)",
            number("/context/real_servers/ratio"),
            1.0,
            true
        ),
        check(
            "serve --http: added latency p50, fixture (us)",
            number("/http_serve/latency_fixture/added_p50_us"),
            TARGET_HTTP_ADDED_P50_US,
            true
        ),
        check(
            "serve --http: calls/s at 64 sessions, proxied / direct",
            number("/http_serve/sessions/64/ratio"),
            TARGET_HTTP_THROUGHPUT_64,
            false
        ),
        check(
            "serve --http: RSS per idle session (KiB)",
            number("/http_serve/open_sessions/kb_per_idle_session"),
            TARGET_HTTP_SESSION_KB,
            true
        ),
    ])
}

/// The figures as a table for the terminal.
pub fn table(report: &Value) -> String {
    let mut text = String::new();
    let line = |text: &mut String, row: String| {
        text.push_str(&row);
        text.push('\n');
    };
    line(
        &mut text,
        format!(
            "machine: {} ({} cores){}",
            report["machine"]["cpu"].as_str().unwrap_or("?"),
            report["machine"]["cores"],
            if report["quick"] == json!(true) {
                ", QUICK run"
            } else {
                ""
            }
        ),
    );
    line(&mut text, String::new());
    line(&mut text, "round trip (us)                  direct p50/p90/p99        proxied p50/p90/p99       added p50   p99 ratio".into());
    for (label, pointer) in [
        ("no-op", "/latency"),
        ("100 KB text", "/payload/100KB"),
        ("1 MB text", "/payload/1MB"),
        ("echo, HTTP child", "/http_child"),
        (
            "echo, serve --http (fixture)",
            "/http_serve/latency_fixture",
        ),
        (
            "echo, serve --http (everything)",
            "/http_serve/latency_everything",
        ),
        ("echo, stdio (everything)", "/http_serve/latency_stdio"),
    ] {
        let figure = &report.pointer(pointer).cloned().unwrap_or_default();
        let triple = |side: &str| {
            format!(
                "{}/{}/{}",
                figure[side]["p50"], figure[side]["p90"], figure[side]["p99"]
            )
        };
        line(
            &mut text,
            format!(
                "{label:<32} {:<25} {:<25} {:>9}   {:>9}",
                triple("direct_us"),
                triple("proxied_us"),
                figure["added_p50_us"],
                figure["ratio_p99"]
            ),
        );
    }
    line(&mut text, String::new());
    line(
        &mut text,
        "in flight   direct calls/s   proxied calls/s   ratio".into(),
    );
    for in_flight in ["1", "8", "32", "128"] {
        let figure = &report["throughput"][in_flight];
        line(
            &mut text,
            format!(
                "{in_flight:>9}   {:>14}   {:>15}   {:>5}",
                figure["direct_calls_per_s"], figure["proxied_calls_per_s"], figure["ratio"]
            ),
        );
    }
    line(&mut text, String::new());
    line(
        &mut text,
        "HTTP sessions   direct calls/s   serve --http calls/s   ratio   (fixture | server-everything)".into(),
    );
    for sessions in ["1", "8", "64"] {
        let fixture = &report["http_serve"]["sessions"][sessions];
        let everything = &report["http_serve"]["sessions_everything"][sessions];
        line(
            &mut text,
            format!(
                "{sessions:>13}   {:>14}   {:>20}   {:>5}   | {} / {} ({})",
                fixture["direct_calls_per_s"],
                fixture["proxied_calls_per_s"],
                fixture["ratio"],
                everything["direct_calls_per_s"],
                everything["proxied_calls_per_s"],
                everything["ratio"]
            ),
        );
    }
    let opened = &report["http_serve"]["open_sessions"];
    line(
        &mut text,
        format!(
            "HTTP sessions opened one after another: direct {}/s, serve --http {}/s; {} idle sessions: RSS {} -> {} KiB ({} KiB each)",
            opened["direct_sessions_per_s"],
            opened["proxied_sessions_per_s"],
            opened["sessions"],
            opened["rss_before_kb"],
            opened["rss_after_kb"],
            opened["kb_per_idle_session"]
        ),
    );
    line(&mut text, String::new());
    line(
        &mut text,
        "children   open ms   slowest child ms   ratio   re-open us   from the catalog ms p50 / p99".into(),
    );
    for count in ["1", "4", "16"] {
        let figure = &report["open"][count];
        let warm = &figure["warm_open_ms"];
        let warm = match warm.is_null() {
            true => "-".to_owned(),
            false => format!("{} / {}", warm["p50"], warm["p99"]),
        };
        line(
            &mut text,
            format!(
                "{count:>8}   {:>7}   {:>16}   {:>5}   {:>10}   {warm}",
                figure["open_ms"], figure["slowest_child_ms"], figure["ratio"], figure["reopen_us"]
            ),
        );
    }
    line(&mut text, String::new());
    let memory = &report["memory"];
    line(
        &mut text,
        format!(
            "RSS KiB: idle {}, with 16 children {}, {} calls: {} -> {} (growth {})",
            memory["idle_kb"],
            memory["with_16_children_kb"],
            memory["calls"],
            memory["before_calls_kb"],
            memory["after_calls_kb"],
            memory["growth_kb"]
        ),
    );
    line(
        &mut text,
        format!(
            "spawn to initialize (ms): {}",
            report["spawn"]["initialize_ms"]
        ),
    );
    let context = &report["context"];
    line(
        &mut text,
        format!(
            "context bytes: tools/list with 10 toolboxes {} (~{} tokens); open_toolbox text {} (whole result {}) vs the children's tools/list {}",
            context["tools_list_bytes_10_toolboxes"],
            context["tools_list_tokens_estimate"],
            context["open_toolbox_text_bytes"],
            context["open_toolbox_result_bytes"],
            context["children_tools_list_bytes"]
        ),
    );
    if let Some(real) = context.get("real_servers") {
        line(
            &mut text,
            format!(
                "npm servers: open_toolbox text {} vs their tools/list {} (ratio {})",
                real["open_toolbox_text_bytes"], real["children_tools_list_bytes"], real["ratio"]
            ),
        );
    }
    line(&mut text, String::new());
    line(
        &mut text,
        "target                                                  measured      limit   met".into(),
    );
    for target in report["targets"].as_array().into_iter().flatten() {
        line(
            &mut text,
            format!(
                "{:<55} {:>9.3} {:>10} {:>5}",
                target["target"].as_str().unwrap_or(""),
                target["measured"].as_f64().unwrap_or(f64::NAN),
                target["limit"],
                target["met"]
            ),
        );
    }
    text
}

/// Calls per second of 1, 8 and 64 agents working at once, each with its own session and
/// connection, directly and through `toolshelf serve --http`, in alternating runs.
#[derive(Clone, Copy)]
struct SessionsRate<'a> {
    direct_url: &'a str,
    proxied_url: &'a str,
    direct_arguments: &'a Value,
    /// `use_tool`'s arguments.
    proxied_arguments: &'a Value,
    /// `open_toolbox`'s arguments.
    open: &'a Value,
    /// Calls per run, shared among the sessions.
    total: usize,
    rounds: usize,
}

impl SessionsRate<'_> {
    async fn measure(self) -> anyhow::Result<Value> {
        let mut throughput = serde_json::Map::new();
        for count in [1usize, 8, 64] {
            let per_session = (self.total / count).max(1);
            let (direct_sessions, _) =
                http_serve::open_sessions(self.direct_url, None, count, false).await?;
            let (sessions, _) =
                http_serve::open_sessions(self.proxied_url, Some(http_serve::TOKEN), count, false)
                    .await?;
            for session in &sessions {
                session.call("open_toolbox", self.open.clone()).await?;
            }
            let direct = |per_session| {
                http_serve::sessions_rate(
                    &direct_sessions,
                    per_session,
                    "echo",
                    self.direct_arguments,
                )
            };
            let proxied = |per_session| {
                http_serve::sessions_rate(
                    &sessions,
                    per_session,
                    "use_tool",
                    self.proxied_arguments,
                )
            };
            direct(1).await?;
            proxied(1).await?;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..self.rounds {
                a.push(direct(per_session).await?);
                b.push(proxied(per_session).await?);
            }
            http_serve::close_all(direct_sessions).await;
            http_serve::close_all(sessions).await;
            throughput.insert(count.to_string(), rates(&mut a, &mut b));
        }
        Ok(Value::Object(throughput))
    }
}

/// The median calls per second of the direct and the proxied runs, and their ratio.
fn rates(direct: &mut [f64], proxied: &mut [f64]) -> Value {
    let (direct, proxied) = (median(direct), median(proxied));
    json!({
        "direct_calls_per_s": round(direct),
        "proxied_calls_per_s": round(proxied),
        "ratio": round3(proxied / direct),
    })
}
