//! `toolshelf-floor`: the smallest relays that could sit where toolshelf sits, for the
//! benchmark's floors only (never shipped: the packages carry `toolshelf` alone).
//!
//! `toolshelf-floor stdio -- COMMAND [ARGS...]` starts COMMAND and copies JSON-RPC lines from
//! its own stdin to the child's and from the child's stdout to its own, parsing nothing beyond
//! the line ends; `stdio-loop` does the same on toolshelf's event loop (`event_loop`);
//! `stdio-checked` also reads and checks each `use_tool` call and its answer as toolshelf must
//! (`checked_relay`).
//! `toolshelf-floor http ADDR -- COMMAND [ARGS...]` is the same child behind the smallest
//! streamable-HTTP front (`http_front`), on the single-threaded runtime toolshelf uses. What
//! toolshelf adds over these is what toolshelf itself costs.

mod checked_relay;
mod event_loop;
mod http_front;

use std::{
    io::{BufRead, BufReader, BufWriter, Write},
    process::{Command, ExitCode, Stdio},
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["stdio", "--", command, rest @ ..] => stdio(command, rest),
        ["stdio-loop", "--", command, rest @ ..] => on_event_loop(event_loop::relay(command, rest)),
        [
            "stdio-checked",
            toolbox,
            server,
            tools,
            "--",
            command,
            rest @ ..,
        ] => on_event_loop(checked_relay::relay(toolbox, server, tools, command, rest)),
        ["http", address, "--", command, rest @ ..] => {
            on_event_loop(http_front::serve(address, command, rest))
        }
        _ => {
            eprintln!(
                "usage: toolshelf-floor stdio|stdio-loop|stdio-checked TOOLBOX SERVER TOOLS|http ADDR \
                 -- COMMAND [ARGS...]"
            );
            ExitCode::from(2)
        }
    }
}

/// Runs `relay` on the single-threaded runtime toolshelf uses.
fn on_event_loop(relay: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(relay),
        Err(_) => ExitCode::FAILURE,
    }
}

fn stdio(command: &str, args: &[&str]) -> ExitCode {
    let mut command = child_command(command, args);
    let Some(mut child) = started(command.spawn()) else {
        return ExitCode::FAILURE;
    };
    let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return ExitCode::FAILURE;
    };
    // Agent → child on a thread of its own; its end (stdin closed) closes the child's stdin.
    std::thread::spawn(move || copy_lines(std::io::stdin().lock(), to_child));
    copy_lines(from_child, std::io::stdout().lock());
    let _ = child.kill();
    let _ = child.wait();
    ExitCode::SUCCESS
}

/// COMMAND started for a relay on the event loop (killed when dropped), with its stdin and
/// stdout; `None` once the reason is printed.
fn child_on_event_loop(
    command: &str,
    args: &[&str],
) -> Option<(
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::process::ChildStdout,
)> {
    let mut command = tokio::process::Command::from(child_command(command, args));
    command.kill_on_drop(true);
    let mut child = started(command.spawn())?;
    let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return None;
    };
    Some((child, to_child, from_child))
}

/// COMMAND with ARGS, its stdin and stdout piped to the floor, its stderr the floor's.
fn child_command(command: &str, args: &[&str]) -> Command {
    let mut child = Command::new(command);
    child
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    child
}

/// The started child, or `None` once the reason is printed.
fn started<T>(spawned: std::io::Result<T>) -> Option<T> {
    spawned
        .inspect_err(|error| eprintln!("toolshelf-floor: cannot start the child: {error}"))
        .ok()
}

/// Copies `from` to `to` a line at a time, each line flushed as it is complete.
fn copy_lines(from: impl std::io::Read, to: impl Write) {
    let mut from = BufReader::with_capacity(1 << 16, from);
    let mut to = BufWriter::with_capacity(1 << 16, to);
    let mut line = Vec::with_capacity(1 << 12);
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if to.write_all(&line).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}
