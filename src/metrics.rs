//! What `serve --http` tells Prometheus at `GET /metrics` (OpenMetrics text): calls by toolbox,
//! server and outcome with their latency, children started and crashed, and (set when scraped)
//! children running, sessions open and HTTP connections open. Only `serve --http` records: on
//! stdio there is nobody to scrape, and the call path carries no `Metrics` at all.

use std::{fmt::Write, time::Duration};

use prometheus_client::{
    encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

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
            let labels = CallerLabels {
                caller: caller.to_owned(),
            };
            self.caller_calls.get_or_create(&labels).inc();
        }
        let labels = CallLabels {
            toolbox: toolbox.to_owned(),
            server: server.to_owned(),
            outcome,
        };
        self.calls.get_or_create(&labels).inc();
        let labels = ServerLabels {
            toolbox: labels.toolbox,
            server: labels.server,
        };
        self.latency
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
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
