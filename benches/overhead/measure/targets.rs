//! Each figure of a run against its target.

use serde_json::{Value, json};

use super::*;

/// Each target with the figure measured and whether it is met.
pub(super) fn targets(report: &Value) -> Value {
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
            "stdio: toolshelf p50 over the stdio floor's, paired (us)",
            number("/floor/toolshelf_over_floor_p50_us/median"),
            TARGET_OVER_FLOOR_P50_US,
            true
        ),
        check(
            "stdio: p99 ratio to direct, toolshelf's minus the floor's",
            number("/floor/p99_ratio_over_floor"),
            TARGET_P99_RATIO_OVER_FLOOR,
            true
        ),
        check(
            "1 MB text result, added p50 over direct (us)",
            number("/payload/1MB/added_p50_us"),
            TARGET_1MB_ADDED_P50_US,
            true
        ),
        check(
            "throughput at 32 in flight, proxied / direct",
            number("/throughput/32/ratio"),
            TARGET_THROUGHPUT_32,
            false
        ),
        check(
            "stdio: calls/s at 32 in flight / the stdio floor's",
            number("/floor/calls_per_s_32_in_flight/toolshelf_over_floor"),
            TARGET_THROUGHPUT_32_OVER_FLOOR,
            false
        ),
        check(
            "idle RSS (KiB)",
            number("/memory/idle_kb"),
            TARGET_IDLE_RSS_KB as f64,
            true
        ),
        check(
            "spawn to initialize / the fixture's own, p50",
            number("/spawn/ratio_p50"),
            TARGET_SPAWN_OVER_FIXTURE,
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
            "search p50 over 5,000 tools (us)",
            number("/search/search_us/p50"),
            TARGET_SEARCH_P50_US,
            true
        ),
        check(
            "first search: catalog load and index, 5,000 tools, p50 (ms)",
            number("/search/load_ms/p50"),
            TARGET_SEARCH_LOAD_MS,
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
            "serve --http: calls/s at 64 sessions / the HTTP floor's",
            number("/http_serve/sessions_over_floor/64/ratio"),
            TARGET_HTTP_THROUGHPUT_OVER_FLOOR_64,
            false
        ),
        check(
            "serve --http: added p50 over the HTTP floor's (us)",
            number("/http_serve/over_floor/added_p50_us"),
            TARGET_HTTP_OVER_FLOOR_P50_US,
            true
        ),
        check(
            "serve --http: CPU per call / the HTTP floor's",
            number("/http_serve/over_floor/cpu_ratio"),
            TARGET_HTTP_CPU_OVER_FLOOR,
            true
        ),
        check(
            "serve --http: RSS per idle session (KiB)",
            number("/http_serve/open_sessions/kb_per_idle_session"),
            TARGET_HTTP_SESSION_KB,
            true
        ),
        check(
            "serve --http: named tokens and access rules add, p50 (us)",
            number("/gateway/access_rules/added_p50_us"),
            TARGET_GATEWAY_ADDED_P50_US,
            true
        ),
        check(
            "serve --http: a JWT check and access rules add, p50 (us)",
            number("/gateway/jwt_and_rules/added_p50_us"),
            TARGET_GATEWAY_ADDED_P50_US,
            true
        ),
    ])
}
