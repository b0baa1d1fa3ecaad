//! The config file as it is typed: serde shapes that also produce the JSON Schema printed by
//! `toolshelf schema` and used to check a file before it is deserialised. Nothing here is
//! validated beyond its shape; `config::validate` turns it into types that cannot be wrong.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::schema_check::{ALIAS_PATTERN, NAME_PATTERN, TAG_PATTERN};

/// A toolshelf config file: named toolboxes, each a group of child MCP servers.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "toolshelf config")]
#[allow(
    dead_code,
    reason = "only its schema is used: validate walks the checked value"
)]
pub(crate) struct ConfigFile {
    /// Optional link to this schema, for editors.
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// Timeouts for every server that does not set its own.
    #[serde(default)]
    pub defaults: Option<DefaultsFile>,
    /// Toolboxes by name, at least one. A name matches `^[A-Za-z0-9_-]{1,64}$`.
    #[schemars(extend("propertyNames" = { "pattern": NAME_PATTERN }, "minProperties" = 1))]
    pub toolboxes: IndexMap<String, ToolboxFile>,
    /// Limits of `toolshelf serve --http`.
    #[serde(default)]
    pub http: Option<HttpFile>,
    /// The persisted catalog: servers' tool lists remembered between runs.
    #[serde(default)]
    pub catalog: Option<CatalogFile>,
    /// How `open_toolbox {query}` and `toolshelf search` rank tools.
    #[serde(default)]
    pub search: Option<SearchFile>,
    /// Code mode: `run_code`, a Python script that calls the toolboxes' tools, and its limits.
    #[serde(default)]
    pub code: Option<super::CodeFile>,
    /// Under `serve --http`, who may use each toolbox that has no `access` of its own. A config
    /// with any `access` rule denies each caller whatever no rule allows it.
    #[serde(default)]
    pub access: Option<AccessFile>,
}

/// Who may use a toolbox, server or tool under `serve --http`. A server's rule can only narrow
/// its toolbox's, a tool's its server's; what a caller may not use, it does not see.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "only its schema is used: config::policy reads the checked value"
)]
pub(crate) struct AccessFile {
    /// Callers by the name their bearer token stands for: a file's name in `--tokens-dir`, or "default" for the single token. A rule with none of callers, subjects, groups and scopes admits whoever the level above admits; with some, a caller any of them names.
    #[serde(default)]
    #[schemars(inner(regex(pattern = NAME_PATTERN)))]
    pub callers: Option<Vec<String>>,
    /// Holders of OAuth access tokens by their subject (the `sub` claim); no control characters.
    #[serde(default)]
    #[schemars(inner(length(min = 1, max = 256)))]
    pub subjects: Option<Vec<String>>,
    /// Holders of OAuth access tokens by a group their token's groups claim names (`groups` unless `serve --oauth-groups-claim` says another); no control characters.
    #[serde(default)]
    #[schemars(inner(length(min = 1, max = 256)))]
    pub groups: Option<Vec<String>>,
    /// Holders of OAuth access tokens by a scope their token grants (`scope` or `scp`): one scope per item, printable ASCII without spaces, '"' or '\\'.
    #[serde(default)]
    #[schemars(inner(length(min = 1, max = 256)))]
    pub scopes: Option<Vec<String>>,
    /// "always": every call of a tool under this rule waits for the user's confirmation (elicitation); "destructive": those of tools whose annotations say destructiveHint: true. On stdio too.
    #[serde(default)]
    pub confirm: Option<ConfirmFile>,
}

/// When a rule asks the user to confirm a call.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ConfirmFile {
    Always,
    Destructive,
}

/// The persisted catalog: each server's tool list is remembered in the user's cache folder,
/// and a toolbox whose servers are all remembered opens at once from it.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CatalogFile {
    /// Remember tool lists and answer from them (default true); false: every open starts its servers and waits (as `--no-cache` does).
    #[serde(default)]
    pub cache: Option<bool>,
    /// When a toolbox opened from the remembered catalog starts its servers: "background" (the default: at once, behind the answer, so the first call finds them running) or "firstCall" (each server on its first call: nothing runs that is not used)
    #[serde(default)]
    pub prestart: Option<Prestart>,
}

/// How search ranks tools.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SearchFile {
    /// Rank by meaning as well as by words (default true): the embedding of the query beside each tool's, by the model built into toolshelf. false: by words alone (BM25F), e.g. where tool names are codes no model knows, or to compare.
    #[serde(default)]
    pub meaning: Option<bool>,
}

/// When the servers of a toolbox opened from the persisted catalog start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Prestart {
    /// At once, in the background: the agent reads the tools meanwhile.
    #[default]
    Background,
    /// On each server's first call.
    FirstCall,
}

/// Limits of `toolshelf serve --http`; each has a default.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct HttpFile {
    /// Agent sessions open at once; one more `initialize` is refused (default 256).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_sessions: Option<u32>,
    /// `use_tool` calls in flight in one session; one more is refused (default 64).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_calls_per_session: Option<u32>,
    /// Seconds a session may go without a request before it ends and its own children stop (default 1800).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub session_idle_timeout: Option<f64>,
    /// Seconds a client may take to send a request's headers, from their first byte; a slower one's connection is closed (default 10).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub header_read_timeout: Option<f64>,
    /// Seconds a connection may sit with no request in progress before it is closed (default 60).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub connection_idle_timeout: Option<f64>,
    /// The largest request body in bytes; a bigger one gets 413 (default 16777216, 16 MiB).
    #[serde(default)]
    #[schemars(range(min = 1024))]
    pub max_body_bytes: Option<u64>,
}

/// Timeouts that apply to every server unless it sets its own.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DefaultsFile {
    /// Seconds a child may take to start (default 30).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub startup_timeout: Option<f64>,
    /// Seconds one tool call may take; progress from the child restarts the timer (default 60).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub call_timeout: Option<f64>,
    /// Seconds without a call after which a child is stopped; 0 = never (default 600).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub idle_timeout: Option<f64>,
}

/// One toolbox: a description for the agent and the child servers it starts when opened.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(
    dead_code,
    reason = "only its schema is used: validate walks the checked value"
)]
pub(crate) struct ToolboxFile {
    /// What the toolbox is for, shown to the agent before it opens the toolbox.
    #[serde(default)]
    pub description: Option<String>,
    /// Child MCP servers by name, at least one, in the shape Claude Desktop and Cursor use. A
    /// name matches `^[A-Za-z0-9_-]{1,64}$`.
    #[schemars(extend("propertyNames" = { "pattern": NAME_PATTERN }, "minProperties" = 1))]
    pub mcp_servers: IndexMap<String, ServerFile>,
    /// Who may use this toolbox under `serve --http` (instead of the top-level `access`).
    #[serde(default)]
    pub access: Option<AccessFile>,
}

/// One child MCP server: a local program (`command`, over stdio) or a remote server (`url`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ServerFile {
    /// "stdio" (a local program; the default with `command`), "http" (streamable HTTP; the default with `url`) or "sse" (HTTP+SSE of protocol 2024-11-05)
    #[serde(rename = "type", default)]
    pub kind: Option<ServerKind>,
    /// The program to run (looked up on PATH). `${VAR}` and `${VAR:-default}` are expanded.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub command: Option<String>,
    /// The address of a remote server, http or https, used as given. `${VAR}` is expanded.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub url: Option<String>,
    /// HTTP headers sent with every request to a remote server (e.g. `Authorization`). Values are
    /// expanded, secret: never logged, never shown.
    #[serde(default)]
    pub headers: IndexMap<String, String>,
    /// "oauth" (remote servers): the server signs its users in with OAuth; run `toolshelf login TOOLBOX/SERVER` once, and the tokens are kept and renewed by themselves
    #[serde(default)]
    pub auth: Option<AuthKind>,
    /// Settings of the OAuth login, for servers that need them (with `"auth": "oauth"`).
    #[serde(default)]
    pub oauth: Option<OAuthFile>,
    /// Its arguments (local servers). `${VAR}` and `${VAR:-default}` are expanded.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for the child (local servers). Values are expanded and never
    /// logged.
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Working directory of the child (local servers); relative paths are taken from the config file's folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// A list of exact tool names to keep, or "*" to keep all (the default).
    #[serde(default)]
    pub tool_filters: Option<ToolFiltersFile>,
    /// Seconds the child may take to start (or be reached) and answer `initialize` and
    /// `tools/list` (default 30).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub startup_timeout: Option<f64>,
    /// Seconds one tool call may take; progress from the child restarts the timer (default 60).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub call_timeout: Option<f64>,
    /// Seconds without a call after which the child is stopped (it starts again on the next
    /// call); 0 = never (default 600).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub idle_timeout: Option<f64>,
    /// Extra variables of toolshelf's environment to pass to the child, by name or `PREFIX*`
    /// pattern (e.g. `["AWS_*", "GITHUB_TOKEN"]`; local servers). Only a safe allow-list passes
    /// by default.
    #[serde(default)]
    pub env_passthrough: Vec<String>,
    /// A file of `KEY=VALUE` lines (`#` comments, optional `export ` and quotes; local
    /// servers), relative to the config file's folder: its variables go to the child's
    /// environment (below `env`'s own) and stand for `${VAR}` in this server's entries where
    /// toolshelf's environment has no such variable.
    #[serde(default)]
    pub env_file: Option<String>,
    /// Pass toolshelf's whole environment to the child (local servers; default false).
    #[serde(default)]
    pub inherit_env: bool,
    /// Tags for every tool of this server, merged with each tool's own tags.
    #[serde(default)]
    #[schemars(inner(regex(pattern = TAG_PATTERN)))]
    pub tags: Vec<String>,
    /// Per-tool overrides, keyed by the tool's name on the server.
    #[serde(default)]
    pub tools: IndexMap<String, ToolOverrideFile>,
    /// Per-prompt overrides, keyed by the prompt's name on the server (the same keys as a tool's).
    #[serde(default)]
    pub prompts: IndexMap<String, ToolOverrideFile>,
    /// Under `serve --http`: "shared" (the default) runs one process for every session; "session" runs one per agent session, for servers that keep per-user state, stopped when the session ends
    #[serde(default)]
    pub sharing: Option<Sharing>,
    /// Who of those its toolbox admits may use this server under `serve --http`.
    #[serde(default)]
    #[allow(dead_code, reason = "config::policy reads it from the checked value")]
    pub access: Option<AccessFile>,
}

/// Whether agent sessions share a server's process (`serve --http`; stdio has one session).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Sharing {
    /// One process for every session, started by the first session that needs it.
    #[default]
    Shared,
    /// A process per session, stopped when the session ends or expires.
    Session,
}

/// How toolshelf talks to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ServerKind {
    /// A local program over its stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// HTTP with server-sent events (protocol 2024-11-05).
    Sse,
}

/// How toolshelf proves who it is to a remote server, beyond its `headers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AuthKind {
    /// The OAuth authorization-code flow with PKCE, as the MCP authorization spec describes.
    Oauth,
}

/// Settings of an OAuth login. Without them toolshelf registers itself with the authorization
/// server (dynamic client registration) and asks for the scopes the server names.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct OAuthFile {
    /// A client id registered with the authorization server beforehand, for servers that do
    /// not offer dynamic registration. `${VAR}` is expanded.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub client_id: Option<String>,
    /// The secret of that client, if it has one: write it as `${VAR}`. Never logged or shown.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub client_secret: Option<String>,
    /// The https URL of a client ID metadata document you host (SEP-991), used as the client id
    /// where the authorization server supports such documents, instead of registering.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for, instead of those the server names.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The loopback port that receives the login's redirect, for a client registered with a
    /// fixed redirect URI (http://127.0.0.1:PORT/callback). Default: any free port.
    #[serde(default)]
    #[schemars(range(min = 1, max = 65535))]
    pub callback_port: Option<u16>,
}

/// How one tool (or prompt) of a server is shown to the agent.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolOverrideFile {
    /// Another name the agent may call the tool by: 2 to 64 of a-z, 0-9, `_` and `-`.
    #[serde(default)]
    #[schemars(regex(pattern = ALIAS_PATTERN))]
    pub alias: Option<String>,
    /// Replaces the server's description of the tool.
    #[serde(default)]
    pub description: Option<String>,
    /// Replaces the server's title of the tool.
    #[serde(default)]
    pub title: Option<String>,
    /// Tags of this tool, added to the server's tags.
    #[serde(default)]
    #[schemars(inner(regex(pattern = TAG_PATTERN)))]
    pub tags: Vec<String>,
    /// Hide the tool from the agent, as if `toolFilters` left it out.
    #[serde(default)]
    pub hidden: bool,
    /// Who of those its server admits may use this tool under `serve --http` (tools only).
    #[serde(default)]
    #[allow(dead_code, reason = "config::policy reads it from the checked value")]
    pub access: Option<AccessFile>,
}

/// Which tools of a server the agent sees.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ToolFiltersFile {
    /// Exact tool names to keep (`["*"]` keeps all).
    Names(Vec<String>),
    /// `"*"`: keep all tools.
    All(AllTools),
}

/// The string `"*"`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) enum AllTools {
    #[serde(rename = "*")]
    All,
}
