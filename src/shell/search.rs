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
    note_unlisted(&catalog, err)?;
    Ok(CommandEnd::Done)
}

/// Runs every query of the JSON-lines file at `file` and prints how well search found what each
/// expects: hit@1, hit@3, hit@5 and MRR@10, then the misses.
pub fn evaluate(
    config: &Config,
    file: &std::path::Path,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let cases = match read_cases(file) {
        Ok(cases) => cases,
        Err(message) => {
            writeln!(err, "error: {message}")?;
            return Ok(CommandEnd::Usage);
        }
    };
    let catalog = search::remembered(config);
    let evaluation = search::evaluate(&catalog.index, &cases);
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&evaluation).map_err(std::io::Error::other)?
        )?;
    } else {
        let row = |ranking: &str, figures: &search::Figures| {
            [
                ranking.to_owned(),
                figures.queries.to_string(),
                format!("{:.3}", figures.hit_1),
                format!("{:.3}", figures.hit_3),
                format!("{:.3}", figures.hit_5),
                format!("{:.3}", figures.mrr_10),
            ]
        };
        let mut rows =
            vec![["ranking", "queries", "hit@1", "hit@3", "hit@5", "MRR@10"].map(str::to_owned)];
        match &evaluation.words_only {
            Some(words) => {
                rows.push(row("words and meaning", &evaluation.figures));
                rows.push(row("words only", words));
            }
            None => rows.push(row("words only", &evaluation.figures)),
        }
        write_table(&rows, out)?;
        if !evaluation.misses.is_empty() {
            writeln!(out, "not in the first 5:")?;
        }
        for miss in &evaluation.misses {
            let expected: Vec<String> = miss
                .expected
                .iter()
                .map(|e| format!("{}/{}/{}", e.toolbox, e.server, e.name))
                .collect();
            let rank = match (miss.rank, miss.not_in_catalog.len() == miss.expected.len()) {
                (Some(rank), _) => format!("ranked {rank}"),
                (None, true) => "not in the remembered catalog".to_owned(),
                (None, false) => "not in the first 10".to_owned(),
            };
            writeln!(
                out,
                "  {:?}: expected {} ({rank}); first: {}",
                miss.query,
                expected.join(" or "),
                miss.found.join(", ")
            )?;
        }
    }
    note_unlisted(&catalog, err)?;
    Ok(CommandEnd::Done)
}

/// The cases of an evaluation file: one JSON object a line, blank lines skipped.
fn read_cases(file: &std::path::Path) -> Result<Vec<search::Case>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
    let mut cases = Vec::new();
    for (at, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: search::Case = serde_json::from_str(line).map_err(|error| {
            format!(
                "{} line {}: {error}; each line is {{\"query\": \"…\", \"expected\": [{{\"toolbox\": …, \"server\": …, \"name\": …}}]}}",
                file.display(),
                at + 1
            )
        })?;
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(format!("{} holds no query", file.display()));
    }
    Ok(cases)
}

/// Names the toolboxes search could not see, with the fix.
fn note_unlisted(catalog: &search::Catalog, err: &mut dyn Write) -> std::io::Result<()> {
    if catalog.unlisted.is_empty() {
        return Ok(());
    }
    writeln!(
        err,
        "not searched, never listed: {} (`toolshelf check` lists every server's tools once)",
        catalog.unlisted.join(", ")
    )
}
