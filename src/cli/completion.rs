//! The names the shell completes, asked of toolshelf at each TAB (clap's `COMPLETE=SHELL`
//! protocol, which `toolshelf completions SHELL` registers): toolbox and server names from the
//! config, tool names from the persisted catalog. Nothing is started: a server whose tools were
//! never listed offers none.

use std::{ffi::OsString, path::PathBuf};

use clap_complete::CompletionCandidate;

use crate::config::Config;

/// The script that registers toolshelf's completions with `shell`: at each TAB it runs
/// `toolshelf` from PATH with `COMPLETE` set, which main answers.
pub(super) fn script(shell: clap_complete::Shell) -> std::io::Result<String> {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let registration: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Zsh => &Zsh,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::Elvish => &Elvish,
        _ => &Powershell,
    };
    let mut script = Vec::new();
    let name = "toolshelf";
    registration.write_registration("COMPLETE", name, name, name, &mut script)?;
    Ok(String::from_utf8_lossy(&script).into_owned())
}

/// The config the command line being completed names (`--config FILE`), else the one toolshelf
/// would read; `None` when it does not load.
fn config() -> Option<Config> {
    let words: Vec<OsString> = std::env::args_os().collect();
    let named = words
        .windows(2)
        .find_map(|pair| (pair[0] == "--config").then(|| PathBuf::from(&pair[1])));
    let named = named.or_else(|| {
        words
            .iter()
            .find_map(|word| word.to_str()?.strip_prefix("--config=").map(PathBuf::from))
    });
    let (path, source) = crate::config::locate(named);
    crate::config::load_from(&path, source).ok()
}

/// The words already typed on the line being completed.
fn typed() -> Vec<String> {
    std::env::args().collect()
}

fn candidates(names: impl IntoIterator<Item = String>) -> Vec<CompletionCandidate> {
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// Toolbox names, with their descriptions as help.
pub(super) fn toolboxes() -> Vec<CompletionCandidate> {
    let Some(config) = config() else {
        return Vec::new();
    };
    config
        .toolboxes
        .values()
        .map(|toolbox| {
            CompletionCandidate::new(&toolbox.name).help(Some(toolbox.description.clone().into()))
        })
        .collect()
}

/// Server names: those of the toolbox typed on the line, else of every toolbox.
pub(super) fn servers() -> Vec<CompletionCandidate> {
    let Some(config) = config() else {
        return Vec::new();
    };
    let typed = typed();
    let chosen: Vec<_> = config
        .toolboxes
        .values()
        .filter(|toolbox| typed.contains(&toolbox.name))
        .collect();
    let toolboxes = match chosen.is_empty() {
        true => config.toolboxes.values().collect(),
        false => chosen,
    };
    let mut names: Vec<String> = toolboxes
        .iter()
        .flat_map(|toolbox| toolbox.servers.iter().map(|server| server.name.clone()))
        .collect();
    names.dedup();
    candidates(names)
}

/// `TOOLBOX/SERVER` pairs, for `login` and `logout`.
pub(super) fn toolbox_servers() -> Vec<CompletionCandidate> {
    let Some(config) = config() else {
        return Vec::new();
    };
    candidates(config.toolboxes.values().flat_map(|toolbox| {
        toolbox
            .servers
            .iter()
            .map(|server| format!("{}/{}", toolbox.name, server.name))
    }))
}

/// Tool names from the persisted catalog, as the agent calls them (aliases, filters): of the
/// toolbox and server typed on the line, else of every server.
pub(super) fn tools() -> Vec<CompletionCandidate> {
    let Some(config) = config() else {
        return Vec::new();
    };
    let typed = typed();
    let catalog = crate::search::remembered(&config);
    let entries = catalog.index.entries();
    let chosen = |entry: &&crate::search::Entry| {
        typed.contains(&entry.toolbox) && typed.contains(&entry.server)
    };
    let narrowed = entries.iter().any(|entry| chosen(&entry));
    let mut names: Vec<String> = entries
        .iter()
        .filter(|entry| !narrowed || chosen(entry))
        .map(|entry| entry.name.clone())
        .collect();
    names.sort();
    names.dedup();
    candidates(names)
}
