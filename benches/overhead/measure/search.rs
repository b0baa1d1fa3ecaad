//! Search over a large catalog: 50 toolboxes of one fixture each, every fixture listing 86
//! generated tools beside its own 14 (5,000 tools in all), remembered by a first run. A new toolshelf
//! then answers `open_toolbox {query}`: its first search reads the persisted catalog and builds
//! the index (the load), the next ones are searches of that index. Memory is toolshelf's
//! private RSS before and after the load. Search has no direct path to stand beside: no child
//! can answer it, and peers load every server first (docs/search.md compares quality).

use std::time::Instant;

use anyhow::bail;
use serde_json::{Value, json};

use super::*;

const TOOLBOXES: usize = 50;
const GENERATED_PER_SERVER: usize = 86;
const VERBS: &[&str] = &[
    "get", "list", "create", "update", "delete", "search", "find", "read", "write", "send",
    "fetch", "move", "copy", "rename", "archive", "export", "import", "sync", "watch", "sort",
];
const NOUNS: &[&str] = &[
    "file",
    "folder",
    "issue",
    "comment",
    "message",
    "channel",
    "user",
    "team",
    "invoice",
    "order",
    "ticket",
    "flight",
    "hotel",
    "booking",
    "repository",
    "branch",
    "commit",
    "page",
    "record",
    "table",
    "query",
    "report",
    "chart",
    "event",
    "calendar",
    "contact",
    "note",
    "task",
    "project",
    "label",
    "image",
    "video",
    "playlist",
    "song",
    "payment",
    "customer",
    "product",
    "stock",
    "trade",
    "alert",
];
const QUALIFIERS: &[&str] = &[
    "by id",
    "for the current user",
    "in a workspace",
    "with filters",
    "from the archive",
    "in bulk",
    "as a draft",
    "with its metadata",
    "by name",
    "since a date",
];

impl Bench<'_> {
    /// 9. The load (catalog read and index built), the search p50/p99, and the memory they take.
    pub(super) async fn search(&self) -> anyhow::Result<Value> {
        let mut seed = 7u64;
        let mut pick = |items: &[&'static str]| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            items[(seed >> 33) as usize % items.len()]
        };
        let mut toolboxes = serde_json::Map::new();
        let mut queries = Vec::new();
        for toolbox in 0..TOOLBOXES {
            let mut lines = String::new();
            for tool in 0..GENERATED_PER_SERVER {
                let (verb, noun, qualifier) = (pick(VERBS), pick(NOUNS), pick(QUALIFIERS));
                lines.push_str(&format!(
                    "{verb}_{noun}_{toolbox}_{tool}\t{verb} a {noun} {qualifier} in service {toolbox}\n"
                ));
                if queries.len() < 200 && tool % 9 == 0 {
                    queries.push(format!("{verb} {noun} {qualifier}"));
                }
            }
            let extra = self.dir.join(format!("search-tools-{toolbox}"));
            std::fs::write(&extra, lines)?;
            let extra = extra.display().to_string();
            toolboxes.insert(
                format!("service{toolbox}"),
                json!({"mcpServers": {"fx": self.fixture_server(&["--extra-tools-file", &extra])}}),
            );
        }
        let config = self.config("search", Value::Object(toolboxes.clone()))?;
        let cache = self.dir.join("cache-search");
        let (client, _) = self.toolshelf_with(&config, Some(&cache)).await?;
        let mut tools = 0;
        for toolbox in toolboxes.keys() {
            let opened = call(&client, "open_toolbox", json!({ "toolbox": toolbox })).await?;
            let listed = opened
                .structured_content
                .as_ref()
                .and_then(|opened| opened.pointer("/servers/0/tools"))
                .and_then(Value::as_array);
            tools += listed.map_or(0, Vec::len);
        }
        close(client).await;

        let (mut loads, mut searches, mut added_kb) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..self.rounds(1, 3) {
            let (client, pid) = self.toolshelf_with(&config, Some(&cache)).await?;
            let before = private_kb(pid)?;
            let began = Instant::now();
            let first = call(
                &client,
                "open_toolbox",
                json!({"query": "warm up", "limit": 1}),
            )
            .await?;
            loads.push(began.elapsed());
            added_kb.push(private_kb(pid)?.saturating_sub(before));
            if first.is_error == Some(true) {
                bail!("search failed: {first:?}");
            }
            for query in queries.iter().take(self.rounds(20, 200)) {
                let began = Instant::now();
                let found = call(&client, "open_toolbox", json!({ "query": query })).await?;
                searches.push(began.elapsed());
                if found.is_error == Some(true) {
                    bail!("search failed: {found:?}");
                }
            }
            if !toolshelf_children(pid).is_empty() {
                bail!("a search started a child");
            }
            close(client).await;
        }
        let kb = median_kb(&mut added_kb);
        Ok(json!({
            "tools": tools,
            "load_ms": percentiles_ms(&mut loads),
            "search_us": percentiles_us(&mut searches),
            "load_rss_kb": kb,
            "rss_kb_per_1000_tools": (kb as f64 * 1000.0 / tools.max(1) as f64).round(),
        }))
    }
}

fn median_kb(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn toolshelf_children(pid: u32) -> Vec<u32> {
    let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) else {
        return Vec::new();
    };
    children
        .split_whitespace()
        .filter_map(|child| child.parse().ok())
        .collect()
}
