//! Opening toolboxes: a cold open of 1, 4 and 16 slow children, an open from the persisted
//! catalog, and spawning toolshelf up to its `initialize` answer.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use anyhow::bail;
use serde_json::{Value, json};

use super::*;

impl Bench<'_> {
    /// 4. Cold open of 1, 4 and 16 children that each take 200 ms to start, against the
    ///    slowest of the same children started directly; and a re-open.
    pub(super) async fn cold_open(&self) -> anyhow::Result<Value> {
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
    pub(super) async fn warm_open(&self, config: &Path, count: usize) -> anyhow::Result<Value> {
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

    /// Section 6: from spawning `toolshelf serve` to the answer of `initialize`, and in turn the
    /// same for the fixture itself (an rmcp server that reads no config).
    pub(super) async fn spawn(&self) -> anyhow::Result<Value> {
        let config = self.config(
            "spawn",
            json!({"bench": {"mcpServers": {"fx": self.fixture_server(&[])}}}),
        )?;
        let (mut times, mut fixture_times) = (Vec::new(), Vec::new());
        // Why one start costs more than the other: each process's page faults and CPU time up
        // to its `initialize` answer (read as soon as it is answered).
        let (mut shelf_started, mut fixture_started) = (Vec::new(), Vec::new());
        for _ in 0..self.rounds(3, 20) {
            let began = Instant::now();
            let (client, pid) = self.toolshelf(&config).await?;
            times.push(began.elapsed());
            shelf_started.push(Started::of(pid));
            close(client).await;
            let began = Instant::now();
            let (client, pid) = self.direct_with_pid(&[]).await?;
            fixture_times.push(began.elapsed());
            fixture_started.push(Started::of(pid));
            close(client).await;
        }
        let ratio = median_ms(&mut times) / median_ms(&mut fixture_times);
        Ok(json!({
            "initialize_ms": percentiles_ms(&mut times),
            "fixture_initialize_ms": percentiles_ms(&mut fixture_times),
            "ratio_p50": round3(ratio),
            "why": {
                "page_faults": {
                    "toolshelf": Started::median(&shelf_started, |s| s.page_faults),
                    "fixture": Started::median(&fixture_started, |s| s.page_faults),
                },
                "cpu_us": {
                    "toolshelf": Started::median(&shelf_started, |s| s.cpu_us),
                    "fixture": Started::median(&fixture_started, |s| s.cpu_us),
                },
            },
        }))
    }
}

/// What a process had done by the time it answered `initialize`.
struct Started {
    page_faults: u64,
    cpu_us: u64,
}

impl Started {
    fn of(pid: u32) -> Self {
        Self {
            page_faults: stat_field(format!("/proc/{pid}/stat"), MINOR_FAULTS).unwrap_or(0),
            cpu_us: cpu_ns(pid) / 1000,
        }
    }

    fn median(all: &[Started], figure: impl Fn(&Started) -> u64) -> u64 {
        let mut figures: Vec<u64> = all.iter().map(figure).collect();
        figures.sort_unstable();
        figures.get(figures.len() / 2).copied().unwrap_or(0)
    }
}

fn median_ms(samples: &mut [Duration]) -> f64 {
    samples.sort();
    percentile(samples, 0.5).as_secs_f64() * 1e3
}
