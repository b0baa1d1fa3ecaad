//! The stdio floor: the same client and fixture through the smallest relay that could sit where
//! toolshelf sits (`toolshelf-floor stdio`, benches/floors: it copies lines and parses nothing),
//! beside the direct path and toolshelf. A relay's own added p50 moves by tens of µs from one
//! process start to the next on a shared machine, so toolshelf is compared with the floor as
//! the difference of their p50s paired within each round (direct, floor and toolshelf blocks in
//! turn), with both relays started anew for every few rounds. Each process's CPU time per call
//! is read from the kernel's per-thread accounting (`/proc/PID/task/*/schedstat`).

use serde_json::{Value, json};

use super::*;

/// A relay under measurement and the child it started.
struct Relay {
    client: Client,
    pid: u32,
}

impl Relay {
    /// CPU time of the relay and of its child so far, in ns.
    fn cpu_ns(&self) -> (u64, u64) {
        let child = children(self.pid).first().map_or(0, |child| cpu_ns(*child));
        (cpu_ns(self.pid), child)
    }
}

impl Bench<'_> {
    pub(super) async fn stdio_floor(&self, direct: &Client) -> anyhow::Result<Value> {
        let (starts, rounds_per_start, per_round) =
            (self.rounds(2, 8), self.rounds(2, 5), self.rounds(50, 400));
        let config = self.config(
            "floor",
            json!({"bench": {"mcpServers": {"fx": self.fixture_server(&[])}}}),
        )?;
        let mut samples: [Vec<Duration>; 3] = Default::default();
        let mut differences = Vec::new();
        // [floor, floor's child, toolshelf, toolshelf's child], ns over all counted calls.
        let mut cpu = [0u64; 4];
        for _ in 0..starts {
            let floor = self.floor_relay().await?;
            let (client, pid) = self.toolshelf(&config).await?;
            call(&client, "open_toolbox", json!({"toolbox": "bench"})).await?;
            let shelf = Relay { client, pid };
            for _ in 0..per_round.min(100) {
                call(&floor.client, "echo", json!({})).await?;
                use_tool(&shelf.client, "echo", json!({})).await?;
            }
            for _ in 0..rounds_per_start {
                let mut blocks: [Vec<Duration>; 3] = Default::default();
                timed(&mut blocks[0], per_round, || {
                    call(direct, "echo", json!({}))
                })
                .await?;
                let before = floor.cpu_ns();
                timed(&mut blocks[1], per_round, || {
                    call(&floor.client, "echo", json!({}))
                })
                .await?;
                let after = floor.cpu_ns();
                (cpu[0], cpu[1]) = (cpu[0] + after.0 - before.0, cpu[1] + after.1 - before.1);
                let before = shelf.cpu_ns();
                timed(&mut blocks[2], per_round, || {
                    use_tool(&shelf.client, "echo", json!({}))
                })
                .await?;
                let after = shelf.cpu_ns();
                (cpu[2], cpu[3]) = (cpu[2] + after.0 - before.0, cpu[3] + after.1 - before.1);
                differences.push(p50_us(&blocks[2]) - p50_us(&blocks[1]));
                for (all, block) in samples.iter_mut().zip(blocks) {
                    all.extend(block);
                }
            }
            close(floor.client).await;
            close(shelf.client).await;
        }
        let calls = samples[1].len().max(1) as f64;
        let per_call = |ns: u64| round(ns as f64 / 1000.0 / calls);
        differences.sort_by(f64::total_cmp);
        let [direct, floor, shelf] = samples;
        let floor_vs_direct = compare(&direct, &floor);
        let shelf_vs_direct = compare(&direct, &shelf);
        Ok(json!({
            "floor": floor_vs_direct,
            "toolshelf": shelf_vs_direct,
            "toolshelf_over_floor_p50_us": {
                "median": round(differences[differences.len() / 2]),
                "min": round(differences[0]),
                "max": round(differences[differences.len() - 1]),
                "rounds": differences.len(),
                "process_starts": starts,
            },
            "p99_ratio_over_floor": round3(
                shelf_vs_direct["ratio_p99"].as_f64().unwrap_or(0.0)
                    - floor_vs_direct["ratio_p99"].as_f64().unwrap_or(0.0)
            ),
            "cpu_us_per_call": {
                "floor": per_call(cpu[0]),
                "floor_child": per_call(cpu[1]),
                "toolshelf": per_call(cpu[2]),
                "toolshelf_child": per_call(cpu[3]),
            },
        }))
    }

    /// The fixture behind `toolshelf-floor stdio`, connected.
    async fn floor_relay(&self) -> anyhow::Result<Relay> {
        let mut command = tokio::process::Command::new(&self.options.floor);
        command.arg("stdio").arg("--").arg(&self.options.fixture);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()?;
        let pid = transport.id().context("the floor has no pid")?;
        let client = ().serve(transport).await?;
        Ok(Relay { client, pid })
    }
}

fn p50_us(samples: &[Duration]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort();
    percentile(&sorted, 0.5).as_secs_f64() * 1e6
}

/// The processes `pid` started.
fn children(pid: u32) -> Vec<u32> {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    threads
        .flatten()
        .filter_map(|thread| std::fs::read_to_string(thread.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}
