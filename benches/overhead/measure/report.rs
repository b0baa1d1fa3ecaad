//! The table printed after a run.

use serde_json::{Value, json};

/// The figures as a table for the terminal.
pub fn table(report: &Value) -> String {
    let mut text = String::new();
    let line = |text: &mut String, row: String| {
        text.push_str(&row);
        text.push('\n');
    };
    line(
        &mut text,
        format!(
            "machine: {} ({} cores){}",
            report["machine"]["cpu"].as_str().unwrap_or("?"),
            report["machine"]["cores"],
            if report["quick"] == json!(true) {
                ", QUICK run"
            } else {
                ""
            }
        ),
    );
    line(&mut text, String::new());
    line(&mut text, "round trip (us)                  direct p50/p90/p99        proxied p50/p90/p99       added p50   p99 ratio".into());
    for (label, pointer) in [
        ("no-op", "/latency"),
        ("100 KB text", "/payload/100KB"),
        ("1 MB text", "/payload/1MB"),
        ("echo, HTTP child", "/http_child"),
        (
            "echo, serve --http (fixture)",
            "/http_serve/latency_fixture",
        ),
        (
            "echo, serve --http (everything)",
            "/http_serve/latency_everything",
        ),
        ("echo, stdio (everything)", "/http_serve/latency_stdio"),
        (
            "echo, the HTTP floor (fixture)",
            "/http_serve/floor_fixture",
        ),
        ("echo, access rules", "/gateway/access_rules"),
        ("echo, rules + audit", "/gateway/access_rules_and_audit"),
        ("echo, JWT + rules", "/gateway/jwt_and_rules"),
        (
            "echo, a new JWT each call",
            "/gateway/jwt_new_token_each_call",
        ),
    ] {
        let figure = &report.pointer(pointer).cloned().unwrap_or_default();
        let triple = |side: &str| {
            format!(
                "{}/{}/{}",
                figure[side]["p50"], figure[side]["p90"], figure[side]["p99"]
            )
        };
        line(
            &mut text,
            format!(
                "{label:<32} {:<25} {:<25} {:>9}   {:>9}",
                triple("direct_us"),
                triple("proxied_us"),
                figure["added_p50_us"],
                figure["ratio_p99"]
            ),
        );
    }
    let floor = &report["floor"];
    let over = &floor["toolshelf_over_floor_p50_us"];
    let cpu = &floor["cpu_us_per_call"];
    line(
        &mut text,
        format!(
            "stdio floor: direct/floor/toolshelf p50 {} / {} / {} us; toolshelf over the floor, paired p50 {} (min {}, max {}, {} rounds); CPU us per call: floor {} (its child {}), toolshelf {} (its child {})",
            floor["floor"]["direct_us"]["p50"],
            floor["floor"]["proxied_us"]["p50"],
            floor["toolshelf"]["proxied_us"]["p50"],
            over["median"],
            over["min"],
            over["max"],
            over["rounds"],
            cpu["floor"],
            cpu["floor_child"],
            cpu["toolshelf"],
            cpu["toolshelf_child"]
        ),
    );
    let event_loop = &floor["loop_floor"];
    line(
        &mut text,
        format!(
            "  the same copy on toolshelf's event loop (stdio-loop): p50 {} us, over the floor paired p50 {} (min {}, max {}); toolshelf over it {} (min {}, max {}); CPU us per call {} (kernel {})",
            event_loop["vs_direct"]["proxied_us"]["p50"],
            event_loop["over_floor_p50_us"]["median"],
            event_loop["over_floor_p50_us"]["min"],
            event_loop["over_floor_p50_us"]["max"],
            event_loop["toolshelf_over_it_p50_us"]["median"],
            event_loop["toolshelf_over_it_p50_us"]["min"],
            event_loop["toolshelf_over_it_p50_us"]["max"],
            event_loop["cpu_us_per_call"],
            event_loop["kernel_us_per_call"]
        ),
    );
    let checked = &floor["checked_floor"];
    let client = &cpu["client"];
    line(
        &mut text,
        format!(
            "  a relay that reads and checks each use_tool call and answer, nothing else (stdio-checked): p50 {} us, over the floor paired p50 {} (min {}, max {}); toolshelf over it {} (min {}, max {}); CPU us per call {} (its child {}); the client's CPU us per call direct {}, floor {}, loop floor {}, checked {}, toolshelf {}",
            checked["vs_direct"]["proxied_us"]["p50"],
            checked["over_floor_p50_us"]["median"],
            checked["over_floor_p50_us"]["min"],
            checked["over_floor_p50_us"]["max"],
            checked["toolshelf_over_it_p50_us"]["median"],
            checked["toolshelf_over_it_p50_us"]["min"],
            checked["toolshelf_over_it_p50_us"]["max"],
            checked["cpu_us_per_call"],
            checked["child_cpu_us_per_call"],
            client["direct"],
            client["floor"],
            client["loop_floor"],
            client["checked_floor"],
            client["toolshelf"]
        ),
    );
    let large = &floor["1MB"];
    line(
        &mut text,
        format!(
            "  1 MB results: direct/floor/toolshelf p50 {} / {} / {} us: the floor adds {}, the loop floor {}, the checked floor {}, toolshelf {} (a relay that forwards whole lines pays the floor's)",
            large["floor"]["direct_us"]["p50"],
            large["floor"]["proxied_us"]["p50"],
            large["toolshelf"]["proxied_us"]["p50"],
            large["floor"]["added_p50_us"],
            event_loop["1MB"]["added_p50_us"],
            checked["1MB"]["added_p50_us"],
            large["toolshelf"]["added_p50_us"]
        ),
    );
    let rates = &floor["calls_per_s_32_in_flight"];
    line(
        &mut text,
        format!(
            "  calls/s at 32 in flight (median of {} runs): floor {}, loop floor {}, checked floor {}, toolshelf {} ({} x the floor's)",
            rates["runs"],
            rates["floor"],
            rates["loop_floor"],
            rates["checked_floor"],
            rates["toolshelf"],
            rates["toolshelf_over_floor"]
        ),
    );
    let why = &floor["why"];
    line(
        &mut text,
        format!(
            "  why: kernel us per call floor {} / toolshelf {}; context switches per call floor {} / toolshelf {}, of which preemptions {} / {} (instructions per call: python3 benches/instructions.py)",
            why["kernel_us_per_call"]["floor"],
            why["kernel_us_per_call"]["toolshelf"],
            why["switches_per_call"]["floor"],
            why["switches_per_call"]["toolshelf"],
            why["preemptions_per_call"]["floor"],
            why["preemptions_per_call"]["toolshelf"]
        ),
    );
    line(&mut text, String::new());
    line(
        &mut text,
        "in flight   direct calls/s   proxied calls/s   ratio".into(),
    );
    for in_flight in ["1", "8", "32", "128"] {
        let figure = &report["throughput"][in_flight];
        line(
            &mut text,
            format!(
                "{in_flight:>9}   {:>14}   {:>15}   {:>5}",
                figure["direct_calls_per_s"], figure["proxied_calls_per_s"], figure["ratio"]
            ),
        );
    }
    line(&mut text, String::new());
    line(
        &mut text,
        "HTTP sessions   direct calls/s   serve --http calls/s   ratio   (fixture | server-everything)".into(),
    );
    for sessions in ["1", "8", "64"] {
        let fixture = &report["http_serve"]["sessions"][sessions];
        let everything = &report["http_serve"]["sessions_everything"][sessions];
        line(
            &mut text,
            format!(
                "{sessions:>13}   {:>14}   {:>20}   {:>5}   | {} / {} ({})",
                fixture["direct_calls_per_s"],
                fixture["proxied_calls_per_s"],
                fixture["ratio"],
                everything["direct_calls_per_s"],
                everything["proxied_calls_per_s"],
                everything["ratio"]
            ),
        );
    }
    let opened = &report["http_serve"]["open_sessions"];
    line(
        &mut text,
        format!(
            "HTTP sessions opened one after another: direct {}/s, serve --http {}/s; {} idle sessions: RSS {} -> {} KiB ({} KiB each, of which {} the sessions' own memory, the rest code mapped back in once)",
            opened["direct_sessions_per_s"],
            opened["proxied_sessions_per_s"],
            opened["sessions"],
            opened["rss_before_kb"],
            opened["rss_after_kb"],
            opened["kb_per_idle_session"],
            opened["private_kb_per_idle_session"]
        ),
    );
    let over = &report["http_serve"]["over_floor"];
    line(
        &mut text,
        format!(
            "serve --http over the HTTP floor: +{} us p50; CPU us per call toolshelf {} / floor {} ({} x); why: kernel us per call toolshelf {} / floor {}, context switches per call toolshelf {} / floor {}, of which preemptions {} / {}",
            over["added_p50_us"],
            over["cpu_us_per_call"]["toolshelf"],
            over["cpu_us_per_call"]["floor"],
            over["cpu_ratio"],
            over["why"]["kernel_us_per_call"]["toolshelf"],
            over["why"]["kernel_us_per_call"]["floor"],
            over["why"]["switches_per_call"]["toolshelf"],
            over["why"]["switches_per_call"]["floor"],
            over["why"]["preemptions_per_call"]["toolshelf"],
            over["why"]["preemptions_per_call"]["floor"]
        ),
    );
    let through_floor = &report["http_serve"]["sessions_over_floor"];
    let counts = ["1", "8", "64"];
    let column = |key: &str| {
        let figures = counts.map(|count| through_floor[count][key].to_string());
        figures.join(" / ")
    };
    let at_64 = &through_floor["64"];
    line(
        &mut text,
        format!(
            "  calls/s of 1 / 8 / 64 sessions, the HTTP floor then toolshelf: {} and {} ({}); why, at 64: one thread serves every session, so calls/s go as 1 / CPU per call: toolshelf {} us / floor {} us ({} x)",
            column("direct_calls_per_s"),
            column("proxied_calls_per_s"),
            column("ratio"),
            at_64["cpu_us_per_call"]["proxied"],
            at_64["cpu_us_per_call"]["direct"],
            at_64["cpu_ratio"]
        ),
    );
    line(&mut text, String::new());
    line(
        &mut text,
        "children   open ms   slowest child ms   ratio   re-open us   from the catalog ms p50 / p99".into(),
    );
    for count in ["1", "4", "16"] {
        let figure = &report["open"][count];
        let warm = &figure["warm_open_ms"];
        let warm = match warm.is_null() {
            true => "-".to_owned(),
            false => format!("{} / {}", warm["p50"], warm["p99"]),
        };
        line(
            &mut text,
            format!(
                "{count:>8}   {:>7}   {:>16}   {:>5}   {:>10}   {warm}",
                figure["open_ms"], figure["slowest_child_ms"], figure["ratio"], figure["reopen_us"]
            ),
        );
    }
    line(&mut text, String::new());
    let memory = &report["memory"];
    line(
        &mut text,
        format!(
            "RSS KiB: idle {} ({} private), with 16 children {}, {} calls: {} -> {} (growth {})",
            memory["idle_kb"],
            memory["idle_private_kb"],
            memory["with_16_children_kb"],
            memory["calls"],
            memory["before_calls_kb"],
            memory["after_calls_kb"],
            memory["growth_kb"]
        ),
    );
    let spawn = &report["spawn"];
    line(
        &mut text,
        format!(
            "spawn to initialize (ms): {}; the fixture's own: {} ({} x)",
            spawn["initialize_ms"], spawn["fixture_initialize_ms"], spawn["ratio_p50"]
        ),
    );
    line(
        &mut text,
        format!(
            "  why, by the answer: page faults toolshelf {} / fixture {}, CPU us toolshelf {} / fixture {} (the kernel's part: perf stat, docs/performance.md)",
            spawn["why"]["page_faults"]["toolshelf"],
            spawn["why"]["page_faults"]["fixture"],
            spawn["why"]["cpu_us"]["toolshelf"],
            spawn["why"]["cpu_us"]["fixture"]
        ),
    );
    let context = &report["context"];
    line(
        &mut text,
        format!(
            "context bytes: tools/list with 10 toolboxes {} (~{} tokens); open_toolbox text {} (whole result {}) vs the children's tools/list {}",
            context["tools_list_bytes_10_toolboxes"],
            context["tools_list_tokens_estimate"],
            context["open_toolbox_text_bytes"],
            context["open_toolbox_result_bytes"],
            context["children_tools_list_bytes"]
        ),
    );
    if let Some(real) = context.get("real_servers") {
        line(
            &mut text,
            format!(
                "npm servers: open_toolbox text {} vs their tools/list {} (ratio {})",
                real["open_toolbox_text_bytes"], real["children_tools_list_bytes"], real["ratio"]
            ),
        );
    }
    let search = &report["search"];
    if !search.is_null() {
        line(
            &mut text,
            format!(
                "search over {} tools: first search (catalog load and index) {} ms, search {} us, the load adds {} KiB private ({} KiB per 1,000 tools)",
                search["tools"],
                search["load_ms"],
                search["search_us"],
                search["load_rss_kb"],
                search["rss_kb_per_1000_tools"]
            ),
        );
    }
    let code = &report["code"];
    if !code.is_null() {
        line(
            &mut text,
            format!(
                "code mode: use_tool {} us p50, run_code of the same call {} us (adds {}); {} KiB private per script waiting on a call",
                code["one_call"]["direct_us"]["p50"],
                code["one_call"]["proxied_us"]["p50"],
                code["one_call"]["added_p50_us"],
                code["private_kb_per_script"]
            ),
        );
        for row in super::code_tasks::summary(&code["tasks"]) {
            line(&mut text, row);
        }
    }
    line(&mut text, String::new());
    line(
        &mut text,
        "target                                                  measured      limit   met".into(),
    );
    for target in report["targets"].as_array().into_iter().flatten() {
        line(
            &mut text,
            format!(
                "{:<55} {:>9.3} {:>10} {:>5}",
                target["target"].as_str().unwrap_or(""),
                target["measured"].as_f64().unwrap_or(f64::NAN),
                target["limit"],
                target["met"]
            ),
        );
        if let (Some(false), Some(why)) = (target["met"].as_bool(), target["why"].as_str()) {
            line(&mut text, format!("    why: {why}"));
        }
    }
    text
}
