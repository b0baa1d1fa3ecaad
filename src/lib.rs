//! toolshelf: one MCP server in front of many. The agent sees two tools, `open_toolbox` and
//! `use_tool` (or, in flat mode, every child's tool as `server:tool`); toolboxes of child MCP
//! servers start on first open and calls are forwarded.
//!
//! Code map (request path top to bottom):
//! - `cli` / `main.rs` — commands, logging to stderr, signals, exit codes.
//! - [`server`] — the MCP server role on stdio; dispatches `tools/call` to the meta-tools.
//!   [`http_serve`] — the same role over streamable HTTP, a `Toolshelf` per session.
//! - `agent_transport` — line-delimited JSON-RPC with the agent; `agent_message` reads a line
//!   leniently and writes answers under the agent's own id; `agent_requests` — the ids in
//!   flight (one answer per request). `agent_calls` — `use_tool` (and flat calls) served
//!   beside rmcp. `json_lines` — the framing and the one writer per stream, shared with the
//!   children's transport.
//! - `meta_tools` — `open_toolbox` and `use_tool`: schemas, descriptions, instructions, lookups.
//!   [`flat`] — flat mode: children's tools listed and called by `server:tool` names
//!   (`qualified_names`). `forward` — one call of one child's tool, for both.
//! - `offers` — children's prompts, resources and completions, passed on in both modes.
//! - `error` — the one place toolshelf's failures become agent-visible text (use_tool's error table).
//! - `toolboxes` — configured toolboxes and each server's state; opening starts children.
//! - `children` — the only module that starts processes: spawn, MCP client session, stop.
//! - [`config`] — file → validated `Config`; `schema_check` — schemars + jsonschema checking.
//! - `oauth` — `toolshelf login`/`logout` and the tokens of OAuth servers; `http_client` — the
//!   one HTTP client.
//! - `catalog` — each server's current tools; `catalog_cache` — the persisted catalog they are
//!   remembered in between runs; `suggest` — "did you mean" by edit distance.
//! - `metrics` — what `GET /metrics` shows under `serve --http`; `locks` — std locks taken
//!   whatever a panicking holder left.
//! - [`shell`] — `toolshelf tools` and `toolshelf call`: the same core, from a terminal or script.

mod agent_calls;
mod agent_input;
mod agent_link;
mod agent_message;
mod agent_requests;
mod agent_route;
mod agent_tasks;
mod agent_transport;
mod call_meta;
mod catalog;
pub mod catalog_cache;
pub mod check;
mod children;
pub use children::guard::{GUARD_COMMAND, run as run_process_guard};
pub mod cli;
pub mod config;
mod error;
pub mod flat;
mod forward;
mod http_client;
pub mod http_serve;
pub mod import;
mod json_lines;
mod locks;
mod meta_tools;
mod metrics;
pub mod oauth;
mod offers;
mod private_file;
mod qualified_names;
mod schema_check;
pub mod server;
pub mod shell;
mod suggest;
mod task_questions;
mod toolboxes;
