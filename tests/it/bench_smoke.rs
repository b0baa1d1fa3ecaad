//! The overhead benchmark, run in quick mode as a smoke check: every figure is produced and
//! plausible. Timings are never asserted here (the machine is shared and noisy); the numbers
//! come from `cargo bench --bench overhead`.

#[path = "../../benches/overhead/http_child.rs"]
mod http_child;
#[path = "../../benches/overhead/http_serve.rs"]
mod http_serve;
#[path = "../../benches/overhead/issuer.rs"]
mod issuer;
use crate::harness::launch;
#[path = "../../benches/overhead/measure/mod.rs"]
mod measure;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_benchmark_runs_in_quick_mode() {
    let options = measure::Options {
        quick: true,
        toolshelf: crate::harness::toolshelf_bin().into(),
        fixture: crate::harness::fixture_bin().into(),
        floor: env!("CARGO_BIN_EXE_toolshelf-floor").into(),
        npm_bin: Some(crate::harness::interop_dir().join("node_modules/.bin")),
        python: Some(crate::harness::python_env().join("bin/python")),
        // Every section by name: every figure below then shows that `--only` names them all.
        only: measure::SECTIONS.iter().map(ToString::to_string).collect(),
    };
    let report = measure::run(&options).await.expect("the benchmark runs");
    let targets = report["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 26);
    // Every figure is there, those of the npm servers and the HTTP child included.
    for target in targets {
        let measured = target["measured"].as_f64().expect("a number");
        assert!(measured.is_finite(), "{target}");
        // A why quotes only figures the run has: `?` stands for one its pointer missed.
        if let Some(why) = target.get("why") {
            assert!(
                why.as_str().is_some_and(|why| !why.contains('?')),
                "{target}"
            );
        }
    }
    let whys = targets.iter().filter(|target| target.get("why").is_some());
    assert_eq!(whys.count(), 8);
    let opened = &report["http_serve"]["open_sessions"];
    assert!(
        opened["private_kb_per_idle_session"].as_f64().is_some(),
        "{opened}"
    );
    assert!(report["latency"]["samples"].as_u64() > Some(0));
    // Code mode: a script's call beside the same use_tool call, and what a waiting script holds.
    let code = &report["code"];
    assert!(code["one_call"]["samples"].as_u64() > Some(0), "{code}");
    assert!(code["private_kb_per_script"].as_f64().is_some(), "{code}");
    // Code mode's tasks: one call instead of several, and fewer tokens read, on every task.
    for (task, ways) in code["tasks"].as_object().expect("code mode's tasks") {
        assert_eq!(ways["run_code"]["calls"], 1, "{task}: {ways}");
        assert!(
            ways["use_tool"]["calls"].as_u64() > Some(1),
            "{task}: {ways}"
        );
        let read = |way: &str| ways[way]["tokens_read"].as_u64().unwrap_or(u64::MAX);
        assert!(read("run_code") < read("use_tool"), "{task}: {ways}");
        assert!(
            ways["fastmcp_code_mode"]["ms"].as_f64().is_some(),
            "{task}: {ways}"
        );
    }
    let table = measure::code_tasks::markdown(&code["tasks"]);
    assert!(
        crate::docs::document("docs/code-mode.md").contains(&table),
        "docs/code-mode.md should quote, from this run:\n{table}"
    );
    // The stdio floor's rows: the paired difference and each process's CPU per call.
    let floor = &report["floor"];
    assert!(floor["toolshelf_over_floor_p50_us"]["rounds"].as_u64() > Some(0));
    for relay in ["floor", "toolshelf"] {
        let large = floor["1MB"][relay]["proxied_us"]["p50"].as_f64();
        assert!(large.is_some_and(|p50| p50 > 0.0), "1 MB, {relay}: {floor}");
    }
    // Each relay's calls per second at 32 in flight, and toolshelf's ratio to the floor's.
    let rates = &floor["calls_per_s_32_in_flight"];
    for relay in ["floor", "loop_floor", "checked_floor", "toolshelf"] {
        let rate = rates[relay].as_f64();
        assert!(rate.is_some_and(|rate| rate > 0.0), "{relay}: {rates}");
    }
    assert!(
        rates["toolshelf_over_floor"]
            .as_f64()
            .is_some_and(|ratio| ratio > 0.0)
    );
    // Every switch counted is a sleep or a preemption: the preemptions are a part of them.
    for why in [&floor["why"], &report["http_serve"]["over_floor"]["why"]] {
        for relay in ["floor", "toolshelf"] {
            let switches = why["switches_per_call"][relay].as_f64();
            let preemptions = why["preemptions_per_call"][relay].as_f64();
            assert!(
                preemptions.is_some_and(|p| switches.is_some_and(|s| p <= s && s > 0.0)),
                "{why}"
            );
        }
    }
    // The loop floor's and the checked floor's, in the same rounds.
    for name in ["loop_floor", "checked_floor"] {
        let relay = &floor[name];
        assert!(
            relay["toolshelf_over_it_p50_us"]["rounds"]
                == floor["toolshelf_over_floor_p50_us"]["rounds"]
        );
        for figure in [
            &relay["vs_direct"]["proxied_us"]["p50"],
            &relay["1MB"]["proxied_us"]["p50"],
            &relay["cpu_us_per_call"],
        ] {
            assert!(
                figure.as_f64().is_some_and(|figure| figure > 0.0),
                "{name}: {relay}"
            );
        }
    }
    // The client's CPU beside each relay's.
    for side in [
        "direct",
        "floor",
        "loop_floor",
        "checked_floor",
        "toolshelf",
    ] {
        let cpu = floor["cpu_us_per_call"]["client"][side].as_f64();
        assert!(cpu.is_some_and(|cpu| cpu > 0.0), "{side}: {floor}");
    }
    // The why of the spawn and HTTP rows.
    for process in ["toolshelf", "fixture"] {
        let faults = report["spawn"]["why"]["page_faults"][process].as_u64();
        assert!(
            faults.is_some_and(|faults| faults > 0),
            "{}",
            report["spawn"]
        );
    }
    // The 64 sessions' calls/s against the HTTP floor come with each relay's CPU a call.
    let at_64 = &report["http_serve"]["sessions_over_floor"]["64"];
    for relay in ["direct", "proxied"] {
        let cpu = at_64["cpu_us_per_call"][relay].as_f64();
        assert!(cpu.is_some_and(|cpu| cpu > 0.0), "{relay}: {at_64}");
    }
    assert!(at_64["cpu_ratio"].as_f64().is_some_and(f64::is_finite));
    let http_why = &report["http_serve"]["over_floor"]["why"];
    for relay in ["toolshelf", "floor"] {
        assert!(
            http_why["switches_per_call"][relay].as_f64().is_some(),
            "{http_why}"
        );
    }
    for process in ["floor", "floor_child", "toolshelf", "toolshelf_child"] {
        let cpu = floor["cpu_us_per_call"][process].as_f64();
        assert!(cpu.is_some_and(|cpu| cpu > 0.0), "{process}: {floor}");
    }
    for relay in ["floor", "toolshelf"] {
        let switches = floor["why"]["switches_per_call"][relay].as_f64();
        assert!(
            switches.is_some_and(|switches| switches > 0.0),
            "{relay}: {floor}"
        );
    }
    let private = report["memory"]["idle_private_kb"].as_u64();
    assert!(private > Some(0) && private < report["memory"]["idle_kb"].as_u64());
    assert!(report["http_child"]["samples"].as_u64() > Some(0));
    assert!(report["http_serve"]["latency_stdio"]["samples"].as_u64() > Some(0));
    for sessions in ["1", "8", "64"] {
        let ratio = &report["http_serve"]["sessions_everything"][sessions]["ratio"];
        assert!(ratio.as_f64().is_some_and(f64::is_finite), "{ratio}");
    }
    // The audited toolshelf wrote a line per call (the open included).
    assert!(report["gateway"]["audit_lines"].as_u64() > Some(1));
    assert!(!measure::table(&report).is_empty());
}
