//! Search quality on public data, beside FastMCP's BM25 search transform in the same run
//! (`benches/search/quality.py`): on both sets, tuning and held out, toolshelf's ranking by
//! words and meaning beats its ranking by words alone, which beats FastMCP's on BFCL; its
//! 5-tool answer costs fewer tokens than FastMCP's compact form; and docs/search.md quotes
//! exactly these figures.

use serde_json::Value;

use crate::{
    docs::document,
    harness::{interop_dir, python_env, toolshelf_bin},
    readme::grouped,
};

const SPLITS: [(&str, &str); 4] = [
    ("bfcl_tuning", "BFCL tuning"),
    ("bfcl_held_out", "BFCL held out"),
    ("tau2_tuning", "tau2 tuning"),
    ("tau2_held_out", "tau2 held out"),
];
const SYSTEMS: [(&str, &str); 3] = [
    ("toolshelf", "toolshelf, words and meaning"),
    ("toolshelf_words", "toolshelf, words only"),
    ("fastmcp_bm25", "FastMCP BM25"),
];
const ANSWERS: [(&str, &str); 3] = [
    ("toolshelf", "toolshelf `open_toolbox {query}`, text"),
    (
        "fastmcp_markdown",
        "FastMCP `search_tools`, compact markdown",
    ),
    ("fastmcp_json", "FastMCP `search_tools`, default JSON"),
];

/// The tables docs/search.md quotes, from the report.
fn tables(report: &Value) -> Vec<String> {
    let mut quality = String::from(
        "| queries | system | hit@1 | hit@3 | hit@5 | MRR@10 |\n|---|---|---|---|---|---|\n",
    );
    for (split, split_name) in SPLITS {
        for (system, system_name) in SYSTEMS {
            let figures = &report[split][system];
            quality.push_str(&format!(
                "| {split_name} ({}) | {system_name} |",
                figures["queries"]
            ));
            for key in ["hit@1", "hit@3", "hit@5", "mrr@10"] {
                let value = figures[key].as_f64().unwrap_or(f64::NAN);
                quality.push_str(&format!(" {value:.3} |"));
            }
            quality.push('\n');
        }
    }
    let mut sizes =
        String::from("| 5-tool answer, mean | bytes | o200k_base tokens |\n|---|---|---|\n");
    for (key, name) in ANSWERS {
        let figures = &report["answer_5_tools"][key];
        sizes.push_str(&format!(
            "| {name} | {} | {} |\n",
            grouped(figures["mean_bytes"].as_u64().unwrap_or_default() as usize),
            grouped(figures["mean_tokens_o200k"].as_u64().unwrap_or_default() as usize)
        ));
    }
    vec![quality, sizes]
}

#[test]
fn toolshelf_ranks_better_than_fastmcp_in_fewer_tokens_and_the_docs_quote_the_run() {
    let python = python_env().join("bin/python");
    let interop = interop_dir();
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::path::Path::new(root).join("target/search-bench");
    let run = std::process::Command::new(python)
        .arg(format!("{root}/benches/search/quality.py"))
        .args([toolshelf_bin(), "node"])
        .arg(&out)
        .env("TOOLSHELF_INTEROP", format!("{}/", interop.display()))
        .output()
        .expect("run quality.py");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: Value = serde_json::from_slice(&run.stdout).expect("a JSON report");
    let figure = |split: &str, system: &str, key: &str| {
        report[split][system][key].as_f64().unwrap_or(f64::NAN)
    };
    for (split, _) in SPLITS {
        for key in ["hit@1", "mrr@10"] {
            assert!(
                figure(split, "toolshelf", key) > figure(split, "toolshelf_words", key),
                "{split} {key}: meaning adds nothing: {report}"
            );
        }
        assert!(
            figure(split, "toolshelf", "hit@5") >= figure(split, "toolshelf_words", "hit@5"),
            "{split} hit@5: {report}"
        );
    }
    for split in ["bfcl_tuning", "bfcl_held_out"] {
        for key in ["hit@5", "mrr@10"] {
            assert!(
                figure(split, "toolshelf_words", key) > figure(split, "fastmcp_bm25", key),
                "{split} {key}: {report}"
            );
        }
    }
    let tokens = |key: &str| report["answer_5_tools"][key]["mean_tokens_o200k"].as_u64();
    assert!(tokens("toolshelf") < tokens("fastmcp_markdown"), "{report}");

    let docs = document("docs/search.md");
    for table in tables(&report) {
        assert!(
            docs.contains(&table),
            "docs/search.md should quote, from this run:\n{table}"
        );
    }
}
