//! How a child process ended, or why it never started: what `process` reports and the
//! registry keeps, in a file of its own so neither imports the other for it.

use std::{fmt, process::ExitStatus};

use super::process_tree;

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exit(pub ExitStatus);

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0.code(), process_tree::exit_signal(&self.0)) {
            (Some(code), _) => write!(f, "exited with status {code}"),
            (None, Some(signal)) => write!(f, "was killed by signal {signal}"),
            (None, None) => write!(f, "ended ({})", self.0),
        }
    }
}

/// Why a process could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SpawnError {
    #[error(
        "cannot run '{command}': {source}. Check `command` in the config and that it is on PATH"
    )]
    Io {
        command: String,
        source: std::io::Error,
    },
    #[error("toolshelf is shutting down")]
    ShuttingDown,
    /// A remote server's connection could not be set up (not: could not be reached).
    #[error("{0}")]
    Remote(String),
}
