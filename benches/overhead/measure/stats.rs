//! Samples into figures: timed calls, rates, percentiles and ratios, rounded for the report.

use std::time::{Duration, Instant};

use futures::{StreamExt, stream};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// Runs `call` `count` times one after another, adding each one's time to `samples`.
pub(super) async fn timed<F, Fut, T>(
    samples: &mut Vec<Duration>,
    count: usize,
    call: F,
) -> anyhow::Result<()>
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
pub(super) async fn rate<F, Fut>(total: usize, in_flight: usize, call: F) -> anyhow::Result<f64>
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

pub(super) fn compare(direct: &[Duration], proxied: &[Duration]) -> Value {
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

pub(super) fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * fraction).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

pub(super) fn percentiles_us(samples: &mut [Duration]) -> Value {
    samples.sort_unstable();
    json!({
        "p50": us(percentile(samples, 0.50)),
        "p90": us(percentile(samples, 0.90)),
        "p99": us(percentile(samples, 0.99)),
    })
}

pub(super) fn percentiles_ms(samples: &mut [Duration]) -> Value {
    samples.sort_unstable();
    json!({
        "p50": ms(percentile(samples, 0.50)),
        "p90": ms(percentile(samples, 0.90)),
        "p99": ms(percentile(samples, 0.99)),
    })
}

pub(super) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

pub(super) fn us(duration: Duration) -> f64 {
    round(duration.as_secs_f64() * 1e6)
}

pub(super) fn ms(duration: Duration) -> f64 {
    round(duration.as_secs_f64() * 1e4) / 10.0
}

pub(super) fn round(value: f64) -> f64 {
    value.round()
}

pub(super) fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

pub(super) fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// The median calls per second of the direct and the proxied runs, and their ratio.
pub(super) fn rates(direct: &mut [f64], proxied: &mut [f64]) -> Value {
    let (direct, proxied) = (median(direct), median(proxied));
    json!({
        "direct_calls_per_s": round(direct),
        "proxied_calls_per_s": round(proxied),
        "ratio": round3(proxied / direct),
    })
}

/// CPU time `pid`'s threads (those alive now) have run, in ns; 0 if it cannot be read.
pub(super) fn cpu_ns(pid: u32) -> u64 {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    threads
        .flatten()
        .filter_map(|thread| std::fs::read_to_string(thread.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Fields of `/proc/…/stat`, counted from the first after the command's closing parenthesis.
pub(super) const MINOR_FAULTS: usize = 7;
const KERNEL_TICKS: usize = 12;

/// Field `index` (see `MINOR_FAULTS`) of the stat file at `path`.
pub(super) fn stat_field(path: impl AsRef<std::path::Path>, index: usize) -> Option<u64> {
    let stat = std::fs::read_to_string(path).ok()?;
    let (_, fields) = stat.rsplit_once(')')?;
    fields.split_whitespace().nth(index)?.parse().ok()
}

/// How `pid`'s threads (those alive now) have run so far: CPU ns, the part of it in the kernel
/// (ns, at the kernel's 10 ms tick), how often they were switched out, and how many of those
/// times the scheduler took the CPU from a thread that could have gone on (a preemption) rather
/// than the thread going to sleep.
#[derive(Clone, Copy, Default)]
pub(super) struct Usage {
    pub cpu_ns: u64,
    pub kernel_ns: u64,
    pub switches: u64,
    pub preemptions: u64,
}

impl Usage {
    pub(super) fn of(pid: u32) -> Self {
        let mut usage = Usage {
            cpu_ns: cpu_ns(pid),
            ..Usage::default()
        };
        let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return usage;
        };
        for thread in threads.flatten() {
            let path = thread.path();
            if let Some(ticks) = stat_field(path.join("stat"), KERNEL_TICKS) {
                usage.kernel_ns += ticks * 10_000_000;
            }
            if let Ok(status) = std::fs::read_to_string(path.join("status")) {
                let count = |key: &str| {
                    let mut lines = status.lines();
                    lines.find_map(|line| line.strip_prefix(key)?.trim().parse::<u64>().ok())
                };
                let preempted = count("nonvoluntary_ctxt_switches:").unwrap_or(0);
                let slept = count("voluntary_ctxt_switches:").unwrap_or(0);
                usage.switches += slept + preempted;
                usage.preemptions += preempted;
            }
        }
        usage
    }

    /// What ran between `earlier` and this.
    pub(super) fn since(self, earlier: Usage) -> Usage {
        Usage {
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            kernel_ns: self.kernel_ns.saturating_sub(earlier.kernel_ns),
            switches: self.switches.saturating_sub(earlier.switches),
            preemptions: self.preemptions.saturating_sub(earlier.preemptions),
        }
    }

    pub(super) fn add(&mut self, more: Usage) {
        self.cpu_ns += more.cpu_ns;
        self.kernel_ns += more.kernel_ns;
        self.switches += more.switches;
        self.preemptions += more.preemptions;
    }
}
