//! Integration tests: the real `toolshelf` binary, driven over stdio by a real rmcp client, with
//! real children (the fixture server of this repo and pinned npm servers).

mod architecture;
mod bench_smoke;
mod catalog;
mod child_offers;
mod cli;
mod client_tasks;
mod clients;
mod config_commands;
mod config_errors;
mod conformance;
mod contract;
mod deploy;
mod docs;
mod flat;
mod forwarding;
mod harness;
mod hostile;
mod http_callers;
mod http_direct;
mod http_edges;
mod http_replicas;
mod http_serve;
mod import;
mod install;
mod interop;
mod lifecycle;
mod mcp_servers_files;
mod package_files;
mod packaging;
mod persisted_catalog;
mod persisted_catalog_kinds;
mod readme;

mod remote;
mod remote_oauth;
mod remote_sessions;
mod search;
mod search_agent;
mod search_quality;
mod shell;
mod subscriptions;
mod supervision;
mod task_progress;
mod variables;
mod wire;
