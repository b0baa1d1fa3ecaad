//! Command-line interface.

mod client_args;
mod completion;
mod edits;
mod run;
mod serve_args;

pub use client_args::{ClientArgs, ConsolidateArgs, InstallArgs, UninstallArgs};
pub use run::run;
pub use serve_args::ServeArgs;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use clap_complete::ArgValueCandidates;

/// One MCP server in front of many: agents see `open_toolbox` and `use_tool`, toolboxes of child
/// MCP servers start on demand.
#[derive(Debug, Parser)]
#[command(name = "toolshelf", version, about, long_about = None)]
pub struct Cli {
    /// Log filter for stderr (e.g. `info`, `toolshelf=debug`); overrides RUST_LOG. Default:
    /// warn,toolshelf=info,rmcp=error (check, tools, call: warn,rmcp=error and no line for a
    /// failed start, which they print themselves).
    #[arg(long, global = true, value_name = "FILTER")]
    pub log_level: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdin/stdout (what an MCP client runs), or over HTTP with --http.
    ///
    /// Example: `toolshelf serve --config toolboxes.json` (in an MCP client's config),
    /// `TOOLSHELF_TOKEN=… toolshelf serve --http 0.0.0.0:8411`, `toolshelf serve --flat`
    Serve(ServeArgs),
    /// Validate the config, start every toolbox once and print a table of servers (refreshing
    /// the persisted catalog); exits 1 if any server failed, 2 if the config is invalid.
    ///
    /// Example: `toolshelf check --config toolboxes.json`
    Check(CheckArgs),
    /// List the tools of one toolbox, or of all: name, alias, server, tags and a one-line
    /// description. Servers whose tools are in the persisted catalog are not started.
    ///
    /// Example: `toolshelf tools files` or `toolshelf tools --json | jq '.[].servers[].tools[].name'`
    Tools(ToolsArgs),
    /// Find the tools that do what QUERY describes, best first, across every toolbox: from
    /// the persisted catalog, without starting a server.
    ///
    /// Example: `toolshelf search read a file`, `toolshelf search --json --limit 3 "create an
    /// issue" | jq '.[0]'`, `toolshelf search --eval queries.jsonl`
    Search(SearchArgs),
    /// Call one tool: starts only its server, prints the result, stops the server. Exit 0 on
    /// success, 1 when the call fails (the tool's error, or an unknown toolbox, server or tool),
    /// 2 for bad usage or a bad config.
    ///
    /// Example: `toolshelf call demo everything get-sum a=2 b=3` (typed by the tool's schema),
    /// `toolshelf call files fs read_text_file --args '{"path": "README.md"}'`
    Call(CallArgs),
    /// Turn an MCP client's config into a toolshelf config, printed on stdout (notes on
    /// stderr). Literal secrets in `env` and `headers` become `${VAR}` references, and you are
    /// told which variables to set.
    ///
    /// Example: `toolshelf import --from claude-desktop --write toolboxes.json`, `toolshelf
    /// import .vscode/mcp.json --toolbox dev`
    Import(ImportArgs),
    /// Write a starter config to edit, or, with --import, one made from a client's config.
    ///
    /// The starter has one toolbox with one server; --import does what `toolshelf import
    /// --write` does.
    ///
    /// Example: `toolshelf init`, `toolshelf init --import --from claude-desktop`
    Init(InitArgs),
    /// Add a server to a toolbox of the config (made, with the file, when missing).
    ///
    /// The rest of the file stays as written, and a change that breaks the config is refused.
    ///
    /// Example: `toolshelf add files fs -- npx -y @modelcontextprotocol/server-filesystem .`,
    /// `toolshelf add work linear --url https://mcp.linear.app/mcp`
    Add(AddArgs),
    /// Remove a server from a toolbox of the config (and the toolbox, if it was its last).
    ///
    /// Example: `toolshelf remove files fs`
    Remove(RemoveArgs),
    /// Put toolshelf, serving your toolbox config, into an MCP client's config.
    ///
    /// The entry is set in the client's own file in place: everything else is kept byte for
    /// byte, and the file as it was is kept beside it as FILE.toolshelf-backup. Running it again
    /// changes nothing.
    ///
    /// Example: `toolshelf install --client claude-code --config ~/toolboxes.json`, `toolshelf
    /// install --client vscode --scope project --dry-run`
    Install(InstallArgs),
    /// Take toolshelf's entry out of an MCP client's config (what `install` added).
    ///
    /// When only that entry changed since `install`, the file is given back as it was and
    /// install's backup is removed.
    ///
    /// Example: `toolshelf uninstall --client cursor`
    Uninstall(UninstallArgs),
    /// Move an MCP client's servers into toolshelf, and toolshelf into the client.
    ///
    /// The servers go into the toolbox config, toolshelf takes their place in the client's
    /// file, and their literal secrets go to an envFile (0600) per server beside the config.
    /// Every file changed is kept as FILE.toolshelf-backup; --dry-run shows every diff;
    /// --undo gives every file back byte for byte.
    ///
    /// Example: `toolshelf consolidate --client claude-desktop --config ~/toolboxes.json`,
    /// `toolshelf consolidate --undo --client claude-desktop`
    Consolidate(ConsolidateArgs),
    /// The persisted catalog of servers' tools (in the user's cache folder).
    ///
    /// Example: `toolshelf cache path`, `toolshelf cache clear`
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Log in to a remote server that has `"auth": "oauth"`: prints the authorization URL (and
    /// opens a browser where there is one), waits for the redirect, keeps the tokens.
    ///
    /// Example: `toolshelf login work/linear`, `toolshelf login --no-browser work/linear` (on a
    /// machine without a browser)
    Login(LoginArgs),
    /// Revoke a server's OAuth tokens where its authorization server offers revocation (RFC
    /// 7009), then remove the saved login.
    ///
    /// Example: `toolshelf logout work/linear`
    Logout(TargetArgs),
    /// Print the JSON Schema of the config file, for editors.
    ///
    /// Example: `toolshelf schema > toolshelf.schema.json`, then `"$schema":
    /// "./toolshelf.schema.json"` in the config
    Schema,
    /// Print a shell completion script.
    ///
    /// Example: `toolshelf completions bash > ~/.local/share/bash-completion/completions/toolshelf`,
    /// `toolshelf completions zsh > ~/.zfunc/_toolshelf`, `toolshelf completions fish >
    /// ~/.config/fish/completions/toolshelf.fish`
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    ///
    /// Example: `toolshelf man > ~/.local/share/man/man1/toolshelf.1 && man toolshelf`
    Man,
    /// Internal: the process guard toolshelf starts beside its children (see ARCHITECTURE.md).
    #[command(name = "process-guard", hide = true)]
    ProcessGuard,
}

#[derive(Debug, Args)]
pub struct ConfigArg {
    /// Config file. Default: $TOOLSHELF_CONFIG, else ./toolboxes.json.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The toolbox to list (default: every toolbox).
    #[arg(add = ArgValueCandidates::new(completion::toolboxes))]
    pub toolbox: Option<String>,
    /// Print what `open_toolbox` returns, as JSON (an array of those without TOOLBOX).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub cache: CacheSwitch,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What the tool should do, in words (several words are one query).
    #[arg(required_unless_present = "eval", conflicts_with = "eval")]
    pub query: Vec<String>,
    /// Measure search instead: run each query of FILE (JSON lines: {"query": …, "expected":
    /// [{"toolbox", "server", "name"}, …]}) and print hit@1, hit@3, hit@5, MRR@10 by words and
    /// meaning and by words alone, and the misses.
    #[arg(long, value_name = "FILE")]
    pub eval: Option<PathBuf>,
    /// How many matches to print.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub limit: usize,
    /// Print a JSON array, best first: toolbox, server, name, score, description.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub config: ConfigArg,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The toolbox.
    #[arg(add = ArgValueCandidates::new(completion::toolboxes))]
    pub toolbox: String,
    /// The server, as named in the toolbox.
    #[arg(add = ArgValueCandidates::new(completion::servers))]
    pub server: String,
    /// The tool's name or alias.
    #[arg(add = ArgValueCandidates::new(completion::tools))]
    pub tool: String,
    /// Arguments as KEY=VALUE (typed by the tool's input schema: `count=3` is a number where the
    /// schema says integer) or KEY:=JSON (taken as JSON).
    #[arg(value_name = "KEY=VALUE")]
    pub arguments: Vec<String>,
    /// The arguments as a JSON object; KEY=VALUE pairs are set on top of it.
    #[arg(long, value_name = "JSON", conflicts_with = "args_file")]
    pub args: Option<String>,
    /// Read the arguments' JSON object from FILE (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub args_file: Option<PathBuf>,
    /// Print the whole tool result as JSON, as the server wrote it.
    #[arg(long)]
    pub json: bool,
    /// Write images, audio and embedded resources of the result to files in DIR.
    #[arg(long, value_name = "DIR")]
    pub save_dir: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub cache: CacheSwitch,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The client's config file (default: where the client keeps it; the path read is said).
    pub file: Option<PathBuf>,
    /// The client that wrote it (default: found from the file's shape, or by looking where each
    /// client keeps its config).
    #[arg(long, value_enum)]
    pub from: Option<crate::import::Client>,
    /// Put every server into this one toolbox (default: a toolbox per server).
    #[arg(long, value_name = "NAME")]
    pub toolbox: Option<String>,
    /// Write the config to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// With --write: replace FILE if it exists.
    #[arg(long, requires = "write")]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub config: ConfigArg,
    /// Replace the file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Make the config from an MCP client's config found on this machine (see `import`).
    #[arg(long)]
    pub import: bool,
    /// With --import: the client to import from (default: the one whose config is found).
    #[arg(long, value_enum, requires = "import")]
    pub from: Option<crate::clients::Client>,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The toolbox (made when missing).
    #[arg(add = ArgValueCandidates::new(completion::toolboxes))]
    pub toolbox: String,
    /// The server's name in the toolbox.
    pub name: String,
    /// The server's command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// A remote server's URL (instead of a command).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// An environment variable of the server, KEY=VALUE (repeatable; `${VAR}` is expanded
    /// when toolshelf starts it).
    #[arg(long, value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// A new toolbox's description, which the agent reads before opening it (needed when
    /// the toolbox is new).
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,
    #[command(flatten)]
    pub config: ConfigArg,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The toolbox.
    #[arg(add = ArgValueCandidates::new(completion::toolboxes))]
    pub toolbox: String,
    /// The server's name in the toolbox.
    #[arg(add = ArgValueCandidates::new(completion::servers))]
    pub name: String,
    #[command(flatten)]
    pub config: ConfigArg,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub cache: CacheSwitch,
}

#[derive(Debug, Default, Args)]
pub struct CacheSwitch {
    /// Neither read nor write the persisted catalog: every toolbox starts its servers when it
    /// opens (as `"catalog": {"cache": false}` in the config does).
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Remove every file toolshelf wrote in the catalog folder.
    Clear,
    /// Print the catalog folder.
    Path,
}

#[derive(Debug, Args)]
pub struct TargetArgs {
    /// The server, as TOOLBOX/SERVER.
    #[arg(value_name = "TOOLBOX/SERVER", add = ArgValueCandidates::new(completion::toolbox_servers))]
    pub target: String,
    #[command(flatten)]
    pub config: ConfigArg,
}

#[derive(Debug, Args)]
pub struct LoginArgs {
    #[command(flatten)]
    pub server: TargetArgs,
    /// Only print the URL; do not open a browser.
    #[arg(long)]
    pub no_browser: bool,
}
