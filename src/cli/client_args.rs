//! The flags of the commands that edit an MCP client's config: `install`, `uninstall` and
//! `consolidate`.

use std::path::PathBuf;

use clap::Args;

use super::ConfigArg;

#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The client whose config to change.
    #[arg(long, value_enum)]
    pub client: crate::clients::Client,
    /// The user's config (every project) or the current folder's project config.
    #[arg(long, value_enum, default_value_t)]
    pub scope: crate::clients::Scope,
    /// The client's config file, when it is not where the client keeps it.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Print the change as a diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub config: ConfigArg,
    /// A variable of toolshelf's entry, KEY=VALUE (repeatable): the client starts toolshelf
    /// with it, and a `${KEY}` of the config reads it.
    #[arg(long, value_name = "KEY=VALUE")]
    pub env: Vec<String>,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The toolbox config the servers go into (made when missing).
    #[command(flatten)]
    pub config: ConfigArg,
    /// Put every server into this one toolbox (default: a toolbox per server, named like it).
    #[arg(long, value_name = "NAME")]
    pub toolbox: Option<String>,
    /// Give back every file the last consolidate of this client's file changed, as it was.
    #[arg(long, conflicts_with = "toolbox")]
    pub undo: bool,
}
