//! The `toolshelf` binary: parse the command line, log to stderr, run, exit with a status that
//! says what happened (0 ok, 1 a server failed `check` or serving failed, 2 bad config or usage).

// The serve future nests rmcp's service loop, the transport and the call path; in an optimised
// build the MIR inliner computes its layout through more levels than the default 128.
#![recursion_limit = "256"]

use std::{io::Write, process::ExitCode};

use clap::{CommandFactory, Parser};
use toolshelf::{
    cli::{CacheCommand, CacheSwitch, Cli, Command},
    config,
};
use tracing_subscriber::EnvFilter;

/// toolshelf's own events at info, other crates' from warn up, and rmcp's only from error up:
/// its warnings are about requests the agent already got an answer for (a rejected tool name is
/// logged as a debug dump of the error). A default log has a line per event a user can act on.
const DEFAULT_LOG_FILTER: &str = "warn,toolshelf=info,rmcp=error";
/// `check`, `tools` and `call` print their own results, a failed start among them: the log
/// only says what went wrong besides (a start's failure would be said twice).
const CHECK_LOG_FILTER: &str = "warn,rmcp=error,toolshelf::toolboxes::slot=error";

fn main() -> ExitCode {
    return_large_buffers_to_the_system();
    let cli = Cli::parse();
    if let Command::ProcessGuard = cli.command {
        toolshelf::run_process_guard(std::io::stdin().lock());
        return ExitCode::SUCCESS;
    }
    let default_filter = match cli.command {
        Command::Check(_) | Command::Tools(_) | Command::Call(_) => CHECK_LOG_FILTER,
        _ => DEFAULT_LOG_FILTER,
    };
    let access_log = matches!(&cli.command, Command::Serve(args) if args.access_log);
    init_logging(cli.log_level.as_deref(), default_filter, access_log);
    // One thread: toolshelf mostly waits on pipes, and on a small machine the agent, toolshelf
    // and the children already compete for the cores; measured faster than a thread pool (see
    // the README's Performance section). Children are spawned from this thread, which lives as
    // long as the process, as their parent-death signal requires.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(cli.command))
}

async fn run(command: Command) -> ExitCode {
    match command {
        Command::ProcessGuard => ExitCode::SUCCESS,
        Command::Schema => {
            let schema = serde_json::to_string_pretty(&config::json_schema()).unwrap_or_default();
            write_stdout(&format!("{schema}\n"))
        }
        Command::Serve(args) => {
            let Some(config) = load(args.config.config, &args.cache) else {
                return ExitCode::from(2);
            };
            // Said once here; an open or a call of such a server gets the reason as its error.
            for (toolbox, server) in config.toolboxes.values().flat_map(|toolbox| {
                toolbox
                    .servers
                    .iter()
                    .map(move |server| (&toolbox.name, server))
            }) {
                if let Some(reason) = &server.unavailable {
                    tracing::warn!(toolbox = %toolbox, server = %server.name, %reason, "server unavailable until the config or the environment changes");
                }
            }
            let flat = if args.flat {
                match toolshelf::flat::FlatSpec::new(&config, &args.toolbox, &args.separator) {
                    Ok(flat) => {
                        // The default `:` is the flat naming convention's own: a note, not a
                        // warning; a separator the user chose that breaks the guidance is.
                        if flat.separator_breaks_guidance()
                            && args.separator == toolshelf::flat::DEFAULT_SEPARATOR
                        {
                            tracing::info!(
                                separator = %args.separator,
                                "tool names are SERVER:TOOL; a client that allows only the MCP guidance's characters in tool names (A-Z a-z 0-9 _ - .) needs --separator __"
                            );
                        } else if flat.separator_breaks_guidance() {
                            tracing::warn!(
                                separator = %args.separator,
                                "every tool name will hold the separator, which the MCP guidance for tool names (1 to 128 of A-Z a-z 0-9 _ - .) does not allow; clients that check names refuse them: use --separator __ for those"
                            );
                        }
                        Some(std::sync::Arc::new(flat))
                    }
                    Err(message) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {message}");
                        return ExitCode::from(2);
                    }
                }
            } else {
                None
            };
            if let Some(address) = args.http {
                let token = match token(args.token_file.as_deref()) {
                    Ok(token) => token,
                    Err(message) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {message}");
                        return ExitCode::from(2);
                    }
                };
                let options = toolshelf::transport::http::HttpOptions {
                    address,
                    token,
                    insecure_no_auth: args.insecure_no_auth,
                    allowed_origins: args.allowed_origin,
                    allowed_hosts: args.allowed_host,
                    flat,
                };
                return match toolshelf::transport::http::serve_http(
                    config,
                    options,
                    shutdown_signal(),
                )
                .await
                {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(error @ toolshelf::transport::http::HttpServeError::Refused(_)) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {error}");
                        ExitCode::from(2)
                    }
                    Err(error) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {error}");
                        ExitCode::FAILURE
                    }
                };
            }
            match toolshelf::transport::stdio::serve(&config, flat, shutdown_signal()).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    tracing::error!(%error, "serve failed");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Login(args) => {
            let Some(config) = load(args.server.config.config, &CacheSwitch::default()) else {
                return ExitCode::from(2);
            };
            let mut say = std::io::stderr().lock();
            let done =
                toolshelf::oauth::login(&config, &args.server.target, !args.no_browser, &mut say)
                    .await;
            login_exit(done)
        }
        Command::Logout(args) => {
            let Some(config) = load(args.config.config, &CacheSwitch::default()) else {
                return ExitCode::from(2);
            };
            let mut say = std::io::stderr().lock();
            login_exit(toolshelf::oauth::logout(&config, &args.target, &mut say).await)
        }
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "toolshelf", &mut script);
            write_stdout(&String::from_utf8_lossy(&script))
        }
        Command::Man => {
            let mut page = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut page) {
                Ok(()) => write_stdout(&String::from_utf8_lossy(&page)),
                Err(error) => {
                    tracing::error!(%error, "cannot render the man page");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Tools(args) => {
            let Some(config) = load(args.config.config, &args.cache) else {
                return ExitCode::from(2);
            };
            // stderr is not locked for the whole command: progress bars and logs write to it meanwhile.
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
            let listed = toolshelf::shell::tools(
                &config,
                args.toolbox.as_deref(),
                args.json,
                &mut out,
                &mut err,
            )
            .await;
            shell_exit(listed)
        }
        Command::Call(args) => {
            let Some(config) = load(args.config.config, &args.cache) else {
                return ExitCode::from(2);
            };
            let base = match (&args.args, &args.args_file) {
                (Some(json), _) => Some(json.clone()),
                (None, Some(file)) => match read_arguments(file) {
                    Ok(text) => Some(text),
                    Err(message) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {message}");
                        return ExitCode::from(2);
                    }
                },
                (None, None) => None,
            };
            let request = toolshelf::shell::CallRequest {
                toolbox: &args.toolbox,
                server: &args.server,
                tool: &args.tool,
                pairs: &args.arguments,
                base,
                json: args.json,
                save_dir: args.save_dir.as_deref(),
            };
            // stderr is not locked for the whole command: progress bars and logs write to it meanwhile.
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
            shell_exit(toolshelf::shell::call(&config, request, &mut out, &mut err).await)
        }
        Command::Import(args) => {
            let request = toolshelf::import::ImportRequest {
                from: args.from,
                file: args.file.as_deref(),
                toolbox: args.toolbox.as_deref(),
                write: args.write.as_deref(),
                force: args.force,
            };
            // stderr is not locked for the whole command: progress bars and logs write to it meanwhile.
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
            shell_exit(toolshelf::import::import(&request, &mut out, &mut err))
        }
        Command::Cache(CacheCommand::Path) => match toolshelf::catalog::cache::folder() {
            Ok(folder) => write_stdout(&format!("{}\n", folder.display())),
            Err(error) => {
                let _ = writeln!(std::io::stderr().lock(), "error: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Cache(CacheCommand::Clear) => match toolshelf::catalog::cache::clear() {
            Ok((folder, removed)) => {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "removed {removed} catalog file(s) from {}",
                    folder.display()
                );
                ExitCode::SUCCESS
            }
            Err(error) => {
                let _ = writeln!(std::io::stderr().lock(), "error: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Check(args) => {
            let Some(config) = load(args.config.config, &args.cache) else {
                return ExitCode::from(2);
            };
            let mut out = std::io::stdout().lock();
            match toolshelf::check::check(&config, &mut out).await {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => {
                    tracing::error!(%error, "cannot write the report");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// The bearer token of `serve --http`: the file's content, else `TOOLSHELF_TOKEN`; surrounding
/// whitespace (the file's final newline) is not part of it.
fn token(file: Option<&std::path::Path>) -> Result<Option<String>, String> {
    let text = match file {
        Some(file) => std::fs::read_to_string(file)
            .map_err(|error| format!("cannot read the token file {}: {error}", file.display()))?,
        None => match std::env::var("TOOLSHELF_TOKEN") {
            Ok(text) => text,
            Err(_) => return Ok(None),
        },
    };
    let token = text.trim();
    if token.is_empty() {
        return Err(match file {
            Some(file) => format!(
                "the token file {} is empty; put the token in it",
                file.display()
            ),
            None => "TOOLSHELF_TOKEN is set but empty; set it to the token, or unset it".into(),
        });
    }
    Ok(Some(token.to_owned()))
}

/// The exit status of a shell command; output cut short by a closed pipe (`| head`) is no
/// failure.
fn shell_exit(done: std::io::Result<toolshelf::shell::CommandEnd>) -> ExitCode {
    match done {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "cannot write the output");
            ExitCode::FAILURE
        }
    }
}

/// The text of `--args-file FILE` (`-`: standard input).
fn read_arguments(file: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    if file == std::path::Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| format!("cannot read the arguments from standard input: {error}"))?;
        return Ok(text);
    }
    std::fs::read_to_string(file)
        .map_err(|error| format!("cannot read the arguments file {}: {error}", file.display()))
}

fn login_exit(done: Result<(), toolshelf::oauth::LoginError>) -> ExitCode {
    use toolshelf::oauth::LoginError;
    let (code, message) = match done {
        Ok(()) => return ExitCode::SUCCESS,
        Err(LoginError::Usage(message)) => (2, message),
        Err(LoginError::Failed(message)) => (1, message),
    };
    let _ = writeln!(std::io::stderr().lock(), "error: {message}");
    ExitCode::from(code)
}

/// The config, with `--no-cache` applied.
fn load(from_cli: Option<std::path::PathBuf>, cache: &CacheSwitch) -> Option<config::Config> {
    let (path, from) = config::locate(from_cli);
    match config::load_from(&path, from) {
        Ok(mut config) => {
            if cache.no_cache {
                config.catalog.cache = false;
            }
            for note in &config.notes {
                tracing::warn!(file = %path.display(), "{note}");
            }
            Some(config)
        }
        Err(error) => {
            let _ = writeln!(std::io::stderr().lock(), "error: {error}");
            None
        }
    }
}

fn write_stdout(text: &str) -> ExitCode {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn init_logging(level: Option<&str>, default_filter: &str, access_log: bool) {
    let mut filter = match level {
        Some(level) => EnvFilter::try_new(level).ok(),
        None => EnvFilter::try_from_default_env().ok(),
    }
    .unwrap_or_else(|| EnvFilter::new(default_filter));
    if access_log && let Ok(access) = toolshelf::transport::http::ACCESS_LOG_FILTER.parse() {
        filter = filter.add_directive(access);
    }
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .init();
}

/// glibc serves an allocation from its heap once it is below a threshold that grows with the
/// largest block freed (up to 32 MiB), and a heap rarely shrinks: after one 30 MB tool result
/// toolshelf stayed 30 MB larger for good. A fixed threshold keeps every block of 1 MiB or more
/// in its own mapping, returned to the system when freed; smaller ones are unaffected.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn return_large_buffers_to_the_system() {
    const THRESHOLD: libc::c_int = 1024 * 1024;
    // SAFETY: called first thing in `main`, before any other thread exists or allocates;
    // mallopt only sets a parameter of the allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_buffers_to_the_system() {}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        tracing::warn!("cannot listen for signals; stop toolshelf by closing its stdin");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => tracing::info!("SIGINT received"),
        _ = terminate.recv() => tracing::info!("SIGTERM received"),
    }
}
