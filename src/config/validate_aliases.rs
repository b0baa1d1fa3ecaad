//! Aliases of one toolbox, checked: no alias used twice, none equal to a name it would hide.

use super::ToolboxSpec;
use crate::schema_check::Violation;

/// A prompt alias used twice in one server, or equal to another overridden prompt's name: a
/// problem at each later one (prompts are named per server, so servers do not clash).
pub(super) fn check_prompt_aliases(toolbox: &ToolboxSpec, problems: &mut Vec<Violation>) {
    for server in &toolbox.servers {
        let mut seen = Vec::new();
        for (prompt, change) in &server.prompts {
            let Some(alias) = change.alias.as_deref() else {
                continue;
            };
            let path = format!(
                "toolboxes.{}.mcpServers.{}.prompts.{prompt}.alias",
                toolbox.name, server.name
            );
            if server.prompts.contains_key(alias) {
                problems.push(Violation::other(
                    path,
                    format!(
                        "alias '{alias}' is the name of another prompt of this server; choose an alias no prompt has"
                    ),
                ));
                continue;
            }
            problems.extend(used_twice(
                &mut seen,
                alias,
                path,
                "prompt aliases must differ within a server",
            ));
        }
    }
}

/// Two equal aliases in one toolbox: a problem at each later one, naming the first.
pub(super) fn check_aliases(toolbox: &ToolboxSpec, problems: &mut Vec<Violation>) {
    let mut seen = Vec::new();
    for server in &toolbox.servers {
        for (tool, change) in &server.tools {
            let Some(alias) = change.alias.as_deref() else {
                continue;
            };
            let path = format!(
                "toolboxes.{}.mcpServers.{}.tools.{tool}.alias",
                toolbox.name, server.name
            );
            problems.extend(used_twice(
                &mut seen,
                alias,
                path,
                "aliases must differ within a toolbox",
            ));
        }
    }
}

/// Records `alias` at `path` in `seen`, or gives the problem of its second use, naming the
/// first; `rule` says where aliases must differ.
pub(super) fn used_twice<'a>(
    seen: &mut Vec<(&'a str, String)>,
    alias: &'a str,
    path: String,
    rule: &str,
) -> Option<Violation> {
    match seen.iter().find(|(other, _)| *other == alias) {
        Some((_, first)) => Some(Violation::other(
            path,
            format!("alias '{alias}' is already used at {first}; {rule}, so change one of them"),
        )),
        None => {
            seen.push((alias, path));
            None
        }
    }
}
