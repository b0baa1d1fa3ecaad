//! `toolshelf search QUERY [--limit N] [--json]`: the tools that best match what the query
//! describes, best first, from the persisted catalog, without starting a server.

use std::io::Write;

use serde_json::json;

use super::{CommandEnd, tools::one_line, write_table};
use crate::{config::Config, search};

/// Searches `config`'s remembered tools for `query`; the matches go to `out`, notes to `err`.
pub fn search(
    config: &Config,
    query: &str,
    limit: usize,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    if query.trim().is_empty() {
        writeln!(
            err,
            "error: the query is empty; say what the tool should do, e.g. `toolshelf search \"read a file\"`"
        )?;
        return Ok(CommandEnd::Usage);
    }
    let catalog = search::remembered(config);
    let found = catalog.index.search(query, limit);
    if json {
        let array: Vec<_> = found
            .iter()
            .map(|found| {
                let entry = found.entry;
                json!({
                    "toolbox": entry.toolbox,
                    "server": entry.server,
                    "name": entry.name,
                    "score": (f64::from(found.score) * 1000.0).round() / 1000.0,
                    "description": entry.description,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::Value::Array(array))?;
    } else if !found.is_empty() {
        let mut rows =
            vec![["SCORE", "TOOLBOX", "SERVER", "TOOL", "DESCRIPTION"].map(str::to_owned)];
        rows.extend(found.iter().map(|found| {
            let entry = found.entry;
            [
                format!("{:.2}", found.score),
                entry.toolbox.clone(),
                entry.server.clone(),
                entry.name.clone(),
                one_line(&entry.description),
            ]
        }));
        write_table(&rows, out)?;
    } else {
        writeln!(
            err,
            "no tool matches {query:?} among the {} remembered",
            catalog.index.len()
        )?;
    }
    if !catalog.unlisted.is_empty() {
        writeln!(
            err,
            "not searched, never listed: {} (`toolshelf check` lists every server's tools once)",
            catalog.unlisted.join(", ")
        )?;
    }
    Ok(CommandEnd::Done)
}
