//! `toolshelf-floor stdio-loop -- COMMAND...`: the stdio floor's copy of lines, done on the
//! event loop toolshelf runs on (tokio's single-threaded runtime, the agent's pipes opened
//! non-blocking as rmcp's `stdio_pipes` opens them for toolshelf) in place of two threads
//! blocked in `read`. What it adds over the stdio floor is what an event loop costs a relay
//! that does no work; what toolshelf adds over it is toolshelf's work.

use std::process::ExitCode;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

pub async fn relay(command: &str, args: &[&str]) -> ExitCode {
    let Some((_child, to_child, from_child)) = super::child_on_event_loop(command, args) else {
        return ExitCode::FAILURE;
    };
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    // Agent → child in a task of its own; its end (stdin closed) closes the child's stdin.
    let upward = tokio::spawn(copy_lines(stdin, to_child));
    copy_lines(from_child, stdout).await;
    upward.abort();
    ExitCode::SUCCESS
}

/// Copies `from` to `to` a line at a time, each line written whole as it is complete.
async fn copy_lines(from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
    let mut from = BufReader::with_capacity(1 << 16, from);
    let mut line = Vec::with_capacity(1 << 12);
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if to.write_all(&line).await.is_err() {
                    return;
                }
            }
        }
    }
}
