//! The child's message streams, whichever way it is reached (`link`: a process's pipes, or
//! `remote`'s bridge to a server), in a file of their own so that neither imports the other.

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The child's message streams: what it writes, what it reads.
pub(crate) struct Ends {
    pub read: Pin<Box<dyn AsyncRead + Send>>,
    pub write: Pin<Box<dyn AsyncWrite + Send>>,
}
