//! The process tree on Windows: a Job Object per child, which kills every process in it when
//! toolshelf's handle to it closes (toolshelf ended, however), and no console window for it.
//! Windows has no signal that asks a process to stop: a stop is the end of its stdin, a grace,
//! then the job terminated.

use std::{ffi::OsString, process::ExitStatus};

use process_wrap::tokio::{ChildWrapper, CommandWrap, CreationFlags, JobObject, KillOnDrop};

/// A child started from a console program gets no console window of its own.
const CREATE_NO_WINDOW: u32 = 0x0800_0000;

/// The program `command` names, looked up on the child's `PATH` with its `PATHEXT`
/// (`program_search`): `npx` is `npx.cmd`.
pub(crate) fn program(command: &str, environment: &[(OsString, OsString)]) -> OsString {
    let variable = |name: &str| {
        environment
            .iter()
            .rev()
            .find(|(key, _)| {
                key.to_str()
                    .is_some_and(|key| key.eq_ignore_ascii_case(name))
            })
            .and_then(|(_, value)| value.to_str())
    };
    match super::program_search::search(command, variable("PATH"), variable("PATHEXT"), |file| {
        file.is_file()
    }) {
        Some(found) => found.into_os_string(),
        None => OsString::from(command),
    }
}

/// `command` in a Job Object of its own that kills its processes when closed.
pub(crate) fn contain(command: tokio::process::Command) -> CommandWrap {
    let mut wrapped = CommandWrap::from(command);
    wrapped
        .wrap(CreationFlags(
            ::windows::Win32::System::Threading::PROCESS_CREATION_FLAGS(CREATE_NO_WINDOW),
        ))
        .wrap(JobObject)
        .wrap(KillOnDrop);
    wrapped
}

/// No signal asks a Windows process to stop: the caller goes on to `kill_tree` after its grace.
pub(crate) fn ask_to_stop(_child: &mut Box<dyn ChildWrapper>) -> bool {
    false
}

/// Terminates the child's job: every process in it.
pub(crate) fn kill_tree(child: &mut Box<dyn ChildWrapper>) {
    let _ = child.start_kill();
}

/// Windows ends processes with an exit code, never a signal.
pub(crate) fn exit_signal(_status: &ExitStatus) -> Option<i32> {
    None
}

/// The job's kill-on-close covers a toolshelf that is gone: nothing to tell anyone.
pub(crate) fn watch(_id: u32) {}

/// See `watch`.
pub(crate) fn release(_id: u32) {}

/// The program that opens a URL in the user's browser: Explorer hands it to the default one (no
/// `cmd /c start`, which would read `&` in the URL as a command separator).
pub(super) fn browser_opener() -> Option<&'static str> {
    Some("explorer")
}

/// The path a client is given to start toolshelf by: absolute, not canonical, which on Windows
/// is a `\\?\` path that clients and `cmd` do not all read.
pub(super) fn path_for_clients(path: &std::path::Path) -> Option<std::path::PathBuf> {
    std::path::absolute(path).ok()
}

/// How a client runs `command`: clients start programs without a shell (Node's `spawn`), which
/// runs an `.exe` only, so `npx`, a `.cmd` on Windows, fails there (`spawn npx ENOENT`). A bare
/// name not found as an `.exe` or `.com` on this `PATH` goes through `cmd /c`, which finds it
/// with `PATHEXT` as a shell does.
pub(super) fn command_for_clients(command: String, args: Vec<String>) -> (String, Vec<String>) {
    let path = std::env::var("PATH").ok();
    let found =
        super::program_search::search(&command, path.as_deref(), Some(".EXE;.COM"), |file| {
            file.is_file()
        });
    let bare = !command.contains(['/', '\\', ':', '.']);
    if !bare || found.is_some() {
        return (command, args);
    }
    let mut through_cmd = vec!["/c".to_owned(), command];
    through_cmd.extend(args);
    ("cmd".to_owned(), through_cmd)
}
