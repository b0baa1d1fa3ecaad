//! The stdio floor: the same client and fixture through the smallest relay that could sit where
//! toolshelf sits (`toolshelf-floor stdio`, benches/floors: it copies lines and parses nothing),
//! beside the direct path and toolshelf. A relay's own added p50 moves by tens of µs from one
//! process start to the next on a shared machine, so toolshelf is compared with the floor as
//! the difference of their p50s paired within each round (direct, floor and toolshelf blocks in
//! turn), with both relays started anew for every few rounds. Each process's CPU time per call
//! is read from the kernel's per-thread accounting (`/proc/PID/task/*/schedstat`). A few 1 MB
//! results go through all three too: what a relay that only copies lines adds to a large
//! result is the floor under the 1 MB row.

use serde_json::{Value, json};

use super::*;

/// A relay under measurement and the child it started.
struct Relay {
    client: Client,
    pid: u32,
}

impl Relay {
    /// How the relay and its child have run so far.
    fn usage(&self) -> [Usage; 2] {
        let child = children(self.pid)
            .first()
            .map_or_else(Usage::default, |child| Usage::of(*child));
        [Usage::of(self.pid), child]
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
        // The same three with 1 MB results, a block each per start.
        let mut large: [Vec<Duration>; 3] = Default::default();
        let large_per_start = self.rounds(2, 5);
        let large_result = json!({"bytes": 1_000_000});
        let mut differences = Vec::new();
        // [floor, floor's child, toolshelf, toolshelf's child], over all counted calls.
        let mut cpu = [Usage::default(); 4];
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
                let before = floor.usage();
                timed(&mut blocks[1], per_round, || {
                    call(&floor.client, "echo", json!({}))
                })
                .await?;
                for (all, (after, before)) in cpu[..2]
                    .iter_mut()
                    .zip(floor.usage().into_iter().zip(before))
                {
                    all.add(after.since(before));
                }
                let before = shelf.usage();
                timed(&mut blocks[2], per_round, || {
                    use_tool(&shelf.client, "echo", json!({}))
                })
                .await?;
                for (all, (after, before)) in cpu[2..]
                    .iter_mut()
                    .zip(shelf.usage().into_iter().zip(before))
                {
                    all.add(after.since(before));
                }
                differences.push(p50_us(&blocks[2]) - p50_us(&blocks[1]));
                for (all, block) in samples.iter_mut().zip(blocks) {
                    all.extend(block);
                }
            }
            timed(&mut large[0], large_per_start, || {
                call(direct, "big", large_result.clone())
            })
            .await?;
            timed(&mut large[1], large_per_start, || {
                call(&floor.client, "big", large_result.clone())
            })
            .await?;
            timed(&mut large[2], large_per_start, || {
                use_tool(&shelf.client, "big", large_result.clone())
            })
            .await?;
            close(floor.client).await;
            close(shelf.client).await;
        }
        let calls = samples[1].len().max(1) as f64;
        let per_call = |ns: u64| round(ns as f64 / 1000.0 / calls);
        let switches = |usage: &Usage| round(usage.switches as f64 / calls);
        differences.sort_by(f64::total_cmp);
        let [direct, floor, shelf] = samples;
        let floor_vs_direct = compare(&direct, &floor);
        let shelf_vs_direct = compare(&direct, &shelf);
        let [large_direct, large_floor, large_shelf] = large;
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
            "1MB": {
                "floor": compare(&large_direct, &large_floor),
                "toolshelf": compare(&large_direct, &large_shelf),
            },
            "cpu_us_per_call": {
                "floor": per_call(cpu[0].cpu_ns),
                "floor_child": per_call(cpu[1].cpu_ns),
                "toolshelf": per_call(cpu[2].cpu_ns),
                "toolshelf_child": per_call(cpu[3].cpu_ns),
            },
            // Why toolshelf's p50 sits above the floor's: its CPU per call, how much of it is the
            // kernel's (system calls, wake-ups), and how often each relay sleeps and wakes.
            "why": {
                "kernel_us_per_call": {
                    "floor": per_call(cpu[0].kernel_ns),
                    "toolshelf": per_call(cpu[2].kernel_ns),
                },
                "switches_per_call": {
                    "floor": switches(&cpu[0]),
                    "toolshelf": switches(&cpu[2]),
                },
            },
        }))
    }

    /// The fixture behind `toolshelf-floor stdio`, connected.
    async fn floor_relay(&self) -> anyhow::Result<Relay> {
        let mut command = tokio::process::Command::new(&self.options.floor);
        command.arg("stdio").arg("--").arg(&self.options.fixture);
        let (client, pid) = connect(command).await?;
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
