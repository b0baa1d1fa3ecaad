//! What `serve --http` tells Prometheus at `GET /metrics` (OpenMetrics text): calls by toolbox,
//! server and outcome with their latency, children started and crashed, and (set when scraped)
//! children running, sessions open and HTTP connections open. Only `serve --http` records: on
//! stdio there is nobody to scrape, and the call path carries no `Metrics` at all.

use std::{
    collections::HashMap,
    fmt::Write,
    sync::{OnceLock, RwLock},
    time::Duration,
};

use prometheus_client::{
    encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

use crate::locks;

/// How a call ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(crate) enum CallEnd {
    /// The child answered with a result.
    Ok,
    /// The child answered with an `isError` result.
    ToolError,
    /// No result: toolshelf's error (unknown tool, server unavailable, timeout, crash …).
    Failed,
}

impl EncodeLabelValue for CallEnd {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        encoder.write_str(match self {
            CallEnd::Ok => "ok",
            CallEnd::ToolError => "tool_error",
            CallEnd::Failed => "failed",
        })
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    toolbox: String,
    server: String,
    outcome: CallEnd,
}

/// The caller a token names: as many as there are tokens, so the label stays bounded.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallerLabels {
    caller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServerLabels {
    toolbox: String,
    server: String,
}

pub(crate) struct Metrics {
    registry: Registry,
    handles: Handles,
    calls: Family<CallLabels, Counter>,
    caller_calls: Family<CallerLabels, Counter>,
    latency: Family<ServerLabels, Histogram>,
    started: Family<ServerLabels, Counter>,
    crashed: Family<ServerLabels, Counter>,
    running: Gauge,
    sessions: Gauge,
    connections: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let calls = Family::<CallLabels, Counter>::default();
        let caller_calls = Family::<CallerLabels, Counter>::default();
        // 100 µs to ~52 s, doubling: toolshelf's own overhead sits in the first buckets.
        let latency = Family::<ServerLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
                0.0001, 2.0, 20,
            ))
        });
        let started = Family::<ServerLabels, Counter>::default();
        let crashed = Family::<ServerLabels, Counter>::default();
        let running = Gauge::default();
        let sessions = Gauge::default();
        let connections = Gauge::default();
        let mut registry = Registry::with_prefix("toolshelf");
        registry.register(
            "calls",
            "use_tool calls forwarded to a child, by how they ended",
            calls.clone(),
        );
        registry.register(
            "caller_calls",
            "use_tool calls forwarded to a child, by the caller its token names (with --tokens-dir or a token)",
            caller_calls.clone(),
        );
        registry.register(
            "call_duration_seconds",
            "Time from forwarding a call to its answer",
            latency.clone(),
        );
        registry.register(
            "children_started",
            "Children started (or reconnected, for remote servers)",
            started.clone(),
        );
        registry.register(
            "children_crashed",
            "Children found dead while in use (a crash or a lost connection)",
            crashed.clone(),
        );
        registry.register("children_running", "Children running now", running.clone());
        registry.register(
            "sessions_open",
            "Agent sessions open now (clients without a session are not counted)",
            sessions.clone(),
        );
        registry.register(
            "http_connections_open",
            "HTTP connections open now (closed by toolshelf past http.headerReadTimeout or http.connectionIdleTimeout)",
            connections.clone(),
        );
        Self {
            connections,
            registry,
            handles: Handles::default(),
            calls,
            caller_calls,
            latency,
            started,
            crashed,
            running,
            sessions,
        }
    }
}

impl Metrics {
    /// A call of `caller` (if a token named one) forwarded to `toolbox`'s `server`.
    pub(crate) fn call(
        &self,
        caller: Option<&str>,
        (toolbox, server): (&str, &str),
        outcome: CallEnd,
        took: Duration,
    ) {
        if let Some(caller) = caller {
            self.handles.caller(caller, |name| {
                self.caller_calls
                    .get_or_create(&CallerLabels {
                        caller: name.to_owned(),
                    })
                    .clone()
            });
        }
        self.handles.server(toolbox, server, |handles| {
            handles.outcomes[outcome as usize]
                .get_or_init(|| {
                    let labels = CallLabels {
                        toolbox: toolbox.to_owned(),
                        server: server.to_owned(),
                        outcome,
                    };
                    self.calls.get_or_create(&labels).clone()
                })
                .inc();
            handles
                .latency
                .get_or_init(|| {
                    self.latency
                        .get_or_create(&server_labels(toolbox, server))
                        .clone()
                })
                .observe(took.as_secs_f64());
        });
    }

    pub(crate) fn started(&self, toolbox: &str, server: &str) {
        self.started
            .get_or_create(&server_labels(toolbox, server))
            .inc();
    }

    pub(crate) fn crashed(&self, toolbox: &str, server: &str) {
        self.crashed
            .get_or_create(&server_labels(toolbox, server))
            .inc();
    }

    /// The text for a scrape, with the gauges set to `running` children, `sessions` and
    /// `connections`.
    pub(crate) fn scrape(&self, running: usize, sessions: usize, connections: usize) -> String {
        self.connections
            .set(i64::try_from(connections).unwrap_or(i64::MAX));
        self.running.set(i64::try_from(running).unwrap_or(i64::MAX));
        self.sessions
            .set(i64::try_from(sessions).unwrap_or(i64::MAX));
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!(%error, "metrics could not be written");
        }
        text
    }
}

fn server_labels(toolbox: &str, server: &str) -> ServerLabels {
    ServerLabels {
        toolbox: toolbox.to_owned(),
        server: server.to_owned(),
    }
}

/// Each server's call counters and histogram, and each caller's counter, once a call made them:
/// a family finds a label set by its owned strings (three allocations a call) hashed with
/// SipHash, where these are found by the names the call has. A family never drops a label set,
/// so a handle kept here stays the one it exports.
#[derive(Default)]
struct Handles {
    servers: RwLock<Named<Named<ServerHandles>>>,
    callers: RwLock<Named<Counter>>,
}

type Named<V> = HashMap<Box<str>, V, foldhash::fast::RandomState>;

/// One server's handles, each made by the first call that needs it (as the family would).
#[derive(Default)]
struct ServerHandles {
    /// By `CallEnd`'s order.
    outcomes: [OnceLock<Counter>; 3],
    latency: OnceLock<Histogram>,
}

impl Handles {
    fn server(&self, toolbox: &str, server: &str, use_them: impl FnOnce(&ServerHandles)) {
        if let Some(handles) = locks::read(&self.servers)
            .get(toolbox)
            .and_then(|named| named.get(server))
        {
            return use_them(handles);
        }
        let mut servers = locks::write(&self.servers);
        let handles = servers
            .entry(toolbox.into())
            .or_default()
            .entry(server.into())
            .or_default();
        use_them(handles);
    }

    fn caller(&self, caller: &str, made: impl FnOnce(&str) -> Counter) {
        if let Some(counter) = locks::read(&self.callers).get(caller) {
            counter.inc();
            return;
        }
        locks::write(&self.callers)
            .entry(caller.into())
            .or_insert_with(|| made(caller))
            .inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scrape's lines that start with `name`.
    fn lines<'t>(text: &'t str, name: &str) -> Vec<&'t str> {
        text.lines().filter(|line| line.starts_with(name)).collect()
    }

    #[test]
    fn kept_handles_count_in_the_families_they_came_from() {
        let metrics = Metrics::default();
        let took = Duration::from_micros(300);
        for _ in 0..3 {
            metrics.call(Some("alice"), ("dev", "fx"), CallEnd::Ok, took);
        }
        metrics.call(Some("bob"), ("dev", "fx"), CallEnd::ToolError, took);
        metrics.call(None, ("ops", "fx"), CallEnd::Failed, took);
        let text = metrics.scrape(0, 0, 0);
        let mut calls = lines(&text, "toolshelf_calls_total");
        calls.sort_unstable();
        assert_eq!(
            calls,
            [
                r#"toolshelf_calls_total{toolbox="dev",server="fx",outcome="ok"} 3"#,
                r#"toolshelf_calls_total{toolbox="dev",server="fx",outcome="tool_error"} 1"#,
                r#"toolshelf_calls_total{toolbox="ops",server="fx",outcome="failed"} 1"#,
            ],
            "{text}"
        );
        let mut callers = lines(&text, "toolshelf_caller_calls_total");
        callers.sort_unstable();
        assert_eq!(
            callers,
            [
                r#"toolshelf_caller_calls_total{caller="alice"} 3"#,
                r#"toolshelf_caller_calls_total{caller="bob"} 1"#,
            ],
            "{text}"
        );
        let counts = lines(&text, "toolshelf_call_duration_seconds_count");
        assert!(
            counts
                .contains(&r#"toolshelf_call_duration_seconds_count{toolbox="dev",server="fx"} 4"#),
            "{text}"
        );
        assert!(
            counts
                .contains(&r#"toolshelf_call_duration_seconds_count{toolbox="ops",server="fx"} 1"#),
            "{text}"
        );
    }
}
