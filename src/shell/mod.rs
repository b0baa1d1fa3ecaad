//! toolshelf from the shell, for scripts and people rather than agents: `tools` lists what the
//! config offers, `call` calls one tool. Each runs its own session of the same core the agent
//! paths use (`Toolboxes`, `child_call`), starts only what it needs and stops it before returning.
//! Results go to stdout, messages to stderr; the exit status says what happened (0 ok, 1 a
//! failure, 2 bad usage or a bad config).

mod arguments;
mod call;
mod progress;
mod search;
mod table;
mod tools;

pub use call::{ShellCall, call};
pub(crate) use progress::StartsShown;
pub use search::{evaluate, search};
pub(crate) use table::write_table;
pub use tools::tools;

/// What a shell command ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandEnd {
    Done,
    /// Something failed (a server, a tool, toolshelf's own lookup); the reason is on stderr.
    Failed,
    /// The command line was wrong; the reason is on stderr.
    Usage,
}

impl CommandEnd {
    /// The process's exit status.
    pub fn code(self) -> u8 {
        match self {
            CommandEnd::Done => 0,
            CommandEnd::Failed => 1,
            CommandEnd::Usage => 2,
        }
    }

    /// The exit status of a command that wrote `done`; output cut short by a closed pipe
    /// (`| head`) is no failure.
    pub fn exit_status(done: std::io::Result<CommandEnd>) -> std::process::ExitCode {
        match done {
            Ok(end) => std::process::ExitCode::from(end.code()),
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                std::process::ExitCode::SUCCESS
            }
            Err(error) => {
                tracing::error!(%error, "cannot write the output");
                std::process::ExitCode::FAILURE
            }
        }
    }
}
