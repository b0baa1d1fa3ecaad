//! `toolshelf search`: ranked matches from the persisted catalog, with no server started.

use serde_json::{Value, json};

use crate::{
    harness::{config, fixture_bin, write_config},
    shell::{run, starts},
};

#[test]
fn search_ranks_remembered_tools_and_starts_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let counted = dir.path().join("starts");
    let mut fx =
        json!({"command": fixture_bin(), "args": ["--starts-file", counted.display().to_string()]});
    fx["tools"] = json!({"echo": {"alias": "say", "tags": ["read-only"]}});
    let (_config_dir, path) = write_config(&config(&[("dev", "Development", json!({"fx": fx}))]));
    let config = path.to_str().expect("utf-8");

    // Never listed: nothing to search, said, and nothing started.
    let (code, out, err) = run(&cache, &["search", "--config", config, "--json", "echo"]);
    assert_eq!((code, out.as_str()), (0, "[]\n"), "{err}");
    assert!(
        err.contains(
            "not searched, never listed: dev (`toolshelf check` lists every server's tools once)"
        ),
        "{err}"
    );
    assert_eq!(starts(&counted), 0);

    let (code, _, err) = run(&cache, &["tools", "--config", config, "dev"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(starts(&counted), 1);

    let query = [
        "search",
        "--config",
        config,
        "--json",
        "--limit",
        "3",
        "return",
        "my",
        "arguments",
    ];
    let (code, out, err) = run(&cache, &query);
    assert_eq!(code, 0, "{err}");
    let found: Value = serde_json::from_str(&out).expect("JSON");
    let best = &found[0];
    assert_eq!(
        (&best["toolbox"], &best["server"], &best["name"]),
        (&json!("dev"), &json!("fx"), &json!("say")),
        "the alias is the name the agent calls: {found}"
    );
    assert!(
        best["score"].as_f64().is_some_and(|score| score > 0.0),
        "{found}"
    );
    assert_eq!(found.as_array().map(Vec::len), Some(3), "{found}");
    let scores: Vec<f64> = found
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["score"].as_f64())
        .collect();
    assert!(
        scores.windows(2).all(|pair| pair[0] >= pair[1]),
        "best first: {scores:?}"
    );

    let (code, out, err) = run(&cache, &["search", "--config", config, "read-only"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("SCORE  TOOLBOX  SERVER  TOOL"), "{out}");
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|line| line.contains(" say ")),
        "a tag matches: {out}"
    );

    let (code, out, err) = run(&cache, &["search", "--config", config, "--json", "zzzqqq"]);
    assert_eq!((code, out.as_str()), (0, "[]\n"), "{err}");
    let (code, _, err) = run(&cache, &["search", "--config", config, " "]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: the query is empty; say what the tool should do"),
        "{err}"
    );
    assert_eq!(starts(&counted), 1, "search started a server");
}

#[test]
fn eval_measures_hits_and_mrr_and_lists_the_misses() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let mut fx = json!({"command": fixture_bin()});
    fx["tools"] = json!({"echo": {"alias": "say"}});
    let (_config_dir, path) = write_config(&config(&[("dev", "Development", json!({"fx": fx}))]));
    let config = path.to_str().expect("utf-8");
    assert_eq!(run(&cache, &["tools", "--config", config, "dev"]).0, 0);

    let cases = dir.path().join("cases.jsonl");
    let lines = [
        json!({"query": "return my arguments", "expected": [{"toolbox": "dev", "server": "fx", "name": "say"}]}),
        // The canonical name counts as much as the alias.
        json!({"query": "return my arguments", "expected": [{"toolbox": "dev", "server": "fx", "name": "echo"}]}),
        json!({"query": "fetch a web page", "expected": [{"toolbox": "web", "server": "fetch", "name": "fetch"}]}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&cases, text.join("\n\n")).expect("write");
    let file = cases.to_str().expect("utf-8");

    let (code, out, err) = run(
        &cache,
        &["search", "--config", config, "--eval", file, "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let measured: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(measured["queries"], 3);
    for figures in [&measured, &measured["words_only"]] {
        for measure in ["hit@1", "hit@3", "hit@5", "mrr@10"] {
            let value = figures[measure].as_f64().expect("a number");
            assert!((value - 2.0 / 3.0).abs() < 1e-9, "{measure}: {measured}");
        }
    }
    let misses = measured["misses"].as_array().expect("misses");
    assert_eq!(misses.len(), 1, "{measured}");
    assert_eq!(misses[0]["query"], "fetch a web page");
    assert_eq!(misses[0]["not_in_catalog"], misses[0]["expected"]);

    let (code, out, _) = run(&cache, &["search", "--config", config, "--eval", file]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(concat!(
            "ranking            queries  hit@1  hit@3  hit@5  MRR@10\n",
            "words and meaning  3        0.667  0.667  0.667  0.667\n",
            "words only         3        0.667  0.667  0.667  0.667\n",
        )),
        "{out}"
    );
    assert!(out.contains("  \"fetch a web page\": expected web/fetch/fetch (not in the remembered catalog); first: "), "{out}");

    std::fs::write(&cases, "{\"query\": 1}\n").expect("write");
    let (code, _, err) = run(&cache, &["search", "--config", config, "--eval", file]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(&format!("error: {file} line 1: invalid type")),
        "{err}"
    );
}
