//! Each figure of a run against its target, and, where a floor measured in the same run explains
//! the distance, why in that run's numbers: the issue of the floors asks a target the machine
//! does not allow to say so in the output, not only in the docs.

use serde_json::{Value, json};

use super::*;

/// Each target with the figure measured, whether it is met and, where a floor explains it, `why`.
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
        explained(
            check(
                "added latency p50 (us)",
                number("/latency/added_p50_us"),
                TARGET_ADDED_P50_US,
                true
            ),
            why_direct_latency(report),
        ),
        explained(
            check(
                "proxied p99 / direct p99",
                number("/latency/ratio_p99"),
                TARGET_P99_RATIO,
                true
            ),
            why_direct_p99(report),
        ),
        explained(
            check(
                "stdio: toolshelf p50 over the stdio floor's, paired (us)",
                number("/floor/toolshelf_over_floor_p50_us/median"),
                TARGET_OVER_FLOOR_P50_US,
                true
            ),
            why_over_floor(report),
        ),
        explained(
            check(
                "stdio: p99 ratio to direct, toolshelf's minus the floor's",
                number("/floor/p99_ratio_over_floor"),
                TARGET_P99_RATIO_OVER_FLOOR,
                true
            ),
            why_p99_over_floor(report),
        ),
        explained(
            check(
                "1 MB text result, added p50 over direct (us)",
                number("/payload/1MB/added_p50_us"),
                TARGET_1MB_ADDED_P50_US,
                true
            ),
            why_1mb(report),
        ),
        check(
            "throughput at 32 in flight, proxied / direct",
            number("/throughput/32/ratio"),
            TARGET_THROUGHPUT_32,
            false
        ),
        explained(
            check(
                "stdio: calls/s at 32 in flight / the stdio floor's",
                number("/floor/calls_per_s_32_in_flight/toolshelf_over_floor"),
                TARGET_THROUGHPUT_32_OVER_FLOOR,
                false
            ),
            why_32_in_flight(report),
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
            "run_code of one call, over the same use_tool call, p50 (us)",
            number("/code/one_call/added_p50_us"),
            TARGET_CODE_ONE_CALL_ADDED_P50_US,
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
        explained(
            check(
                "serve --http: calls/s at 64 sessions / the HTTP floor's",
                number("/http_serve/sessions_over_floor/64/ratio"),
                TARGET_HTTP_THROUGHPUT_OVER_FLOOR_64,
                false
            ),
            why_http_64(report),
        ),
        explained(
            check(
                "serve --http: added p50 over the HTTP floor's (us)",
                number("/http_serve/over_floor/added_p50_us"),
                TARGET_HTTP_OVER_FLOOR_P50_US,
                true
            ),
            why_http_over_floor(report),
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

fn explained(mut entry: Value, why: String) -> Value {
    entry["why"] = why.into();
    entry
}

/// A figure of the run as it is written in its JSON (`?` where the run has none).
fn figure(report: &Value, pointer: &str) -> String {
    report.pointer(pointer).map_or("?".into(), Value::to_string)
}

fn why_direct_latency(report: &Value) -> String {
    format!(
        "the stdio floor alone adds {} us over direct in its rounds",
        figure(report, "/floor/floor/added_p50_us")
    )
}

fn why_direct_p99(report: &Value) -> String {
    format!(
        "the stdio floor's own p99 ratio is {}",
        figure(report, "/floor/floor/ratio_p99")
    )
}

fn why_over_floor(report: &Value) -> String {
    format!(
        "a relay that only reads and checks each call and answer (the checked floor) adds {} us alone, for {} us of CPU per call; {}",
        figure(report, "/floor/checked_floor/over_floor_p50_us/median"),
        figure(report, "/floor/checked_floor/cpu_us_per_call"),
        relay_costs(report, "/floor"),
    )
}

/// toolshelf's and the floor's CPU, kernel time and preemptions per call, as the section at
/// `section` of the run has them (`cpu_us_per_call` and `why`, keyed `toolshelf` and `floor`).
fn relay_costs(report: &Value, section: &str) -> String {
    let both = |figures: &str| {
        let of = |relay: &str| figure(report, &format!("{section}/{figures}/{relay}"));
        format!("toolshelf {} / floor {}", of("toolshelf"), of("floor"))
    };
    format!(
        "CPU us per call {}, kernel {}, preemptions {}",
        both("cpu_us_per_call"),
        both("why/kernel_us_per_call"),
        both("why/preemptions_per_call"),
    )
}

fn why_p99_over_floor(report: &Value) -> String {
    let ratio = |pointer: &str| {
        report
            .pointer(&format!("/floor{pointer}/ratio_p99"))
            .and_then(Value::as_f64)
    };
    let checked = match (ratio("/checked_floor/vs_direct"), ratio("/floor")) {
        (Some(checked), Some(floor)) => format!("{:.3}", checked - floor),
        _ => "?".into(),
    };
    format!(
        "the checked floor's p99 ratio is {checked} over the floor's; preemptions per call toolshelf {} / floor {}",
        figure(report, "/floor/why/preemptions_per_call/toolshelf"),
        figure(report, "/floor/why/preemptions_per_call/floor"),
    )
}

fn why_1mb(report: &Value) -> String {
    format!(
        "in the floor's starts the stdio floor alone adds {} us to a 1 MB result, the checked floor {}, toolshelf {}: a relay that reads a whole line before it writes it pays a pipe more",
        figure(report, "/floor/1MB/floor/added_p50_us"),
        figure(report, "/floor/checked_floor/1MB/added_p50_us"),
        figure(report, "/floor/1MB/toolshelf/added_p50_us"),
    )
}

fn why_32_in_flight(report: &Value) -> String {
    let rates = |relay: &str| {
        report
            .pointer(&format!("/floor/calls_per_s_32_in_flight/{relay}"))
            .and_then(Value::as_f64)
    };
    let over_floor = |relay: &str| match (rates(relay), rates("floor")) {
        (Some(rate), Some(floor)) if floor > 0.0 => format!("{:.3}", rate / floor),
        _ => "?".into(),
    };
    format!(
        "the same copy as the floor's on toolshelf's event loop (the loop floor) measured {} of the floor's, the checked floor {}",
        over_floor("loop_floor"),
        over_floor("checked_floor"),
    )
}

fn why_http_64(report: &Value) -> String {
    let at_64 = |pointer: &str| {
        figure(
            report,
            &format!("/http_serve/sessions_over_floor/64{pointer}"),
        )
    };
    format!(
        "one thread serves every session, so calls/s go as 1 / CPU per call: at 64 sessions toolshelf {} us / floor {} ({} x)",
        at_64("/cpu_us_per_call/proxied"),
        at_64("/cpu_us_per_call/direct"),
        at_64("/cpu_ratio"),
    )
}

fn why_http_over_floor(report: &Value) -> String {
    format!(
        "the three processes share two cores, so their CPU adds up to the latency: {}",
        relay_costs(report, "/http_serve/over_floor"),
    )
}
