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
    CatalogSettings, Config, DEFAULT_CALL_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_STARTUP_TIMEOUT,
    Endpoint, HttpLimits, LocalServer, OAuthSettings, RemoteServer, RemoteTransport, ServerSpec,
    ToolFilter, ToolOverride, ToolboxSpec,
    expand::expand,
    file::{
        CatalogFile, ConfigFile, DefaultsFile, HttpFile, OAuthFile, ServerFile, ServerKind,
        ToolFiltersFile,
    },
    plain,
    variables::{ServerVariables, check_variables, expansion_problem},
};
use crate::schema_check::{SchemaCheck, Violation, ViolationKind};

static CHECK: LazyLock<SchemaCheck<ConfigFile>> = LazyLock::new(SchemaCheck::new);

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
        vec![problem(
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

pub(super) fn problem(path: String, message: String) -> Violation {
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
    let Some(boxes) = value.get("toolboxes").and_then(Value::as_object) else {
        return Config {
            toolboxes,
            http,
            catalog,
            notes: Vec::new(),
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
        check_prompt_aliases(&spec, problems);
        toolboxes.insert(name.clone(), Arc::new(spec));
    }
    Config {
        toolboxes,
        http,
        catalog,
        notes: Vec::new(),
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
        problems.push(problem(
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
                problems.push(problem(
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

/// Keys of a local server that a remote one must not have, and why.
const LOCAL_KEYS: &[(&str, &str)] = &[
    ("args", "a remote server has no arguments"),
    ("env", "a remote server gets secrets as `headers`"),
    ("cwd", "a remote server has no working directory"),
    (
        "envPassthrough",
        "a remote server gets secrets as `headers`",
    ),
    ("inheritEnv", "a remote server has no environment"),
    ("envFile", "a remote server gets secrets as `headers`"),
];

/// Headers toolshelf sets itself on every request to a remote server.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];

/// Local or remote, from `type`, `command` and `url`; every key that does not belong to the
/// kind is a problem.
fn build_endpoint(
    server: &ServerFile,
    raw: &Value,
    place: &Place,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> Endpoint {
    let (path, base_dir) = (place.path, place.base_dir);
    let placeholder = || {
        Endpoint::Local(LocalServer {
            command: String::new(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            config_dir: base_dir.to_owned(),
            env_passthrough: Vec::new(),
            inherit_env: false,
        })
    };
    let kind = match (&server.command, &server.url, server.kind) {
        (Some(_), Some(_), _) => {
            problems.push(problem(
                path.to_owned(),
                "has both `command` (a local server) and `url` (a remote one); keep the one that says how to reach this server".into(),
            ));
            return placeholder();
        }
        (None, None, kind) => {
            let wanted = match kind {
                Some(ServerKind::Stdio) => "`command` (the program to run)",
                Some(ServerKind::Http | ServerKind::Sse) => "`url` (where the server is)",
                None => "`command` (a local program to run) or `url` (a remote server's address)",
            };
            problems.push(problem(path.to_owned(), format!("has no {wanted}; add it")));
            return placeholder();
        }
        (Some(_), None, None | Some(ServerKind::Stdio)) => ServerKind::Stdio,
        (None, Some(_), None) => ServerKind::Http,
        (None, Some(_), Some(kind @ (ServerKind::Http | ServerKind::Sse))) => kind,
        (Some(_), None, Some(kind)) => {
            problems.push(problem(
                format!("{path}.type"),
                format!(
                    "is \"{}\", a remote server, but the server has a `command`; a remote server has a `url` instead, and a local one is \"stdio\" (or no `type`)",
                    kind_name(kind)
                ),
            ));
            return placeholder();
        }
        (None, Some(_), Some(ServerKind::Stdio)) => {
            problems.push(problem(
                format!("{path}.type"),
                "is \"stdio\", a local program, but the server has a `url`; a remote server is \"http\" (the default with `url`) or \"sse\"".into(),
            ));
            return placeholder();
        }
    };
    let expand_at =
        |value: &str, at: String, problems: &mut Vec<Violation>| match expand(value, lookup) {
            Ok(expanded) => Some(expanded),
            Err(error) => {
                problems.push(expansion_problem(at, error));
                None
            }
        };
    if kind == ServerKind::Stdio {
        if raw.get("headers").is_some() {
            problems.push(problem(
                format!("{path}.headers"),
                "belongs to a remote server (`url`); a local server gets secrets through `env`, so move them there".into(),
            ));
        }
        for key in ["auth", "oauth"] {
            if raw.get(key).is_some() {
                problems.push(problem(
                    format!("{path}.{key}"),
                    "belongs to a remote server (`url`): a local program is not logged in to; remove it".into(),
                ));
            }
        }
        let command_text = server.command.as_deref().unwrap_or_default();
        let command = expand_at(command_text, format!("{path}.command"), problems);
        let args = server
            .args
            .iter()
            .enumerate()
            .map(|(index, arg)| {
                expand_at(arg, format!("{path}.args[{index}]"), problems).unwrap_or_default()
            })
            .collect();
        let env = server
            .env
            .iter()
            .map(|(key, value)| {
                let value = expand_at(value, format!("{path}.env.{key}"), problems);
                (key.clone(), value.unwrap_or_default())
            })
            .collect();
        // A client starts toolshelf in a folder of its own choosing (`/` for some), so relative
        // paths start at the config file's folder: the child runs there unless `cwd` says
        // otherwise, and a relative program path (`./run.sh`, `bin/server`) is found from the
        // child's folder.
        let config_dir = std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_owned());
        let cwd = server.cwd.as_deref().map(|cwd| {
            config_dir.join(expand_at(cwd, format!("{path}.cwd"), problems).unwrap_or_default())
        });
        let command = command.map(|command| {
            let program = Path::new(&command);
            if program.is_relative() && command.contains('/') {
                let folder = cwd.as_ref().unwrap_or(&config_dir);
                folder.join(program).to_string_lossy().into_owned()
            } else {
                command
            }
        });
        if command
            .as_deref()
            .is_some_and(|command| command.trim().is_empty())
            && !command_text.is_empty()
        {
            problems.push(problem(
                format!("{path}.command"),
                "expands to an empty string; name the program to run".into(),
            ));
        }
        for (index, pattern) in server.env_passthrough.iter().enumerate() {
            if let Err(message) = check_env_pattern(pattern) {
                problems.push(problem(format!("{path}.envPassthrough[{index}]"), message));
            }
        }
        return Endpoint::Local(LocalServer {
            command: command.unwrap_or_default(),
            args,
            env,
            cwd,
            config_dir,
            env_passthrough: server.env_passthrough.clone(),
            inherit_env: server.inherit_env,
        });
    }
    for (key, why) in LOCAL_KEYS {
        if raw.get(*key).is_some() {
            problems.push(problem(
                format!("{path}.{key}"),
                format!("belongs to a local server (`command`): {why}; remove it"),
            ));
        }
    }
    let url_text = server.url.as_deref().unwrap_or_default();
    let url = expand_at(url_text, format!("{path}.url"), problems).and_then(|url| {
        check_url(&url)
            .map_err(|message| problems.push(problem(format!("{path}.url"), message)))
            .ok()
    });
    let mut headers = Vec::new();
    for (name, value) in &server.headers {
        let at = format!("{path}.headers.{name}");
        if let Err(message) = check_header_name(name) {
            problems.push(problem(at, message));
            continue;
        }
        let Some(value) = expand_at(value, at.clone(), problems) else {
            continue;
        };
        // The value is a secret: the message says what is wrong with it, never what it is.
        if reqwest::header::HeaderValue::from_str(&value).is_err() {
            problems.push(problem(
                at,
                "its value (after expansion) is not a valid HTTP header value: it has a line break or another control character; remove it (check the variable it comes from)".into(),
            ));
            continue;
        }
        headers.push((name.clone(), value));
    }
    let oauth = build_oauth(server, place, lookup, problems).map(Box::new);
    if oauth.is_some()
        && let Some((name, _)) = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    {
        problems.push(problem(
            format!("{path}.headers.{name}"),
            "would replace the token of the OAuth login (`auth`: \"oauth\"); remove this header, or `auth` if the header is the credential".into(),
        ));
    }
    let Some(url) = url else {
        return placeholder();
    };
    Endpoint::Remote(RemoteServer {
        transport: match kind {
            ServerKind::Sse => RemoteTransport::Sse,
            _ => RemoteTransport::StreamableHttp,
        },
        url,
        headers,
        oauth,
    })
}

/// Where a server is in the file, for its messages.
struct Place<'a> {
    /// `toolboxes.T.mcpServers.S`.
    path: &'a str,
    base_dir: &'a Path,
    /// `TOOLBOX/SERVER`.
    target: String,
    /// The config file, when it was read from one.
    config_file: Option<&'a Path>,
}

/// The OAuth settings of a remote server with `"auth": "oauth"`.
fn build_oauth(
    server: &ServerFile,
    place: &Place,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> Option<OAuthSettings> {
    let path = place.path;
    let settings = server.oauth.as_ref();
    if server.auth.is_none() {
        if settings.is_some() {
            problems.push(problem(
                format!("{path}.oauth"),
                "configures an OAuth login, but the server has no `\"auth\": \"oauth\"`; add it (or remove `oauth`)".into(),
            ));
        }
        return None;
    }
    let default = OAuthFile::default();
    let settings = settings.unwrap_or(&default);
    let mut expand_at = |value: &Option<String>, key: &str| {
        let value = value.as_deref()?;
        expand(value, lookup)
            .map_err(|error| problems.push(expansion_problem(format!("{path}.oauth.{key}"), error)))
            .ok()
    };
    let client_id = expand_at(&settings.client_id, "clientId");
    let client_secret = expand_at(&settings.client_secret, "clientSecret");
    let document = expand_at(&settings.client_metadata_url, "clientMetadataUrl");
    if settings.client_secret.is_some() && settings.client_id.is_none() {
        problems.push(problem(
            format!("{path}.oauth.clientSecret"),
            "is the secret of a registered client, but there is no `clientId`; add the client's id"
                .into(),
        ));
    }
    let client_metadata_url = document.and_then(|text| match reqwest::Url::parse(&text) {
            Ok(url) if url.scheme() == "https" && url.path() != "/" => Some(url),
            _ => {
                problems.push(problem(
                    format!("{path}.oauth.clientMetadataUrl"),
                    "is not an https URL with a path; write where your client ID metadata document is served, such as https://example.com/toolshelf-client.json".into(),
                ));
                None
            }
        });
    Some(OAuthSettings {
        client_id,
        client_secret,
        client_metadata_url,
        scopes: settings.scopes.clone(),
        callback_port: settings.callback_port,
        target: place.target.clone(),
        config_file: place.config_file.map(Path::to_path_buf),
    })
}

fn kind_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Stdio => "stdio",
        ServerKind::Http => "http",
        ServerKind::Sse => "sse",
    }
}

/// An http(s) URL with a host. The message never repeats the URL, which may hold a key.
fn check_url(text: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(text.trim()).map_err(|error| {
        format!(
            "is not a URL ({error}); write the server's full address, such as https://mcp.example.com/mcp"
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "uses the scheme '{}'; a remote server's URL starts with https:// (or http://)",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(
            "has no host; write the server's full address, such as https://mcp.example.com/mcp"
                .into(),
        );
    }
    Ok(url)
}

fn check_header_name(name: &str) -> Result<(), String> {
    if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!(
            "'{name}' is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~, no spaces or ':'); fix the name"
        ));
    }
    if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "'{name}' is set by toolshelf on every request (it belongs to the transport); remove it"
        ));
    }
    Ok(())
}

/// A prompt alias used twice in one server, or equal to another overridden prompt's name: a
/// problem at each later one (prompts are named per server, so servers do not clash).
fn check_prompt_aliases(toolbox: &ToolboxSpec, problems: &mut Vec<Violation>) {
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
                problems.push(problem(
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
fn check_aliases(toolbox: &ToolboxSpec, problems: &mut Vec<Violation>) {
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
fn used_twice<'a>(
    seen: &mut Vec<(&'a str, String)>,
    alias: &'a str,
    path: String,
    rule: &str,
) -> Option<Violation> {
    match seen.iter().find(|(other, _)| *other == alias) {
        Some((_, first)) => Some(problem(
            path,
            format!("alias '{alias}' is already used at {first}; {rule}, so change one of them"),
        )),
        None => {
            seen.push((alias, path));
            None
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
