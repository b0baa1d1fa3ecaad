//! How a server is reached, checked: a local command or a remote URL (with its headers, OAuth
//! settings and transport), never keys of the other kind.

use std::path::Path;

use serde_json::Value;

use super::{
    Endpoint, LocalServer, OAuthSettings, RemoteServer, RemoteTransport,
    expand::expand,
    file::{OAuthFile, ServerFile, ServerKind},
    variables::expansion_problem,
};
use crate::schema_check::Violation;

/// Keys of a local server that a remote one must not have, and why.
pub(super) const LOCAL_KEYS: &[(&str, &str)] = &[
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
pub(super) const RESERVED_HEADERS: &[&str] = &[
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
pub(super) fn build_endpoint(
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
            problems.push(Violation::other(
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
            problems.push(Violation::other(
                path.to_owned(),
                format!("has no {wanted}; add it"),
            ));
            return placeholder();
        }
        (Some(_), None, None | Some(ServerKind::Stdio)) => ServerKind::Stdio,
        (None, Some(_), None) => ServerKind::Http,
        (None, Some(_), Some(kind @ (ServerKind::Http | ServerKind::Sse))) => kind,
        (Some(_), None, Some(kind)) => {
            problems.push(Violation::other(
                format!("{path}.type"),
                format!(
                    "is \"{}\", a remote server, but the server has a `command`; a remote server has a `url` instead, and a local one is \"stdio\" (or no `type`)",
                    kind_name(kind)
                ),
            ));
            return placeholder();
        }
        (None, Some(_), Some(ServerKind::Stdio)) => {
            problems.push(Violation::other(
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
            problems.push(Violation::other(
                format!("{path}.headers"),
                "belongs to a remote server (`url`); a local server gets secrets through `env`, so move them there".into(),
            ));
        }
        for key in ["auth", "oauth"] {
            if raw.get(key).is_some() {
                problems.push(Violation::other(
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
            problems.push(Violation::other(
                format!("{path}.command"),
                "expands to an empty string; name the program to run".into(),
            ));
        }
        for (index, pattern) in server.env_passthrough.iter().enumerate() {
            if let Err(message) = check_env_pattern(pattern) {
                problems.push(Violation::other(
                    format!("{path}.envPassthrough[{index}]"),
                    message,
                ));
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
            problems.push(Violation::other(
                format!("{path}.{key}"),
                format!("belongs to a local server (`command`): {why}; remove it"),
            ));
        }
    }
    let url_text = server.url.as_deref().unwrap_or_default();
    let url = expand_at(url_text, format!("{path}.url"), problems).and_then(|url| {
        check_url(&url)
            .map_err(|message| problems.push(Violation::other(format!("{path}.url"), message)))
            .ok()
    });
    let mut headers = Vec::new();
    for (name, value) in &server.headers {
        let at = format!("{path}.headers.{name}");
        if let Err(message) = check_header_name(name) {
            problems.push(Violation::other(at, message));
            continue;
        }
        let Some(value) = expand_at(value, at.clone(), problems) else {
            continue;
        };
        // The value is a secret: the message says what is wrong with it, never what it is.
        if reqwest::header::HeaderValue::from_str(&value).is_err() {
            problems.push(Violation::other(
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
        problems.push(Violation::other(
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
pub(super) struct Place<'a> {
    /// `toolboxes.T.mcpServers.S`.
    pub(super) path: &'a str,
    pub(super) base_dir: &'a Path,
    /// `TOOLBOX/SERVER`.
    pub(super) target: String,
    /// The config file, when it was read from one.
    pub(super) config_file: Option<&'a Path>,
}

/// The OAuth settings of a remote server with `"auth": "oauth"`.
pub(super) fn build_oauth(
    server: &ServerFile,
    place: &Place,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) -> Option<OAuthSettings> {
    let path = place.path;
    let settings = server.oauth.as_ref();
    if server.auth.is_none() {
        if settings.is_some() {
            problems.push(Violation::other(
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
        problems.push(Violation::other(
            format!("{path}.oauth.clientSecret"),
            "is the secret of a registered client, but there is no `clientId`; add the client's id"
                .into(),
        ));
    }
    let client_metadata_url = document.and_then(|text| match reqwest::Url::parse(&text) {
            Ok(url) if url.scheme() == "https" && url.path() != "/" => Some(url),
            _ => {
                problems.push(Violation::other(
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

pub(super) fn kind_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Stdio => "stdio",
        ServerKind::Http => "http",
        ServerKind::Sse => "sse",
    }
}

/// An http(s) URL with a host. The message never repeats the URL, which may hold a key.
pub(super) fn check_url(text: &str) -> Result<reqwest::Url, String> {
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

pub(super) fn check_header_name(name: &str) -> Result<(), String> {
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

/// `NAME` or `PREFIX*`, with letters, digits and `_`.
pub(super) fn check_env_pattern(pattern: &str) -> Result<(), String> {
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
