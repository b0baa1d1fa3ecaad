//! The commands that edit a config file: toolshelf's own (`init`, `add`, `remove`) and an MCP
//! client's (`install`, `uninstall`, and `consolidate`, which edits both).

use std::process::ExitCode;

use super::{
    AddArgs, ClientArgs, ConsolidateArgs, InitArgs, InstallArgs, RemoveArgs, UninstallArgs,
};
use crate::{config, config_commands, install, shell::CommandEnd};

pub(super) fn init(args: InitArgs) -> ExitCode {
    let (path, _) = config::locate(args.config.config);
    if args.import {
        let request = crate::import::ImportRequest {
            from: args.from,
            file: None,
            toolbox: None,
            write: Some(&path),
            force: args.force,
        };
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
        return CommandEnd::exit_status(crate::import::import(&request, &mut out, &mut err));
    }
    CommandEnd::exit_status(config_commands::init(
        &path,
        args.force,
        &mut std::io::stdout().lock(),
    ))
}

pub(super) fn add(args: AddArgs) -> ExitCode {
    let (path, source) = config::locate(args.config.config);
    let server = config_commands::NewServer {
        toolbox: &args.toolbox,
        name: &args.name,
        description: args.description.as_deref(),
        url: args.url.as_deref(),
        command: &args.command,
        env: &args.env,
    };
    CommandEnd::exit_status(config_commands::add(
        &path,
        source,
        &server,
        &mut std::io::stdout().lock(),
    ))
}

pub(super) fn remove(args: RemoveArgs) -> ExitCode {
    let (path, source) = config::locate(args.config.config);
    let out = &mut std::io::stdout().lock();
    CommandEnd::exit_status(config_commands::remove(
        &path,
        source,
        &args.toolbox,
        &args.name,
        out,
    ))
}

pub(super) fn install(args: InstallArgs) -> ExitCode {
    let request = request(&args.client, args.config.config, &args.env);
    CommandEnd::exit_status(install::install(&request, &mut std::io::stdout().lock()))
}

pub(super) fn uninstall(args: UninstallArgs) -> ExitCode {
    let request = request(&args.client, None, &[]);
    CommandEnd::exit_status(install::uninstall(&request, &mut std::io::stdout().lock()))
}

fn request<'a>(
    args: &'a ClientArgs,
    config: Option<std::path::PathBuf>,
    env: &'a [String],
) -> install::InstallRequest<'a> {
    install::InstallRequest {
        client: args.client,
        scope: args.scope,
        config,
        dry_run: args.dry_run,
        file: args.file.as_deref(),
        env,
    }
}

pub(super) fn consolidate(args: ConsolidateArgs) -> ExitCode {
    let request = install::ConsolidateRequest {
        client: args.client.client,
        scope: args.client.scope,
        file: args.client.file.as_deref(),
        config: args.config.config,
        toolbox: args.toolbox.as_deref(),
        dry_run: args.client.dry_run,
    };
    let out = &mut std::io::stdout().lock();
    CommandEnd::exit_status(match args.undo {
        true => install::undo_consolidate(&request, out),
        false => install::consolidate(&request, out),
    })
}
