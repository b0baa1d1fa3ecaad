//! `toolshelf tools [TOOLBOX] [--json]`: the tools of one toolbox or of all. Servers whose tools
//! are in the persisted catalog are not started; the others start, and stop before the command
//! returns. `--json` prints what `open_toolbox` returns (an array of those for every toolbox).

use std::io::Write;

use serde_json::Value;

use super::CommandEnd;
use std::sync::Arc;

use crate::{
    config::{Config, Prestart},
    error::Context,
    meta_tools::describe,
    session::session_link::SessionLink,
    toolboxes::{Opening, Toolbox, Toolboxes},
};

/// The widest a description gets in the table.
const DESCRIPTION_WIDTH: usize = 72;

/// Lists the tools of `toolbox` (or of every toolbox) to `out`; problems go to `err`.
pub async fn tools(
    config: &Config,
    toolbox: Option<&str>,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let toolboxes = Toolboxes::new(config, Arc::new(SessionLink::default()), None);
    let chosen: Vec<&std::sync::Arc<Toolbox>> = match toolbox {
        Some(name) => match toolboxes.find(name, Context::OpenToolbox) {
            Ok(found) => vec![found],
            Err(unknown) => {
                writeln!(err, "error: {}", unknown.text())?;
                return Ok(CommandEnd::Failed);
            }
        },
        None => toolboxes.all().collect(),
    };
    let conflicts = toolboxes
        .open_all_as(&chosen, Opening::Remembered(Prestart::FirstCall))
        .await;
    let mut outcome = CommandEnd::Done;
    for conflict in conflicts {
        writeln!(err, "warning: {conflict}")?;
    }
    let mut described = Vec::new();
    for toolbox in &chosen {
        match describe(&toolboxes, toolbox) {
            Ok(result) => described.push(result.structured_content.unwrap_or(Value::Null)),
            Err(error) => {
                writeln!(err, "error: {}", error.text())?;
                outcome = CommandEnd::Failed;
            }
        }
    }
    toolboxes.shutdown().await;
    for opened in &described {
        for server in opened["servers"].as_array().into_iter().flatten() {
            if let Some(error) = server["error"].as_str() {
                writeln!(
                    err,
                    "warning: {}/{} failed: {error}",
                    opened["toolbox"].as_str().unwrap_or_default(),
                    server["name"].as_str().unwrap_or_default()
                )?;
                outcome = CommandEnd::Failed;
            }
        }
    }
    if json {
        let printed = match (toolbox, described.as_slice()) {
            (Some(_), [one]) => one.clone(),
            _ => Value::Array(described),
        };
        writeln!(out, "{printed}")?;
    } else {
        write_table(&described, out)?;
    }
    Ok(outcome)
}

/// One row per tool: toolbox, server, name, alias, tags, the first line of its description.
fn write_table(described: &[Value], out: &mut dyn Write) -> std::io::Result<()> {
    let mut rows = vec![[
        "TOOLBOX".to_owned(),
        "SERVER".to_owned(),
        "TOOL".to_owned(),
        "ALIAS".to_owned(),
        "TAGS".to_owned(),
        "DESCRIPTION".to_owned(),
    ]];
    for opened in described {
        let toolbox = opened["toolbox"].as_str().unwrap_or_default();
        for server in opened["servers"].as_array().into_iter().flatten() {
            for tool in server["tools"].as_array().into_iter().flatten() {
                let text = |key: &str| tool[key].as_str().unwrap_or_default().to_owned();
                let tags: Vec<&str> = tool["tags"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                rows.push([
                    toolbox.to_owned(),
                    server["name"].as_str().unwrap_or_default().to_owned(),
                    text("name"),
                    text("alias"),
                    tags.join(","),
                    one_line(&text("description")),
                ]);
            }
        }
    }
    super::write_table(&rows, out)
}

/// The first line of `text`, cut to `DESCRIPTION_WIDTH` characters with `…`.
pub(super) fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default().trim();
    if first.chars().count() <= DESCRIPTION_WIDTH {
        return first.to_owned();
    }
    let cut: String = first.chars().take(DESCRIPTION_WIDTH - 1).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_is_one_line_of_bounded_width() {
        assert_eq!(one_line("Reads a file.\nMore."), "Reads a file.");
        let long = "x".repeat(100);
        let cut = one_line(&long);
        assert_eq!(cut.chars().count(), DESCRIPTION_WIDTH);
        assert!(cut.ends_with('…'));
    }
}
