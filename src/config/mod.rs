//! The config file, read in two stages: the typed shape (`file`) is checked against its own
//! JSON Schema, then `validate` expands variables and builds `Config`, whose values cannot be
//! wrong. Every problem is reported at once. No I/O here beyond reading the file.

mod code;
mod endpoints;
mod env_file;
pub(crate) use env_file::values as env_file_values;
mod expand;
mod file;
mod plain;
mod policy;
mod validate;
mod validate_aliases;
mod validate_endpoint;
mod variables;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use indexmap::IndexMap;

pub(crate) use code::CodeFile;
pub use code::CodeSettings;
pub use endpoints::{Endpoint, LocalServer, OAuthSettings, RemoteServer, RemoteTransport};
pub use file::{Prestart, Sharing};
pub use policy::{Identity, Policy, Withheld};

pub use crate::schema_check::Violation;

/// Where the config comes from when `--config` is not given.
pub const CONFIG_ENV: &str = "TOOLSHELF_CONFIG";
/// The file read when neither `--config` nor `TOOLSHELF_CONFIG` names one.
pub const DEFAULT_CONFIG_FILE: &str = "toolboxes.json";
/// How long a child may take to start, initialize and list its tools, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take, unless configured.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a child may sit without a call before it is stopped, unless configured.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// Agent sessions `serve --http` holds at once, unless configured.
pub const DEFAULT_MAX_SESSIONS: usize = 256;
/// `use_tool` calls in flight in one HTTP session, unless configured.
pub const DEFAULT_MAX_CALLS_PER_SESSION: usize = 64;
/// How long an HTTP session may go without a request, unless configured.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(1800);
/// How long an HTTP client may take to send a request's headers, unless configured.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an HTTP connection may sit between requests, unless configured.
pub const DEFAULT_CONNECTION_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest request body `serve --http` takes, unless configured.
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// A validated config: toolboxes in file order; a caller's view of it (`for_caller`) lacks what
/// the policy withholds from that caller.
#[derive(Debug, Clone)]
pub struct Config {
    pub toolboxes: IndexMap<String, Arc<ToolboxSpec>>,
    pub http: HttpLimits,
    /// The persisted catalog.
    pub catalog: CatalogSettings,
    /// How search ranks.
    pub search: SearchSettings,
    /// Code mode: `run_code` and its limits.
    pub code: CodeSettings,
    /// What the user should hear about the file although it is valid: keys of a client's own
    /// settings that toolshelf does not use, servers a plain file disables.
    pub notes: Vec<String>,
    /// The `access` rules, if the file has any.
    pub policy: Option<Arc<Policy>>,
    /// In a caller's view: what the policy withholds from it (empty in the whole config).
    pub withheld: Arc<Withheld>,
}

/// Whether servers' tool lists are remembered between runs, and when a toolbox opened from
/// them starts its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogSettings {
    pub cache: bool,
    pub prestart: Prestart,
}

impl Default for CatalogSettings {
    fn default() -> Self {
        Self {
            cache: true,
            prestart: Prestart::Background,
        }
    }
}

/// How search ranks: by words alone, or by words and meaning (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchSettings {
    pub meaning: bool,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self { meaning: true }
    }
}

/// The limits of `serve --http`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    pub max_sessions: usize,
    pub max_calls_per_session: usize,
    pub session_idle_timeout: Duration,
    pub max_body_bytes: usize,
    pub header_read_timeout: Duration,
    pub connection_idle_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_calls_per_session: DEFAULT_MAX_CALLS_PER_SESSION,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            connection_idle_timeout: DEFAULT_CONNECTION_IDLE_TIMEOUT,
        }
    }
}

/// One toolbox and the servers it starts.
#[derive(Debug)]
pub struct ToolboxSpec {
    pub name: String,
    pub description: String,
    pub servers: Vec<Arc<ServerSpec>>,
}

impl ToolboxSpec {
    pub fn server(&self, name: &str) -> Option<&Arc<ServerSpec>> {
        self.servers.iter().find(|server| server.name == name)
    }
}

/// One child server, with every variable already expanded. Its `Debug` shows no secret; two
/// are equal when a reload need not restart the server.
#[derive(Debug, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    /// How toolshelf reaches it.
    pub endpoint: Endpoint,
    pub tool_filter: ToolFilter,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// `None`: never stopped for idleness.
    pub idle_timeout: Option<Duration>,
    /// Tags of every tool of the server.
    pub tags: Vec<String>,
    /// Overrides by the tool's name on the server, in file order.
    pub tools: IndexMap<String, ToolOverride>,
    /// Overrides by the prompt's name on the server, in file order.
    pub prompts: IndexMap<String, ToolOverride>,
    /// Whether HTTP sessions share its process.
    pub sharing: Sharing,
    /// Why it cannot start whatever is tried (a variable it uses is unset, its `envFile`
    /// cannot be read): its opens and calls fail at once with this, and the rest of the config
    /// serves.
    pub unavailable: Option<String>,
}

impl ServerSpec {
    /// How to start it, if it is a local program.
    pub fn local(&self) -> Option<&LocalServer> {
        match &self.endpoint {
            Endpoint::Local(local) => Some(local),
            Endpoint::Remote(_) => None,
        }
    }
}

/// How one tool (or prompt) is shown to the agent; `None` keeps what the server says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOverride {
    pub alias: Option<String>,
    pub description: Option<String>,
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub hidden: bool,
}

/// Which of a server's tools the agent sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolFilter {
    All,
    Only(Vec<String>),
}

impl ToolFilter {
    pub fn keeps(&self, tool: &str) -> bool {
        match self {
            ToolFilter::All => true,
            ToolFilter::Only(names) => names.iter().any(|name| name == tool),
        }
    }
}

/// Why no config could be had.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "cannot read the config file {} ({}): {source}. {}",
        path.display(),
        from.origin(),
        from.advice()
    )]
    Read {
        /// Absolute, so the message says which file was tried whatever the current folder.
        path: PathBuf,
        from: ConfigSource,
        source: std::io::Error,
    },
    #[error("{}", render_problems(path, problems))]
    Invalid {
        path: PathBuf,
        problems: Vec<Violation>,
    },
}

fn render_problems(path: &Path, problems: &[Violation]) -> String {
    let count = problems.len();
    let noun = if count == 1 { "problem" } else { "problems" };
    let mut text = format!("the config file {} has {count} {noun}:", path.display());
    for problem in problems {
        text.push_str("\n  - ");
        if problem.path.is_empty() {
            text.push_str("(top level): ");
            text.push_str(&problem.message);
        } else {
            text.push_str(&problem.to_string());
        }
    }
    text.push_str("\nRun `toolshelf schema` for the full format.");
    text
}

/// Where the config path came from, for the message when it cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    /// `--config FILE`.
    Flag,
    /// `$TOOLSHELF_CONFIG`.
    Env,
    /// Neither: `toolboxes.json` in the current folder.
    CurrentFolder,
    /// A path a caller chose.
    Given,
}

impl ConfigSource {
    fn origin(self) -> String {
        match self {
            ConfigSource::Flag => "given with --config".into(),
            ConfigSource::Env => format!("from {CONFIG_ENV}"),
            ConfigSource::CurrentFolder => format!(
                "the default: neither --config nor {CONFIG_ENV} is set, so {DEFAULT_CONFIG_FILE} in the current folder"
            ),
            ConfigSource::Given => "the config path".into(),
        }
    }

    fn advice(self) -> String {
        match self {
            ConfigSource::Flag | ConfigSource::Given => {
                "Check the path; a relative one starts at the current folder.".into()
            }
            ConfigSource::Env => {
                format!("Fix {CONFIG_ENV}, or pass --config FILE (it takes precedence).")
            }
            ConfigSource::CurrentFolder => format!(
                "Pass --config FILE, set {CONFIG_ENV}, or create {DEFAULT_CONFIG_FILE} there: `toolshelf import --write {DEFAULT_CONFIG_FILE}` makes one from your MCP client's config, and `toolshelf schema` prints the format (a toolbox is {{\"description\": …, \"mcpServers\": {{…}}}}, as in your client's config)."
            ),
        }
    }
}

/// The config path: `--config`, else `TOOLSHELF_CONFIG`, else `./toolboxes.json`.
pub fn locate(from_cli: Option<PathBuf>) -> (PathBuf, ConfigSource) {
    if let Some(path) = from_cli {
        return (path, ConfigSource::Flag);
    }
    match std::env::var_os(CONFIG_ENV) {
        Some(path) => (PathBuf::from(path), ConfigSource::Env),
        None => (
            PathBuf::from(DEFAULT_CONFIG_FILE),
            ConfigSource::CurrentFolder,
        ),
    }
}

/// Reads and validates the config file at `path`, expanding variables from the process
/// environment.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    load_from(path, ConfigSource::Given)
}

/// As `load`, for a path found by `locate`.
pub fn load_from(path: &Path, from: ConfigSource) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
        from,
        source,
    })?;
    let base_dir = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    validate::parse(&text, base_dir, Some(&file), &|name| {
        std::env::var(name).ok()
    })
    .map_err(|problems| ConfigError::Invalid {
        path: path.to_owned(),
        problems,
    })
}

/// Validates config text; `base_dir` anchors relative `cwd`s and `lookup` reads variables.
pub fn parse(
    text: &str,
    base_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, Vec<Violation>> {
    validate::parse(text, base_dir, None, lookup)
}

/// The JSON Schema of the config file, for editors (`toolshelf schema`).
pub fn json_schema() -> serde_json::Value {
    let mut schema = crate::schema_check::schema_of::<file::ConfigFile>();
    if let Some(object) = schema.as_object_mut() {
        object.insert(
            "$schema".into(),
            "https://json-schema.org/draft/2020-12/schema".into(),
        );
    }
    schema
}
