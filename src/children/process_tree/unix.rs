//! The process tree on Unix: process groups, SIGTERM then SIGKILL, the parent-death signal on
//! Linux, and the guard (`guard`) for groups left behind by a SIGKILLed toolshelf.

use std::{ffi::OsString, process::ExitStatus};

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};

use super::guard::Guard;

const SIGTERM: i32 = 15;
const SIGKILL: i32 = 9;

/// The program `command` names: as written, which `PATH` resolves as the user expects here.
pub(crate) fn program(command: &str, _environment: &[(OsString, OsString)]) -> OsString {
    OsString::from(command)
}

/// `command` in a process group of its own, killed with its group when dropped.
pub(crate) fn contain(mut command: tokio::process::Command) -> CommandWrap {
    die_with_parent(&mut command);
    let mut wrapped = CommandWrap::from(command);
    wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    wrapped
}

/// Asks the child's group to stop (SIGTERM); whether the signal could be sent.
pub(crate) fn ask_to_stop(child: &mut Box<dyn ChildWrapper>) -> bool {
    child.signal(SIGTERM).is_ok()
}

/// Kills whatever is left in the child's group (npx → node, `sh -c "server; true"` → server).
pub(crate) fn kill_tree(child: &mut Box<dyn ChildWrapper>) {
    let _ = child.signal(SIGKILL);
}

/// The signal that ended a process, if one did.
pub(crate) fn exit_signal(status: &ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

/// The tree of process `id` (its group) is to be killed if toolshelf dies.
pub(crate) fn watch(id: u32) {
    Guard::shared().watch(id);
}

/// The tree of process `id` is gone.
pub(crate) fn release(id: u32) {
    Guard::shared().release(id);
}

/// The program that opens a URL in the user's browser, when there is a desktop to show it on.
pub(super) fn browser_opener() -> Option<&'static str> {
    if cfg!(target_os = "macos") {
        return Some("open");
    }
    let desktop =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    desktop.then_some("xdg-open")
}

/// Asks Linux to SIGKILL the child when toolshelf dies, even by SIGKILL, so that no child outlives
/// it. The process group handles every orderly stop; this covers the one toolshelf cannot see.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
    // functions (prctl, getppid, _exit), touching no memory shared with the parent.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl: then nobody will send the signal.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Elsewhere the guard alone covers a SIGKILLed toolshelf.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut tokio::process::Command) {}

/// The path a client is given to start toolshelf by: symbolic links resolved (a global npm
/// install links its binary), so the entry keeps working from the client's own folder.
pub(super) fn path_for_clients(path: &std::path::Path) -> Option<std::path::PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// How a client, which starts programs without a shell, runs `command`: as written.
pub(super) fn command_for_clients(command: String, args: Vec<String>) -> (String, Vec<String>) {
    (command, args)
}
