//! What each command does, for `main` to call once the process is set up: load the config,
//! serve, check, list or call, log in or out, import, or manage the persisted catalog.

use std::{future::Future, io::Write, process::ExitCode};

use clap::CommandFactory;

use super::{CacheCommand, CacheSwitch, Cli, Command};
use crate::config;

/// Runs `command` (all but `process-guard`, which `main` runs before there is a runtime) and
/// says how it ended; `shutdown` stops a server.
pub async fn run(command: Command, shutdown: impl Future<Output = ()>) -> ExitCode {
    match command {
        Command::ProcessGuard => ExitCode::SUCCESS,
        Command::Schema => {
            let schema = serde_json::to_string_pretty(&config::json_schema()).unwrap_or_default();
            write_stdout(&format!("{schema}\n"))
        }
        Command::Serve(args) => {
            let (path, _) = config::locate(args.config.config.clone());
            let Some(mut config) = load(args.config.config, &args.cache) else {
                return ExitCode::from(2);
            };
            config.code.enabled |= args.code;
            let reloads = reloads(path, args.cache.no_cache, args.code, args.watch);
            if let Some(path) = &args.audit_log
                && let Err(message) = crate::audit::install(path, args.audit_log_max_bytes)
            {
                let _ = writeln!(std::io::stderr().lock(), "error: {message}");
                return ExitCode::from(2);
            }
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
                match crate::flat::FlatSpec::new(&config, &args.toolbox, &args.separator) {
                    Ok(flat) => {
                        // The default `:` is the flat naming convention's own: a note, not a
                        // warning; a separator the user chose that breaks the guidance is.
                        if flat.separator_breaks_guidance()
                            && args.separator == crate::flat::DEFAULT_SEPARATOR
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
                let callers = token(args.token_file.as_deref()).and_then(|token| {
                    crate::transport::http::Callers::load(token, args.tokens_dir.as_deref())
                });
                let callers = match callers {
                    Ok(callers) => callers,
                    Err(message) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {message}");
                        return ExitCode::from(2);
                    }
                };
                if let Some(callers) = &callers {
                    let names: Vec<&str> = callers.names().collect();
                    tracing::info!(callers = %names.join(", "), "callers admitted by token");
                }
                let oauth = match args.oauth_issuer.is_empty() {
                    true => Ok(None),
                    false => crate::resource_server::OAuthOptions::from_flags(
                        args.oauth_issuer,
                        args.oauth_resource,
                        args.oauth_scope,
                        args.oauth_groups_claim,
                        address,
                    )
                    .map(Some),
                };
                let oauth = match oauth {
                    Ok(oauth) => oauth,
                    Err(message) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {message}");
                        return ExitCode::from(2);
                    }
                };
                let options = crate::transport::http::HttpOptions {
                    oauth,
                    address,
                    callers,
                    insecure_no_auth: args.insecure_no_auth,
                    allowed_origins: args.allowed_origin,
                    allowed_hosts: args.allowed_host,
                    flat,
                };
                return match crate::transport::http::serve_http(config, options, shutdown, reloads)
                    .await
                {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(error @ crate::transport::http::HttpServeError::Refused(_)) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {error}");
                        ExitCode::from(2)
                    }
                    Err(error) => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {error}");
                        ExitCode::FAILURE
                    }
                };
            }
            match crate::transport::stdio::serve(&config, flat, shutdown, reloads).await {
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
                crate::oauth::login(&config, &args.server.target, !args.no_browser, &mut say).await;
            login_exit(done)
        }
        Command::Logout(args) => {
            let Some(config) = load(args.config.config, &CacheSwitch::default()) else {
                return ExitCode::from(2);
            };
            let mut say = std::io::stderr().lock();
            login_exit(crate::oauth::logout(&config, &args.target, &mut say).await)
        }
        Command::Completions { shell } => match super::completion::script(shell) {
            Ok(script) => write_stdout(&script),
            Err(error) => {
                eprintln!("error: cannot write the completion script: {error}");
                ExitCode::FAILURE
            }
        },
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
            let listed = crate::shell::tools(
                &config,
                args.toolbox.as_deref(),
                args.json,
                &mut out,
                &mut err,
            )
            .await;
            crate::shell::CommandEnd::exit_status(listed)
        }
        Command::Search(args) => {
            let Some(config) = load(args.config.config, &CacheSwitch::default()) else {
                return ExitCode::from(2);
            };
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
            let done = match &args.eval {
                Some(file) => crate::shell::evaluate(&config, file, args.json, &mut out, &mut err),
                None => {
                    let query = args.query.join(" ");
                    crate::shell::search(&config, &query, args.limit, args.json, &mut out, &mut err)
                }
            };
            crate::shell::CommandEnd::exit_status(done)
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
            let request = crate::shell::ShellCall {
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
            crate::shell::CommandEnd::exit_status(
                crate::shell::call(&config, request, &mut out, &mut err).await,
            )
        }
        Command::Import(args) => {
            let request = crate::import::ImportRequest {
                from: args.from,
                file: args.file.as_deref(),
                toolbox: args.toolbox.as_deref(),
                write: args.write.as_deref(),
                force: args.force,
            };
            // stderr is not locked for the whole command: progress bars and logs write to it meanwhile.
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
            crate::shell::CommandEnd::exit_status(crate::import::import(
                &request, &mut out, &mut err,
            ))
        }
        Command::Init(args) => super::edits::init(args),
        Command::Add(args) => super::edits::add(args),
        Command::Remove(args) => super::edits::remove(args),
        Command::Install(args) => super::edits::install(args),
        Command::Uninstall(args) => super::edits::uninstall(args),
        Command::Consolidate(args) => super::edits::consolidate(args),
        Command::Cache(CacheCommand::Path) => match crate::catalog::cache::folder() {
            Ok(folder) => write_stdout(&format!("{}\n", folder.display())),
            Err(error) => {
                let _ = writeln!(std::io::stderr().lock(), "error: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Cache(CacheCommand::Clear) => match crate::catalog::cache::clear() {
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
            match crate::check::check(&config, &mut out).await {
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

fn login_exit(done: Result<(), crate::oauth::LoginError>) -> ExitCode {
    use crate::oauth::LoginError;
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

/// The configs SIGHUP (and with `watch`, each change of the file at `path`) reloads, read as
/// `serve` read the first (`--no-cache` and `--code` kept).
fn reloads(
    path: std::path::PathBuf,
    no_cache: bool,
    code: bool,
    watch: bool,
) -> crate::reload::Reloads {
    let read = path.clone();
    let load = move || match config::load(&read) {
        Ok(mut config) => {
            if no_cache {
                config.catalog.cache = false;
            }
            config.code.enabled |= code;
            Ok(config)
        }
        Err(config::ConfigError::Invalid { problems, .. }) => {
            Err(problems.iter().map(ToString::to_string).collect())
        }
        Err(error) => Err(vec![error.to_string()]),
    };
    crate::reload::start(path, watch, Box::new(load))
}

fn write_stdout(text: &str) -> ExitCode {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
