//! The process tree, the one place that knows how each system holds a child and what it
//! starts: everything else in `children` asks this module to contain a command, to ask a child to
//! stop, to kill what is left of it, and to keep its tree from outliving toolshelf.
//!
//! - Unix: each child leads a process group of its own; a stop is SIGTERM to the group, then
//!   SIGKILL; on Linux the child also gets a parent-death signal; and the guard
//!   (`toolshelf process-guard`) kills the groups still registered when toolshelf is gone, even
//!   SIGKILLed.
//! - Windows: a bare command is looked up on `PATH` with `PATHEXT` (`program_search`); each child
//!   runs in a Job Object that kills its processes when its last handle
//!   closes, which toolshelf holds, so no child outlives toolshelf however it ends; there is no
//!   signal to ask a process to stop, so a stop is the end of its stdin, then the job terminated.

#[cfg(unix)]
mod guard;
#[cfg(any(windows, test))]
mod program_search;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as system;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as system;

#[cfg(unix)]
pub use guard::run as run_guard;
pub(crate) use system::{ask_to_stop, contain, exit_signal, kill_tree, program, release, watch};

/// The argument that runs toolshelf as the guard (a process that does nothing where the system
/// keeps children from outliving toolshelf itself).
pub const GUARD_COMMAND: &str = "process-guard";

/// The guard's own life, where the system needs one; elsewhere it reads its input to the end.
#[cfg(not(unix))]
pub fn run_guard(input: impl std::io::BufRead) {
    for _ in input.lines() {}
}

/// The path a client's config names to start toolshelf (`install --client`); `None` when it
/// cannot be made absolute.
pub(crate) fn path_for_clients(path: &std::path::Path) -> Option<std::path::PathBuf> {
    system::path_for_clients(path)
}

/// The command and arguments a client's config holds to run `command` with `args`, as a client
/// starts programs: without a shell.
pub(crate) fn command_for_clients(command: String, args: Vec<String>) -> (String, Vec<String>) {
    system::command_for_clients(command, args)
}

/// Opens `url` in the user's browser where there is a desktop to show it on (the caller prints
/// the URL either way): the one program toolshelf starts that is not a child.
pub(crate) fn open_in_browser(url: &str) {
    let Some(opener) = system::browser_opener() else {
        return;
    };
    if let Ok(mut opened) = tokio::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        // Reaped in the background: the opener hands the URL over and exits.
        tokio::spawn(async move {
            let _ = opened.wait().await;
        });
    }
}
