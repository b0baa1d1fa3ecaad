//! From typed file to `Config`: shape first (JSON Schema), then meaning (variables, empty
//! lists, durations). Problems are collected, never returned one at a time.

use std::{
    path::Path,
    sync::{Arc, LazyLock},
    time::Duration,
};

use indexmap::IndexMap;

use super::{
    Config, DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, ServerSpec, ToolFilter, ToolboxSpec,
    expand::expand,
    file::{ConfigFile, ServerFile, ToolFiltersFile},
};
use crate::schema_check::{SchemaCheck, Violation, ViolationKind};

static CHECK: LazyLock<SchemaCheck<ConfigFile>> = LazyLock::new(SchemaCheck::new);

pub(super) fn parse(
    text: &str,
    base_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, Vec<Violation>> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|error| {
        vec![problem(
            String::new(),
            format!(
                "not valid JSON: {error}; fix the syntax at that line and column (a trailing comma or a missing quote is the usual cause)"
            ),
        )]
    })?;
    let file = CHECK.check(value)?;
    let mut problems = Vec::new();
    let config = build(file, base_dir, lookup, &mut problems);
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(problems)
    }
}

fn problem(path: String, message: String) -> Violation {
    Violation {
        path,
        message,
        kind: ViolationKind::Other,
    }
}

fn build(
    file: ConfigFile,
    base_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> Config {
    if file.toolboxes.is_empty() {
        problems.push(problem(
            "toolboxes".into(),
            "no toolbox is configured; add one, e.g. \"toolboxes\": {\"files\": {\"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]}}}}".into(),
        ));
    }
    let mut toolboxes = IndexMap::new();
    for (name, toolbox) in file.toolboxes {
        let path = format!("toolboxes.{name}");
        if toolbox.mcp_servers.is_empty() {
            problems.push(problem(
                format!("{path}.mcpServers"),
                "no server is configured; add at least one, or remove the toolbox".into(),
            ));
        }
        let servers = toolbox
            .mcp_servers
            .into_iter()
            .map(|(server_name, server)| {
                let server_path = format!("{path}.mcpServers.{server_name}");
                Arc::new(build_server(
                    server_name,
                    server,
                    &server_path,
                    base_dir,
                    lookup,
                    problems,
                ))
            })
            .collect();
        let spec = ToolboxSpec {
            name: name.clone(),
            description: toolbox.description.unwrap_or_default(),
            servers,
        };
        toolboxes.insert(name, Arc::new(spec));
    }
    Config { toolboxes }
}

fn build_server(
    name: String,
    server: ServerFile,
    path: &str,
    base_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> ServerSpec {
    let mut expand_at = |value: &str, at: String| match expand(value, lookup) {
        Ok(expanded) => expanded,
        Err(error) => {
            problems.push(problem(at, error.to_string()));
            String::new()
        }
    };
    let command = expand_at(&server.command, format!("{path}.command"));
    let args = server
        .args
        .iter()
        .enumerate()
        .map(|(index, arg)| expand_at(arg, format!("{path}.args[{index}]")))
        .collect();
    let env = server
        .env
        .iter()
        .map(|(key, value)| (key.clone(), expand_at(value, format!("{path}.env.{key}"))))
        .collect();
    let cwd = server
        .cwd
        .as_deref()
        .map(|cwd| base_dir.join(expand_at(cwd, format!("{path}.cwd"))));
    if command.trim().is_empty() && !server.command.is_empty() {
        problems.push(problem(
            format!("{path}.command"),
            "expands to an empty string; name the program to run".into(),
        ));
    }
    let tool_filter = match server.tool_filters {
        None | Some(ToolFiltersFile::All(_)) => ToolFilter::All,
        Some(ToolFiltersFile::Names(names)) if names.iter().any(|name| name == "*") => {
            ToolFilter::All
        }
        Some(ToolFiltersFile::Names(names)) => {
            if names.is_empty() {
                problems.push(problem(
                    format!("{path}.toolFilters"),
                    "an empty list keeps no tool; list tool names, or write \"*\" to keep all"
                        .into(),
                ));
            }
            ToolFilter::Only(names)
        }
    };
    let mut seconds = |value: Option<f64>, key: &str, default: Duration| match value {
        None => default,
        Some(value) => Duration::try_from_secs_f64(value).unwrap_or_else(|_| {
            problems.push(problem(
                format!("{path}.{key}"),
                "is not a usable number of seconds; use a positive number such as 30".into(),
            ));
            default
        }),
    };
    let startup_timeout = seconds(
        server.startup_timeout,
        "startupTimeout",
        DEFAULT_STARTUP_TIMEOUT,
    );
    let call_timeout = seconds(server.call_timeout, "callTimeout", DEFAULT_CALL_TIMEOUT);
    ServerSpec {
        name,
        command,
        args,
        env,
        cwd,
        tool_filter,
        startup_timeout,
        call_timeout,
    }
}
