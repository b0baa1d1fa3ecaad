//! toolshelf: one MCP server in front of many. The agent sees two tools, `open_toolbox` and
//! `use_tool` (or, in flat mode, every child's tool as `server:tool`); toolboxes of child MCP
//! servers start on first open and calls are forwarded.
//!
//! Code map (ARCHITECTURE.md draws it):
//! - `transport` — the two doors: `stdio` (lines) and `http` (`serve --http`); they adapt and
//!   hand every request to the session core.
//! - `session` — the core: one agent session's state, rmcp's handler of it, and the door past
//!   rmcp (`use_tool` calls, 2025-11-25 `tasks/…`); `tasks` — a session's 2025-11-25 tasks.
//! - `jsonrpc` — framing, envelopes, `_meta`; `revision` — what differs per MCP revision.
//! - `meta_tools`, [`flat`], `child_offers` — what the agent calls and sees; `child_call` — one
//!   call of one child's tool; `error` — toolshelf's failures as agent-visible text.
//! - `toolboxes` — each server's slot; `children` — the only module that starts processes,
//!   speaking upward only through its `agent_port`.
//! - [`catalog`] — each server's tools and the persisted catalog; [`config`] and
//!   `schema_check` — file → validated `Config`; [`oauth`], `http_client`.
//! - `cli`, [`check`], [`shell`], [`import`] — the commands; `metrics`, `locks`, `private_file`.

// The serve future (`cli::run`) nests rmcp's service loop, the transport and the call path; in
// an optimised build the MIR inliner computes its layout through more levels than the default.
#![recursion_limit = "256"]

mod audit;
pub mod catalog;
pub mod check;
mod children;
pub use children::process_tree::{GUARD_COMMAND, run_guard as run_process_guard};
mod child_call;
mod child_offers;
pub mod cli;
pub mod clients;
mod code_mode;
pub mod config;
pub mod config_commands;
mod error;
pub mod flat;
mod http_client;
pub mod import;
pub mod install;
mod json_edit;
mod jsonrpc;
mod locks;
mod meta_tools;
mod metrics;
pub mod oauth;
mod private_file;
mod qualified_names;
pub mod reload;
mod resident_code;
pub mod resource_server;
mod revision;
mod schema_check;
pub mod search;
mod session;
pub mod shell;
pub mod signals;
mod suggest;
mod tasks;
mod toolboxes;
pub mod transport;
