//! `toolshelf check`: opens every toolbox of a valid config and prints one row per server, then
//! what the scan of the tools' texts found.

use std::{io::Write, time::Duration};

use futures::future::join_all;

use std::sync::Arc;

use crate::{
    catalog::poisoning,
    config::Config,
    session::session_link::SessionLink,
    toolboxes::{Opening, ServerState, Toolboxes},
};

/// Opens everything, prints the table to `out`, stops every child. True when all servers are
/// ready. Every server starts, so each one's entry in the persisted catalog is refreshed.
pub async fn check(config: &Config, out: &mut dyn Write) -> std::io::Result<bool> {
    let toolboxes = &Toolboxes::new(config, Arc::new(SessionLink::default()), None);
    let servers = toolboxes
        .all()
        .flat_map(|toolbox| {
            toolbox.servers.iter().map(|slot| {
                (
                    format!("{}/{}", toolbox.spec.name, slot.spec.name),
                    slot.clone(),
                )
            })
        })
        .collect();
    let shown = crate::shell::StartsShown::start(servers);
    let opened = join_all(toolboxes.all().map(|toolbox| async move {
        let conflicts = match toolboxes.open_as(toolbox, Opening::Live).await {
            Ok(()) => Vec::new(),
            Err(conflicts) => conflicts,
        };
        (toolbox.warnings(), conflicts)
    }))
    .await;
    if let Some(shown) = shown {
        shown.finish();
    }

    let mut rows = vec![[
        "TOOLBOX".to_owned(),
        "SERVER".to_owned(),
        "STATUS".to_owned(),
        "TOOLS".to_owned(),
        "STARTUP".to_owned(),
    ]];
    let mut failures = Vec::new();
    for toolbox in toolboxes.all() {
        for slot in &toolbox.servers {
            let (status, tools, startup) = match slot.state() {
                ServerState::Ready(child) => (
                    "ready",
                    slot.catalog.tools().len().to_string(),
                    millis(child.startup),
                ),
                ServerState::Failed(reason) => {
                    failures.push(format!(
                        "{}/{}: {reason}",
                        toolbox.spec.name, slot.spec.name
                    ));
                    ("failed", "-".into(), "-".into())
                }
                ServerState::NotStarted | ServerState::Idle => ("failed", "-".into(), "-".into()),
            };
            rows.push([
                toolbox.spec.name.clone(),
                slot.spec.name.clone(),
                status.to_owned(),
                tools,
                startup,
            ]);
        }
    }
    crate::shell::write_table(&rows, out)?;
    for failure in &failures {
        writeln!(out, "\nfailed: {failure}")?;
    }
    let mut conflicted = false;
    for (warnings, conflicts) in &opened {
        for warning in warnings {
            writeln!(out, "\nwarning: {warning}")?;
        }
        for conflict in conflicts {
            conflicted = true;
            writeln!(out, "\nconflict: {conflict}")?;
        }
    }
    write_findings(toolboxes, out)?;
    toolboxes.shutdown().await;
    Ok(failures.is_empty() && !conflicted)
}

/// What the scan of each listed tool's texts found (`catalog::poisoning`), a line per finding,
/// and what to do. Findings do not fail the check: they are for a person to read.
fn write_findings(toolboxes: &Toolboxes, out: &mut dyn Write) -> std::io::Result<()> {
    let mut lines = Vec::new();
    for toolbox in toolboxes.all() {
        for slot in &toolbox.servers {
            for tool in slot.catalog.tools().iter() {
                for finding in poisoning::scan(tool) {
                    let (toolbox, server) = (&toolbox.spec.name, &slot.spec.name);
                    lines.push(format!("  {toolbox}/{server}/{}: {finding}", tool.name()));
                }
            }
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nsuspicious tool texts: a model reads them as instructions the user does not see"
    )?;
    for line in &lines {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "read each tool whole (`toolshelf tools TOOLBOX --json`); unless you trust its server, hide the tool (\"tools\": {{\"NAME\": {{\"hidden\": true}}}} in the server's config) or remove the server (`toolshelf remove`)"
    )
}

fn millis(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}
