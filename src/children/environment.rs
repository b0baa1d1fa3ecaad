//! Which of toolshelf's environment variables a child gets. By default only an allow-list that
//! programs (and Node, npx, Python) need to run: a token in toolshelf's environment does not
//! reach a child unless the config says so (`envPassthrough`, `inheritEnv`).

use std::ffi::{OsStr, OsString};

use crate::config::LocalServer;

/// Passed by name.
const SAFE_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "TZ",
    "LANG",
    "LANGUAGE",
    "TMPDIR",
    "TMP",
    "TEMP",
    // Node, npm, npx
    "NODE_PATH",
    "NODE_OPTIONS",
    "NODE_EXTRA_CA_CERTS",
    "NVM_DIR",
    "NVM_BIN",
    "NVM_INC",
    "VOLTA_HOME",
    "COREPACK_HOME",
    "npm_config_cache",
    "npm_config_prefix",
    "npm_config_registry",
    "NPM_CONFIG_CACHE",
    "NPM_CONFIG_PREFIX",
    "NPM_CONFIG_REGISTRY",
    // Python, pip, uv
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "CONDA_PREFIX",
    "UV_CACHE_DIR",
    "PIPX_HOME",
    // Windows: what its programs (Node and Python among them) need to start, and where the
    // user's folders are
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "SYSTEMDRIVE",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "COMMONPROGRAMFILES",
    "HOMEDRIVE",
    "HOMEPATH",
    "USERNAME",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
    // TLS trust and proxies, without which nothing reaches a registry behind them
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// Passed by prefix.
const SAFE_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// The variables of `parent` the child of `spec` inherits (its configured `env` comes on top).
pub(crate) fn inherited(
    spec: &LocalServer,
    parent: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    parent
        .filter(|(name, _)| spec.inherit_env || allowed(name, &spec.env_passthrough))
        .collect()
}

fn allowed(name: &OsStr, passthrough: &[String]) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    // Windows writes its names in any case (`Path`, `SystemRoot`) and reads them in any.
    SAFE_NAMES
        .iter()
        .any(|safe| safe.eq_ignore_ascii_case(name))
        || SAFE_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        || passthrough.iter().any(|pattern| matches(pattern, name))
}

/// `NAME` matches itself; `PREFIX*` matches every name that starts with `PREFIX`.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(passthrough: &[&str], inherit_env: bool) -> Vec<String> {
        let config = serde_json::json!({"toolboxes": {"t": {"mcpServers": {"s": {
            "command": "x", "envPassthrough": passthrough, "inheritEnv": inherit_env
        }}}}});
        let config =
            crate::config::parse(&config.to_string(), std::path::Path::new("."), &|_| None)
                .unwrap_or_else(|problems| panic!("{problems:?}"));
        let spec = config.toolboxes["t"].servers[0].local().expect("local");
        let parent = [
            "PATH",
            "HOME",
            "LC_ALL",
            "AWS_SECRET",
            "AWS_REGION",
            "GITHUB_TOKEN",
            "PATHX",
        ]
        .into_iter()
        .map(|name| (OsString::from(name), OsString::from("v")));
        inherited(spec, parent)
            .into_iter()
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn only_the_allow_list_passes_by_default() {
        assert_eq!(names(&[], false), ["PATH", "HOME", "LC_ALL"]);
    }

    #[test]
    fn passthrough_adds_names_and_prefixes() {
        assert_eq!(
            names(&["AWS_*", "GITHUB_TOKEN"], false),
            [
                "PATH",
                "HOME",
                "LC_ALL",
                "AWS_SECRET",
                "AWS_REGION",
                "GITHUB_TOKEN"
            ]
        );
    }

    #[test]
    fn inherit_env_passes_everything() {
        assert_eq!(names(&[], true).len(), 7);
    }
}
