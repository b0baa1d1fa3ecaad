//! From text to `Config`: the shape is checked against the file's JSON Schema, then the meaning
//! (variables, empty lists, durations) of every part whose shape is right. Problems are all
//! collected and sorted by path, never returned one at a time.

use std::{
    path::Path,
    sync::{Arc, LazyLock},
    time::Duration,
};

use indexmap::IndexMap;

use serde::Deserialize;
use serde_json::Value;

use super::{
    Config, DEFAULT_CALL_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, ServerSpec,
    ToolFilter, ToolOverride, ToolboxSpec,
    expand::expand,
    file::{ConfigFile, DefaultsFile, ServerFile, ToolFiltersFile},
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
    let mut problems = CHECK.violations(&value);
    // Meaning is checked wherever the shape is right, so one run reports everything.
    let config = build(&value, base_dir, lookup, &mut problems);
    if problems.is_empty() {
        Ok(config)
    } else {
        problems.sort_by(|a, b| a.path.cmp(&b.path));
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

/// True when no problem so far lies at or under `path`.
fn shape_ok(problems: &[Violation], path: &str) -> bool {
    !problems.iter().any(|problem| {
        problem.path == path
            || problem.path.starts_with(&format!("{path}."))
            || problem.path.starts_with(&format!("{path}["))
    })
}

fn build(
    value: &Value,
    base_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> Config {
    let mut toolboxes = IndexMap::new();
    let defaults = match value.get("defaults") {
        Some(defaults) if shape_ok(problems, "defaults") => {
            DefaultsFile::deserialize(defaults).unwrap_or_default()
        }
        _ => DefaultsFile::default(),
    };
    let Some(boxes) = value.get("toolboxes").and_then(Value::as_object) else {
        return Config { toolboxes };
    };
    for (name, toolbox) in boxes {
        let path = format!("toolboxes.{name}");
        let Some(servers) = toolbox.get("mcpServers").and_then(Value::as_object) else {
            continue;
        };
        let mut specs = Vec::new();
        for (server_name, server) in servers {
            let server_path = format!("{path}.mcpServers.{server_name}");
            if !shape_ok(problems, &server_path) {
                // Its variables are still checked, so one run reports every problem.
                check_variables(server, &server_path, lookup, problems);
                continue;
            }
            match ServerFile::deserialize(server) {
                Ok(file) => specs.push(Arc::new(build_server(
                    server_name.clone(),
                    file,
                    &defaults,
                    &server_path,
                    base_dir,
                    lookup,
                    problems,
                ))),
                Err(error) => problems.push(problem(server_path, error.to_string())),
            }
        }
        let description = toolbox
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let spec = ToolboxSpec {
            name: name.clone(),
            description,
            servers: specs,
        };
        check_aliases(&spec, problems);
        toolboxes.insert(name.clone(), Arc::new(spec));
    }
    Config { toolboxes }
}

/// Reports the unset variables of a server whose shape is wrong elsewhere: in whichever of
/// `command`, `args`, `env` and `cwd` are strings where strings belong.
fn check_variables(
    server: &Value,
    path: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) {
    let mut found = Vec::new();
    let mut check = |value: &Value, at: String| {
        if let Some(text) = value.as_str()
            && let Err(error) = expand(text, lookup)
        {
            found.push(problem(at, error.to_string()));
        }
    };
    for key in ["command", "cwd"] {
        if let Some(value) = server.get(key) {
            check(value, format!("{path}.{key}"));
        }
    }
    for (index, arg) in server
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        check(arg, format!("{path}.args[{index}]"));
    }
    for (key, value) in server
        .get("env")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        check(value, format!("{path}.env.{key}"));
    }
    problems.extend(found);
}

fn build_server(
    name: String,
    server: ServerFile,
    defaults: &DefaultsFile,
    path: &str,
    base_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> ServerSpec {
    let mut command_expanded = true;
    let mut expand_at = |value: &str, at: String| match expand(value, lookup) {
        Ok(expanded) => expanded,
        Err(error) => {
            if at.ends_with(".command") {
                command_expanded = false;
            }
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
    if command_expanded && command.trim().is_empty() && !server.command.is_empty() {
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
    for (index, pattern) in server.env_passthrough.iter().enumerate() {
        if let Err(message) = check_env_pattern(pattern) {
            problems.push(problem(format!("{path}.envPassthrough[{index}]"), message));
        }
    }
    // The server's own value wins over `defaults`, which wins over the built-in default.
    let mut seconds = |own: Option<f64>, shared: Option<f64>, key: &str, default: Duration| {
        let at = if own.is_some() {
            format!("{path}.{key}")
        } else {
            format!("defaults.{key}")
        };
        match own.or(shared) {
            None => default,
            Some(value) => Duration::try_from_secs_f64(value).unwrap_or_else(|_| {
                problems.push(problem(
                    at,
                    "is not a usable number of seconds; use a positive number such as 30".into(),
                ));
                default
            }),
        }
    };
    let startup_timeout = seconds(
        server.startup_timeout,
        defaults.startup_timeout,
        "startupTimeout",
        DEFAULT_STARTUP_TIMEOUT,
    );
    let call_timeout = seconds(
        server.call_timeout,
        defaults.call_timeout,
        "callTimeout",
        DEFAULT_CALL_TIMEOUT,
    );
    let idle_timeout = seconds(
        server.idle_timeout,
        defaults.idle_timeout,
        "idleTimeout",
        DEFAULT_IDLE_TIMEOUT,
    );
    ServerSpec {
        name,
        command,
        args,
        env,
        cwd,
        tool_filter,
        startup_timeout,
        call_timeout,
        idle_timeout: (!idle_timeout.is_zero()).then_some(idle_timeout),
        env_passthrough: server.env_passthrough,
        inherit_env: server.inherit_env,
        tags: server.tags,
        tools: server
            .tools
            .into_iter()
            .map(|(name, tool)| {
                let tool = ToolOverride {
                    alias: tool.alias,
                    description: tool.description,
                    title: tool.title,
                    tags: tool.tags,
                    hidden: tool.hidden,
                };
                (name, tool)
            })
            .collect(),
    }
}

/// Two equal aliases in one toolbox: a problem at each later one, naming the first.
fn check_aliases(toolbox: &ToolboxSpec, problems: &mut Vec<Violation>) {
    let mut seen: Vec<(&str, String)> = Vec::new();
    for server in &toolbox.servers {
        for (tool, change) in &server.tools {
            let Some(alias) = change.alias.as_deref() else {
                continue;
            };
            let path = format!(
                "toolboxes.{}.mcpServers.{}.tools.{tool}.alias",
                toolbox.name, server.name
            );
            match seen.iter().find(|(other, _)| *other == alias) {
                Some((_, first)) => problems.push(problem(
                    path,
                    format!(
                        "alias '{alias}' is already used at {first}; aliases must differ within a toolbox, so change one of them"
                    ),
                )),
                None => seen.push((alias, path)),
            }
        }
    }
}

/// `NAME` or `PREFIX*`, with letters, digits and `_`.
fn check_env_pattern(pattern: &str) -> Result<(), String> {
    let stem = pattern.strip_suffix('*').unwrap_or(pattern);
    if stem.is_empty() {
        return Err("matches every variable; write \"inheritEnv\": true instead".into());
    }
    if stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(format!(
            "'{pattern}' is not a variable name or PREFIX* pattern (letters, digits and '_', with an optional trailing '*')"
        ))
    }
}
