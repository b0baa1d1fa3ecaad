//! The HTTP rows: a streamable-HTTP child, and `toolshelf serve --http` beside servers serving
//! HTTP themselves.

use std::{path::Path, time::Duration};

use anyhow::bail;
use serde_json::{Value, json};

use super::*;

impl Bench<'_> {
    /// 6. A streamable-HTTP child (server-everything's `echo` on loopback): added latency over
    ///    the same call made directly with an HTTP client.
    pub(super) async fn http_child(&self, bin: &Path) -> anyhow::Result<Value> {
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
    pub(super) async fn http_serve(&self, bin: &Path) -> anyhow::Result<Value> {
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
        let (before_kb, before_private_kb) = (rss_kb(served.pid)?, private_kb(served.pid)?);
        let (sessions, took) = http_serve::open_sessions(&served.url, token, count, true).await?;
        for session in &sessions {
            session.call("open_toolbox", open.clone()).await?;
        }
        let (after_kb, after_private_kb) = (rss_kb(served.pid)?, private_kb(served.pid)?);
        http_serve::close_all(sessions).await;
        let per_second = |took: Duration| round(count as f64 / took.as_secs_f64());
        let sessions_figures = json!({
            "sessions": count,
            "direct_sessions_per_s": per_second(direct_took),
            "proxied_sessions_per_s": per_second(took),
            "rss_before_kb": before_kb,
            "rss_after_kb": after_kb,
            "kb_per_idle_session": round3((after_kb as f64 - before_kb as f64) / count as f64),
            // The RSS above also counts code pages mapped back in, once, while the sessions
            // open (`resident_code` unmapped them at start); this is what sessions hold.
            "private_kb_per_idle_session":
                round3((after_private_kb as f64 - before_private_kb as f64) / count as f64),
        });

        // Round trips, six paths in alternating blocks.
        let (stdio_direct, _) = connect(tokio::process::Command::new(&everything)).await?;
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
        let floor_http = HttpServer::floor(&self.options.floor, &self.options.fixture).await?;
        let floor_fx = DirectHttp::connect(&floor_http.url, None).await?;
        let floor_pid = floor_http.pid().context("the floor has no pid")?;
        // How toolshelf and the floor ran over their counted `echo` blocks.
        let (mut shelf_usage, mut floor_usage) = (Usage::default(), Usage::default());
        let mut samples: [Vec<Duration>; 7] = Default::default();
        for round in 0..=rounds {
            // Round 0 warms every path up and is not counted.
            let mut blocks: [Vec<Duration>; 7] = Default::default();
            timed(&mut blocks[0], per_round, || {
                direct_fx.call("echo", echo.clone())
            })
            .await?;
            let before = Usage::of(served.pid);
            timed(&mut blocks[1], per_round, || {
                first.call("use_tool", use_fx.clone())
            })
            .await?;
            let shelf_took = Usage::of(served.pid).since(before);
            let before = Usage::of(floor_pid);
            timed(&mut blocks[6], per_round, || {
                floor_fx.call("echo", echo.clone())
            })
            .await?;
            if round > 0 {
                floor_usage.add(Usage::of(floor_pid).since(before));
                shelf_usage.add(shelf_took);
            }
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
        http_serve::close_all(vec![direct_fx, direct_ev, first, floor_fx]).await;

        // Agents working at once, one session and one connection each: against the fixture
        // (the targets), and against server-everything as the issue defines the direct path,
        // with fewer calls (its own HTTP transport serves ~500 a second to one session).
        let fixture_rates = SessionsRate {
            direct_url: &fixture_http.url,
            proxied_url: &served.url,
            pids: None,
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
        let floor_rates = SessionsRate {
            direct_url: &floor_http.url,
            pids: Some((floor_pid, served.pid)),
            ..fixture_rates
        };
        let throughput_over_floor = floor_rates.measure().await?;
        let [
            fx_direct,
            fx_proxied,
            ev_direct,
            ev_proxied,
            stdio_direct,
            stdio_proxied,
            floor,
        ] = samples;
        let over_floor = compare(&floor, &fx_proxied);
        let calls = fx_proxied.len().max(1) as f64;
        let per_call = |ns: u64| ns as f64 / 1000.0 / calls;
        let (shelf_us, floor_us) = (per_call(shelf_usage.cpu_ns), per_call(floor_usage.cpu_ns));
        Ok(json!({
            "latency_fixture": compare(&fx_direct, &fx_proxied),
            "latency_everything": compare(&ev_direct, &ev_proxied),
            "latency_stdio": compare(&stdio_direct, &stdio_proxied),
            "sessions": throughput,
            "sessions_everything": throughput_everything,
            "floor_fixture": compare(&fx_direct, &floor),
            "over_floor": {
                "added_p50_us": over_floor["added_p50_us"],
                "cpu_us_per_call": {"toolshelf": round(shelf_us), "floor": round(floor_us)},
                "cpu_ratio": round3(shelf_us / floor_us.max(f64::MIN_POSITIVE)),
                // Where the CPU goes: the kernel's part, how often each is switched out, and how
                // many of those switches are preemptions rather than sleeps.
                "why": {
                    "kernel_us_per_call": {
                        "toolshelf": round(per_call(shelf_usage.kernel_ns)),
                        "floor": round(per_call(floor_usage.kernel_ns)),
                    },
                    "switches_per_call": {
                        "toolshelf": round1(shelf_usage.switches as f64 / calls),
                        "floor": round1(floor_usage.switches as f64 / calls),
                    },
                    "preemptions_per_call": {
                        "toolshelf": round1(shelf_usage.preemptions as f64 / calls),
                        "floor": round1(floor_usage.preemptions as f64 / calls),
                    },
                },
            },
            "sessions_over_floor": throughput_over_floor,
            "open_sessions": sessions_figures,
        }))
    }
}

/// Calls per second of 1, 8 and 64 agents working at once, each with its own session and
/// connection, directly and through `toolshelf serve --http`, in alternating runs.
#[derive(Clone, Copy)]
pub(super) struct SessionsRate<'a> {
    direct_url: &'a str,
    proxied_url: &'a str,
    /// The direct server's and toolshelf's, whose CPU per call each count reports.
    pids: Option<(u32, u32)>,
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
    pub(super) async fn measure(self) -> anyhow::Result<Value> {
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
            let mut spent = (0, 0);
            let cpu_of = |pid: Option<u32>| pid.map_or(0, cpu_ns);
            let (direct_pid, proxied_pid) = self.pids.unzip();
            for _ in 0..self.rounds {
                let before = cpu_of(direct_pid);
                a.push(direct(per_session).await?);
                spent.0 += cpu_of(direct_pid).saturating_sub(before);
                let before = cpu_of(proxied_pid);
                b.push(proxied(per_session).await?);
                spent.1 += cpu_of(proxied_pid).saturating_sub(before);
            }
            http_serve::close_all(direct_sessions).await;
            http_serve::close_all(sessions).await;
            let mut figures = rates(&mut a, &mut b);
            if self.pids.is_some() {
                // With one thread serving every session, calls per second go as the inverse of
                // the CPU a call: this is why the ratio is what it is.
                let calls = (self.rounds * per_session * count) as f64;
                let (direct_us, proxied_us) = (
                    spent.0 as f64 / 1000.0 / calls,
                    spent.1 as f64 / 1000.0 / calls,
                );
                figures["cpu_us_per_call"] = json!({
                    "direct": round1(direct_us),
                    "proxied": round1(proxied_us),
                });
                figures["cpu_ratio"] = json!(round3(proxied_us / direct_us.max(f64::MIN_POSITIVE)));
            }
            throughput.insert(count.to_string(), figures);
        }
        Ok(Value::Object(throughput))
    }
}
