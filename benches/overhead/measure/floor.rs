//! The stdio floor: the same client and fixture through the smallest relay that could sit where
//! toolshelf sits (`toolshelf-floor stdio`, benches/floors: it copies lines and parses nothing),
//! beside the direct path and toolshelf. A relay's own added p50 moves by tens of µs from one
//! process start to the next on a shared machine, so toolshelf is compared with the floor as
//! the difference of their p50s paired within each round (direct, floor and toolshelf blocks in
//! turn), with both relays started anew for every few rounds. Each process's CPU time per call
//! is read from the kernel's per-thread accounting (`/proc/PID/task/*/schedstat`). A few 1 MB
//! results go through all three too: what a relay that only copies lines adds to a large
//! result is the floor under the 1 MB row. Runs of 32 calls in flight through each relay give
//! the throughput target its ratio to the floor's calls per second. A second floor
//! (`toolshelf-floor stdio-loop`) copies lines the same way on toolshelf's event loop, in the
//! same rounds: it splits what toolshelf adds over the floor into what an event loop costs and
//! what toolshelf's work costs.

use serde_json::{Value, json};

use super::*;

/// A relay under measurement and the child it started.
struct Relay {
    client: Client,
    pid: u32,
    /// Whether the fixture's tools are called through `use_tool` (toolshelf and the checked
    /// floor) or by their own names.
    use_tool: bool,
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

impl Relay {
    /// One call of the fixture's `tool` through this relay, a `use_tool` where it takes those.
    async fn call(&self, tool: &str, arguments: Value) -> anyhow::Result<CallToolResult> {
        if self.use_tool {
            use_tool(&self.client, tool, arguments).await
        } else {
            call(&self.client, tool, arguments).await
        }
    }
}

/// The relays in the order their blocks run in each round.
const FLOOR: usize = 0;
const LOOP_FLOOR: usize = 1;
const CHECKED_FLOOR: usize = 2;
const TOOLSHELF: usize = 3;

impl Bench<'_> {
    pub(super) async fn stdio_floor(&self, direct: &Client) -> anyhow::Result<Value> {
        let (starts, rounds_per_start, per_round) =
            (self.rounds(2, 8), self.rounds(2, 5), self.rounds(50, 400));
        let config = self.config(
            "floor",
            json!({"bench": {"mcpServers": {"fx": self.fixture_server(&[])}}}),
        )?;
        // Direct, then each relay's.
        let mut samples: [Vec<Duration>; 5] = Default::default();
        // The same with 1 MB results, a block each per start.
        let mut large: [Vec<Duration>; 5] = Default::default();
        let large_per_start = self.rounds(2, 5);
        let large_result = json!({"bytes": 1_000_000});
        // Calls per second with 32 in flight through each relay, a run each per start.
        let mut rates_32: [Vec<f64>; 4] = Default::default();
        let calls_32 = self.rounds(200, 2000);
        // p50 differences paired within each round: toolshelf − floor, loop floor − floor,
        // toolshelf − loop floor, checked floor − floor, toolshelf − checked floor.
        let mut differences: [Vec<f64>; 5] = Default::default();
        // Each relay's and its child's, over all counted calls.
        let mut cpu = [[Usage::default(); 2]; 4];
        // The benchmark's own (the agent's side) while each relay's blocks run, direct first.
        let mut client_cpu = [Usage::default(); 5];
        let own_pid = std::process::id();
        for start in 0..starts {
            let relays = [
                self.floor_relay("stdio").await?,
                self.floor_relay("stdio-loop").await?,
                self.checked_relay().await?,
                self.toolshelf_relay(&config).await?,
            ];
            for _ in 0..per_round.min(100) {
                for relay in &relays {
                    relay.call("echo", json!({})).await?;
                }
            }
            for _ in 0..rounds_per_start {
                let mut blocks: [Vec<Duration>; 5] = Default::default();
                let before = Usage::of(own_pid);
                timed(&mut blocks[0], per_round, || {
                    call(direct, "echo", json!({}))
                })
                .await?;
                client_cpu[0].add(Usage::of(own_pid).since(before));
                for (index, relay) in relays.iter().enumerate() {
                    let before = relay.usage();
                    let client_before = Usage::of(own_pid);
                    timed(&mut blocks[index + 1], per_round, || {
                        relay.call("echo", json!({}))
                    })
                    .await?;
                    client_cpu[index + 1].add(Usage::of(own_pid).since(client_before));
                    for (all, (after, before)) in cpu[index]
                        .iter_mut()
                        .zip(relay.usage().into_iter().zip(before))
                    {
                        all.add(after.since(before));
                    }
                }
                let p50 = |relay: usize| p50_us(&blocks[relay + 1]);
                differences[0].push(p50(TOOLSHELF) - p50(FLOOR));
                differences[1].push(p50(LOOP_FLOOR) - p50(FLOOR));
                differences[2].push(p50(TOOLSHELF) - p50(LOOP_FLOOR));
                differences[3].push(p50(CHECKED_FLOOR) - p50(FLOOR));
                differences[4].push(p50(TOOLSHELF) - p50(CHECKED_FLOOR));
                for (all, block) in samples.iter_mut().zip(blocks) {
                    all.extend(block);
                }
            }
            // Each start begins with another relay, so none always runs first.
            for turn in 0..relays.len() {
                let index = (turn + start) % relays.len();
                let relay = &relays[index];
                rates_32[index].push(rate(calls_32, 32, || relay.call("echo", json!({}))).await?);
            }
            timed(&mut large[0], large_per_start, || {
                call(direct, "big", large_result.clone())
            })
            .await?;
            for (index, relay) in relays.iter().enumerate() {
                timed(&mut large[index + 1], large_per_start, || {
                    relay.call("big", large_result.clone())
                })
                .await?;
            }
            for relay in relays {
                close(relay.client).await;
            }
        }
        let calls = samples[1].len().max(1) as f64;
        let per_call = |ns: u64| round(ns as f64 / 1000.0 / calls);
        let switches = |usage: &Usage| round1(usage.switches as f64 / calls);
        let preemptions = |usage: &Usage| round1(usage.preemptions as f64 / calls);
        let [floor_32, loop_32, checked_32, shelf_32] = rates_32.map(|mut runs| median(&mut runs));
        let [direct, floor, loop_floor, checked, shelf] = samples;
        let floor_vs_direct = compare(&direct, &floor);
        let shelf_vs_direct = compare(&direct, &shelf);
        let [
            large_direct,
            large_floor,
            large_loop,
            large_checked,
            large_shelf,
        ] = large;
        let [
            mut over_floor,
            loop_over_floor,
            over_loop,
            checked_over_floor,
            over_checked,
        ] = differences.map(paired);
        over_floor["process_starts"] = json!(starts);
        Ok(json!({
            "floor": floor_vs_direct,
            "toolshelf": shelf_vs_direct,
            "toolshelf_over_floor_p50_us": over_floor,
            "p99_ratio_over_floor": round3(
                shelf_vs_direct["ratio_p99"].as_f64().unwrap_or(0.0)
                    - floor_vs_direct["ratio_p99"].as_f64().unwrap_or(0.0)
            ),
            // The same copy of lines on toolshelf's event loop: what the loop costs a relay
            // that does no work, and what toolshelf's work costs over it.
            "loop_floor": {
                "vs_direct": compare(&direct, &loop_floor),
                "over_floor_p50_us": loop_over_floor,
                "toolshelf_over_it_p50_us": over_loop,
                "cpu_us_per_call": per_call(cpu[LOOP_FLOOR][0].cpu_ns),
                "kernel_us_per_call": per_call(cpu[LOOP_FLOOR][0].kernel_ns),
                "1MB": compare(&large_direct, &large_loop),
            },
            // A relay that reads and checks each `use_tool` call and its answer as toolshelf
            // must, and does nothing else: what that work costs, and what toolshelf adds to it.
            "checked_floor": {
                "vs_direct": compare(&direct, &checked),
                "over_floor_p50_us": checked_over_floor,
                "toolshelf_over_it_p50_us": over_checked,
                "cpu_us_per_call": per_call(cpu[CHECKED_FLOOR][0].cpu_ns),
                "child_cpu_us_per_call": per_call(cpu[CHECKED_FLOOR][1].cpu_ns),
                "1MB": compare(&large_direct, &large_checked),
            },
            "1MB": {
                "floor": compare(&large_direct, &large_floor),
                "toolshelf": compare(&large_direct, &large_shelf),
            },
            // The throughput target is a ratio to the floor's calls per second, measured in the
            // same starts (the medians of the runs).
            "calls_per_s_32_in_flight": {
                "floor": round(floor_32),
                "loop_floor": round(loop_32),
                "checked_floor": round(checked_32),
                "toolshelf": round(shelf_32),
                "toolshelf_over_floor": round3(shelf_32 / floor_32),
                "runs": starts,
            },
            "cpu_us_per_call": {
                "floor": per_call(cpu[FLOOR][0].cpu_ns),
                "floor_child": per_call(cpu[FLOOR][1].cpu_ns),
                "toolshelf": per_call(cpu[TOOLSHELF][0].cpu_ns),
                "toolshelf_child": per_call(cpu[TOOLSHELF][1].cpu_ns),
                // The agent's side (this benchmark) while each relay's blocks run: a `use_tool`
                // call costs the agent more to send than the tool's own call.
                "client": {
                    "direct": per_call(client_cpu[0].cpu_ns),
                    "floor": per_call(client_cpu[FLOOR + 1].cpu_ns),
                    "loop_floor": per_call(client_cpu[LOOP_FLOOR + 1].cpu_ns),
                    "checked_floor": per_call(client_cpu[CHECKED_FLOOR + 1].cpu_ns),
                    "toolshelf": per_call(client_cpu[TOOLSHELF + 1].cpu_ns),
                },
            },
            // Why toolshelf's p50 sits above the floor's: its CPU per call, how much of it is the
            // kernel's (system calls, wake-ups), how often each relay is switched out, and how
            // many of those switches are preemptions rather than sleeps.
            "why": {
                "kernel_us_per_call": {
                    "floor": per_call(cpu[FLOOR][0].kernel_ns),
                    "toolshelf": per_call(cpu[TOOLSHELF][0].kernel_ns),
                },
                "switches_per_call": {
                    "floor": switches(&cpu[FLOOR][0]),
                    "toolshelf": switches(&cpu[TOOLSHELF][0]),
                },
                "preemptions_per_call": {
                    "floor": preemptions(&cpu[FLOOR][0]),
                    "toolshelf": preemptions(&cpu[TOOLSHELF][0]),
                },
            },
        }))
    }

    /// The fixture behind `toolshelf-floor MODE` (`stdio` or `stdio-loop`), connected.
    async fn floor_relay(&self, mode: &str) -> anyhow::Result<Relay> {
        let mut command = tokio::process::Command::new(&self.options.floor);
        command.arg(mode).arg("--").arg(&self.options.fixture);
        let (client, pid) = connect(command).await?;
        Ok(Relay {
            client,
            pid,
            use_tool: false,
        })
    }

    /// The fixture behind `toolshelf-floor stdio-checked`, serving its tools as toolshelf's
    /// toolbox `bench`, server `fx`.
    async fn checked_relay(&self) -> anyhow::Result<Relay> {
        let mut command = tokio::process::Command::new(&self.options.floor);
        command
            .args(["stdio-checked", "bench", "fx", "echo,big", "--"])
            .arg(&self.options.fixture);
        let (client, pid) = connect(command).await?;
        Ok(Relay {
            client,
            pid,
            use_tool: true,
        })
    }

    /// The fixture behind toolshelf, its toolbox open.
    async fn toolshelf_relay(&self, config: &std::path::Path) -> anyhow::Result<Relay> {
        let (client, pid) = self.toolshelf(config).await?;
        call(&client, "open_toolbox", json!({"toolbox": "bench"})).await?;
        Ok(Relay {
            client,
            pid,
            use_tool: true,
        })
    }
}

/// The median, least and greatest of paired differences.
fn paired(mut differences: Vec<f64>) -> Value {
    differences.sort_by(f64::total_cmp);
    let at = |index: usize| differences.get(index).copied().map_or(0.0, round);
    json!({
        "median": at(differences.len() / 2),
        "min": at(0),
        "max": at(differences.len().saturating_sub(1)),
        "rounds": differences.len(),
    })
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
