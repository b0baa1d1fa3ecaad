//! Where a configured server is reached: a local program over stdio or a server at a URL, and
//! how each is shown in a log (never with its secrets).

use std::{fmt, path::PathBuf};

/// A local program over stdio, or a server at a URL.
#[derive(Debug, PartialEq)]
pub enum Endpoint {
    Local(LocalServer),
    Remote(RemoteServer),
}

/// How to start a local server.
#[derive(PartialEq)]
pub struct LocalServer {
    pub command: String,
    pub args: Vec<String>,
    /// Secret as far as toolshelf knows: never logged, never shown to the agent.
    pub env: Vec<(String, String)>,
    /// The working folder the config names, if it names one.
    pub cwd: Option<PathBuf>,
    /// Where the child runs without a `cwd`: the config file's folder (a client starts
    /// toolshelf wherever it likes). Not part of the catalog's launch key, as toolshelf's own
    /// folder was not.
    pub config_dir: PathBuf,
    /// Names and `PREFIX*` patterns of toolshelf's variables the child also gets.
    pub env_passthrough: Vec<String>,
    /// The child gets toolshelf's whole environment.
    pub inherit_env: bool,
}

/// How to reach a remote server.
#[derive(PartialEq)]
pub struct RemoteServer {
    pub transport: RemoteTransport,
    /// Used as given. It may hold a secret (a key in its query), so it is shown only as
    /// `shown_url` says.
    pub url: reqwest::Url,
    /// Sent with every request. Values are secret: never logged, never shown to the agent.
    pub headers: Vec<(String, String)>,
    /// Set when the server signs its users in with OAuth (boxed: few servers have it).
    pub oauth: Option<Box<OAuthSettings>>,
}

/// How toolshelf logs in to a server with OAuth.
#[derive(PartialEq)]
pub struct OAuthSettings {
    /// A client registered beforehand; `None`: dynamic client registration.
    pub client_id: Option<String>,
    /// Secret: never logged, never shown.
    pub client_secret: Option<String>,
    /// A client ID metadata document's URL, the client id where the server supports those.
    pub client_metadata_url: Option<reqwest::Url>,
    /// Scopes to ask for; empty: those the server names.
    pub scopes: Vec<String>,
    /// The port of the redirect URI; `None`: any free port.
    pub callback_port: Option<u16>,
    /// `TOOLBOX/SERVER`, the name `toolshelf login` takes.
    pub target: String,
    /// The config file's absolute path, when it was read from one: named in `command`, since
    /// the user runs it from wherever they are.
    pub config_file: Option<PathBuf>,
}

impl OAuthSettings {
    /// `toolshelf VERB [--config FILE] TOOLBOX/SERVER` (`login` or `logout`), for messages.
    pub fn command(&self, verb: &str) -> String {
        match &self.config_file {
            Some(file) => format!(
                "toolshelf {verb} --config '{}' {}",
                file.display(),
                self.target
            ),
            None => format!("toolshelf {verb} {}", self.target),
        }
    }
}

/// The HTTP transports of MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteTransport {
    /// Streamable HTTP (2025-03-26 and later).
    StreamableHttp,
    /// HTTP with server-sent events (2024-11-05).
    Sse,
}

impl RemoteServer {
    /// The URL without what may be secret (user info, query, fragment), for messages and logs.
    pub fn shown_url(&self) -> String {
        shown_url(&self.url)
    }
}

/// `url` without user info, query and fragment; `?…` marks a query left out.
pub(crate) fn shown_url(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_fragment(None);
    let query = shown.query().is_some();
    shown.set_query(None);
    let mut text = shown.to_string();
    if query {
        text.push_str("?…");
    }
    text
}

impl fmt::Debug for LocalServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env_keys: Vec<&str> = self.env.iter().map(|(key, _)| key.as_str()).collect();
        f.debug_struct("LocalServer")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env_keys", &env_keys)
            .field("cwd", &self.cwd)
            .field("config_dir", &self.config_dir)
            .field("env_passthrough", &self.env_passthrough)
            .field("inherit_env", &self.inherit_env)
            .finish()
    }
}

impl fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("RemoteServer")
            .field("transport", &self.transport)
            .field("url", &self.shown_url())
            .field("header_names", &header_names)
            .field("oauth", &self.oauth)
            .finish()
    }
}

impl fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[secret]"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("target", &self.target)
            .finish()
    }
}
