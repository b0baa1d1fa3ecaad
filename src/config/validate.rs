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
    CatalogSettings, CodeFile, Config, DEFAULT_CALL_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_STARTUP_TIMEOUT, Endpoint, HttpLimits, SearchSettings, ServerSpec, ToolFilter,
    ToolOverride, ToolboxSpec,
    file::{CatalogFile, DefaultsFile, HttpFile, SearchFile, ServerFile, ToolFiltersFile},
    plain,
    policy::Policy,
    variables::{ServerVariables, check_variables},
};
use super::{
    validate_aliases::{check_aliases, check_prompt_aliases},
    validate_endpoint::{Place, build_endpoint},
};
use crate::schema_check::{CheckOnce, Violation};

/// The config's schema as it is checked: what `toolshelf schema` prints, without its
/// annotations and `$schema`, on one line, kept in the binary. Deriving the schema from the
/// types (schemars) was a fifth of start-up's instructions, and building the whole of it as a
/// `Value` a third (descriptions are four fifths of its text); of this text only the parts a
/// config has are built (`CheckOnce`). The whole schema is derived only for a config with
/// problems, whose descriptions word some messages. A unit test fails when this file differs
/// from what the types derive.
const CHECKED_SCHEMA: &str = include_str!("checked_schema.json");

static CHECK: LazyLock<CheckOnce> =
    LazyLock::new(|| CheckOnce::new(CHECKED_SCHEMA, super::json_schema));

/// `file` is the config's own path, named in the `toolshelf login` command of messages.
pub(super) fn parse(
    text: &str,
    base_dir: &Path,
    file: Option<&Path>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, Vec<Violation>> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|error| {
        let (line, column) = (error.line(), error.column());
        let said = error.to_string();
        let what = said
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(&said);
        vec![Violation::other(
            format!("line {line}, column {column}"),
            format!(
                "not valid JSON: {what}; fix the syntax there (a trailing comma or a missing quote is the usual cause)"
            ),
        )]
    })?;
    let (value, plain, mut notes, mut own_problems) = if plain::is_plain(&value) {
        let (mut notes, mut problems) = (Vec::new(), Vec::new());
        let converted = plain::as_toolboxes(&value, &mut notes, &mut problems);
        (converted, true, notes, problems)
    } else {
        (value, false, Vec::new(), Vec::new())
    };
    let mut problems = CHECK.violations(&value);
    // Meaning is checked wherever the shape is right, so one run reports everything.
    let mut config = build(&value, base_dir, file, lookup, &mut problems);
    if plain {
        for problem in &mut problems {
            problem.path = plain::plain_path(&problem.path);
        }
    }
    problems.append(&mut own_problems);
    if problems.is_empty() {
        config.notes.append(&mut notes);
        Ok(config)
    } else {
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        Err(problems)
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
    file: Option<&Path>,
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
    let http = http_limits(value, problems);
    let catalog = match value.get("catalog") {
        Some(catalog) if shape_ok(problems, "catalog") => {
            let file = CatalogFile::deserialize(catalog).unwrap_or_default();
            let defaults = CatalogSettings::default();
            CatalogSettings {
                cache: file.cache.unwrap_or(defaults.cache),
                prestart: file.prestart.unwrap_or(defaults.prestart),
            }
        }
        _ => CatalogSettings::default(),
    };
    let search = match value.get("search") {
        Some(search) if shape_ok(problems, "search") => SearchSettings {
            meaning: SearchFile::deserialize(search)
                .ok()
                .and_then(|file| file.meaning)
                .unwrap_or(true),
        },
        _ => SearchSettings::default(),
    };
    let code = match value.get("code") {
        Some(code) if shape_ok(problems, "code") => CodeFile::deserialize(code).unwrap_or_default(),
        _ => CodeFile::default(),
    }
    .settings(|value, key, default| seconds_or(value, format!("code.{key}"), default, problems));
    let Some(boxes) = value.get("toolboxes").and_then(Value::as_object) else {
        return Config {
            toolboxes,
            http,
            catalog,
            search,
            code,
            notes: Vec::new(),
            policy: None,
            withheld: Arc::default(),
        };
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
            let place = Place {
                path: &server_path,
                base_dir,
                config_file: file,
                target: format!("{name}/{server_name}"),
            };
            match ServerFile::deserialize(server) {
                Ok(file) => specs.push(Arc::new(build_server(
                    server_name.clone(),
                    file,
                    server,
                    &defaults,
                    &place,
                    lookup,
                    problems,
                ))),
                Err(error) => problems.push(Violation::other(server_path, error.to_string())),
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
        check_prompt_aliases(&spec, problems);
        toolboxes.insert(name.clone(), Arc::new(spec));
    }
    Config {
        toolboxes,
        http,
        catalog,
        search,
        code,
        notes: Vec::new(),
        policy: Policy::read(value, problems).map(Arc::new),
        withheld: Arc::default(),
    }
}

/// `value` seconds as a duration, `default` when it is absent; one that is not a duration
/// (too large) is a problem at `at`.
fn seconds_or(
    value: Option<f64>,
    at: String,
    default: Duration,
    problems: &mut Vec<Violation>,
) -> Duration {
    let Some(value) = value else { return default };
    Duration::try_from_secs_f64(value).unwrap_or_else(|_| {
        problems.push(Violation::other(
            at,
            "is not a usable number of seconds; use a positive number such as 30".into(),
        ));
        default
    })
}

/// The `http` section's limits, each falling back to its default.
fn http_limits(value: &Value, problems: &mut Vec<Violation>) -> HttpLimits {
    let file = match value.get("http") {
        Some(http) if shape_ok(problems, "http") => HttpFile::deserialize(http).unwrap_or_default(),
        _ => HttpFile::default(),
    };
    let defaults = HttpLimits::default();
    let count = |value: Option<u32>, default: usize| value.map_or(default, |value| value as usize);
    let session_idle_timeout = seconds_or(
        file.session_idle_timeout,
        "http.sessionIdleTimeout".into(),
        defaults.session_idle_timeout,
        problems,
    );
    let header_read_timeout = seconds_or(
        file.header_read_timeout,
        "http.headerReadTimeout".into(),
        defaults.header_read_timeout,
        problems,
    );
    let connection_idle_timeout = seconds_or(
        file.connection_idle_timeout,
        "http.connectionIdleTimeout".into(),
        defaults.connection_idle_timeout,
        problems,
    );
    HttpLimits {
        header_read_timeout,
        connection_idle_timeout,
        max_sessions: count(file.max_sessions, defaults.max_sessions),
        max_calls_per_session: count(file.max_calls_per_session, defaults.max_calls_per_session),
        session_idle_timeout,
        max_body_bytes: file
            .max_body_bytes
            .map_or(defaults.max_body_bytes, |bytes| {
                usize::try_from(bytes).unwrap_or(usize::MAX)
            }),
    }
}

fn build_server(
    name: String,
    server: ServerFile,
    raw: &Value,
    defaults: &DefaultsFile,
    place: &Place,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> ServerSpec {
    let path = place.path;
    let first_problem = problems.len();
    let variables = ServerVariables::read(
        server.env_file.as_deref(),
        place.base_dir,
        path,
        lookup,
        problems,
    );
    let server_lookup = |name: &str| variables.lookup(name, lookup);
    let mut endpoint = build_endpoint(&server, raw, place, &server_lookup, problems);
    if let Endpoint::Local(local) = &mut endpoint {
        variables.add_to(&mut local.env);
    }
    let unavailable = variables.unavailable(problems, first_problem, path);
    let tool_filter = match server.tool_filters {
        None | Some(ToolFiltersFile::All(_)) => ToolFilter::All,
        Some(ToolFiltersFile::Names(names)) if names.iter().any(|name| name == "*") => {
            ToolFilter::All
        }
        Some(ToolFiltersFile::Names(names)) => {
            if names.is_empty() {
                problems.push(Violation::other(
                    format!("{path}.toolFilters"),
                    "an empty list keeps no tool; list tool names, or write \"*\" to keep all"
                        .into(),
                ));
            }
            ToolFilter::Only(names)
        }
    };
    // The server's own value wins over `defaults`, which wins over the built-in default.
    let mut seconds = |own: Option<f64>, shared: Option<f64>, key: &str, default: Duration| {
        let at = if own.is_some() {
            format!("{path}.{key}")
        } else {
            format!("defaults.{key}")
        };
        seconds_or(own.or(shared), at, default, problems)
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
        endpoint,
        tool_filter,
        startup_timeout,
        call_timeout,
        idle_timeout: (!idle_timeout.is_zero()).then_some(idle_timeout),
        tags: server.tags,
        sharing: server.sharing.unwrap_or_default(),
        tools: overrides(server.tools),
        prompts: overrides(server.prompts),
        unavailable,
    }
}

fn overrides(
    given: IndexMap<String, super::file::ToolOverrideFile>,
) -> IndexMap<String, ToolOverride> {
    given
        .into_iter()
        .map(|(name, change)| {
            let change = ToolOverride {
                alias: change.alias,
                description: change.description,
                title: change.title,
                tags: change.tags,
                hidden: change.hidden,
            };
            (name, change)
        })
        .collect()
}

#[cfg(test)]
mod schema_file_tests {
    use std::path::Path;

    /// The config's schema as checked, derived from the types.
    fn checked_schema() -> serde_json::Value {
        let mut schema = crate::schema_check::without_annotations(&super::super::json_schema());
        if let Some(schema) = schema.as_object_mut() {
            // Checked as draft 7 (`schema_check`), which this key would contradict.
            schema.shift_remove("$schema");
        }
        schema
    }

    /// The schema kept in the binary is what the types derive. If this fails, a type of the
    /// config changed: `TOOLSHELF_WRITE_SCHEMA=1 cargo test --lib schema_file_tests` writes
    /// the file anew.
    #[test]
    fn the_kept_schema_is_what_the_types_derive() {
        let derived = checked_schema();
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config/checked_schema.json");
        if std::env::var_os("TOOLSHELF_WRITE_SCHEMA").is_some() {
            // One line: start-up scans it, and indentation was two thirds of the pretty form.
            let text = serde_json::to_string(&derived).expect("JSON") + "\n";
            std::fs::write(&file, text).expect("the schema file written");
            // The binary under test holds the file as it was; the next build checks the new one.
            return;
        }
        let kept: serde_json::Value = serde_json::from_str(super::CHECKED_SCHEMA).expect("JSON");
        assert!(
            kept == derived,
            "src/config/checked_schema.json is out of date: run `TOOLSHELF_WRITE_SCHEMA=1 cargo test --lib schema_file_tests`"
        );
    }
}
