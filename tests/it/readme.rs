//! The README quotes what the code produces: its figures, its first config, the table `check`
//! prints and `open_toolbox`'s description, each computed here from the current code.

use std::{path::Path, process::Stdio};

use serde_json::{Value, json};

use crate::{
    docs::{block_after, document},
    harness::RawClient,
};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `1637` as the docs write it: `1,637`.
pub(crate) fn grouped(number: usize) -> String {
    let digits = number.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[test]
fn the_readmes_first_config_is_the_examples_memory_toolbox() {
    let quoted: Value =
        serde_json::from_str(&block_after(&document("README.md"), "## A first config"))
            .expect("the README's first config is JSON");
    let example = crate::harness::example_config();
    assert_eq!(
        quoted["toolboxes"]["memory"], example["toolboxes"]["memory"],
        "the README's first config is no longer the example's memory toolbox"
    );
}

/// The README's first command, run as a user would: `toolshelf check` on the example starts its
/// npm servers with `npx` (from the npm registry, cached under `target/`) and prints the table
/// the README shows, start-up times aside.
#[test]
fn the_example_config_runs_and_check_prints_the_readmes_table() {
    let home = tempfile::tempdir().expect("a home folder");
    let output = crate::harness::toolshelf_std()
        .args(["check", "--config", crate::harness::EXAMPLE_CONFIG])
        .env("HOME", home.path())
        .env("npm_config_cache", Path::new(ROOT).join("target/npm-cache"))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf check");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let without_times = |table: &str| -> Vec<String> {
        table
            .lines()
            .map(|line| {
                line.split_whitespace()
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|row| !row.is_empty())
            .collect()
    };
    let quoted = block_after(&document("README.md"), "`check` prints one row per server");
    assert_eq!(without_times(&printed), without_times(&quoted));
}

#[tokio::test]
async fn the_readme_quotes_the_size_of_toolshelfs_tools_list_for_the_example() {
    let example = crate::harness::example_config();
    // tools/list starts no server: the example's npm servers are never run here.
    let mut client = RawClient::start(&example).await;
    let (_, listed) = client.request(1, "tools/list", json!({})).await;
    let bytes = serde_json::to_vec(&listed["result"]).expect("JSON").len();
    let quoted = format!(
        "Through toolshelf it reads **{} bytes (~{} tokens)**",
        grouped(bytes),
        bytes / 4
    );
    let readme = document("README.md");
    assert!(readme.contains(&quoted), "README.md should say: {quoted}");
    // And it quotes open_toolbox's description as toolshelf writes it for the example.
    let description = listed["result"]["tools"][0]["description"]
        .as_str()
        .expect("open_toolbox's description");
    let quoted = block_after(&readme, "whose description lists the");
    assert_eq!(
        quoted.trim_end(),
        description,
        "the README quotes an old description"
    );
}
