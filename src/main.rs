//! The `toolshelf` binary: parse the command line, log to stderr, run, exit with a status that
//! says what happened (0 ok, 1 a server failed `check` or serving failed, 2 bad config or usage).

// The serve future nests rmcp's service loop, the transport and the call path; in an optimised
// build the MIR inliner computes its layout through more levels than the default 128.
#![recursion_limit = "256"]

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use toolshelf::cli::{Cli, Command};
use tracing_subscriber::EnvFilter;

/// toolshelf's own events at info, other crates' from warn up, and rmcp's only from error up:
/// its warnings are about requests the agent already got an answer for (a rejected tool name is
/// logged as a debug dump of the error). A default log has a line per event a user can act on.
const DEFAULT_LOG_FILTER: &str = "warn,toolshelf=info,rmcp=error";
/// `check`, `tools` and `call` print their own results, a failed start among them: the log
/// only says what went wrong besides (a start's failure would be said twice).
/// A child's exit (`toolshelf::child_exit`) is in their output too.
const CHECK_LOG_FILTER: &str =
    "warn,rmcp=error,toolshelf::toolboxes::slot=error,toolshelf::child_exit=error";

fn main() -> ExitCode {
    // A shell asking for completions (COMPLETE=bash toolshelf -- …) gets them and nothing else.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    return_large_buffers_to_the_system();
    let cli = Cli::parse();
    if let Command::ProcessGuard = cli.command {
        toolshelf::run_process_guard(std::io::stdin().lock());
        return ExitCode::SUCCESS;
    }
    let default_filter = match cli.command {
        Command::Check(_) | Command::Tools(_) | Command::Call(_) => CHECK_LOG_FILTER,
        _ => DEFAULT_LOG_FILTER,
    };
    let access_log = matches!(&cli.command, Command::Serve(args) if args.access_log);
    init_logging(cli.log_level.as_deref(), default_filter, access_log);
    // One thread: toolshelf mostly waits on pipes, and on a small machine the agent, toolshelf
    // and the children already compete for the cores; measured faster than a thread pool (see
    // docs/performance.md). Children are spawned from this thread, which lives as
    // long as the process, as their parent-death signal requires.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(toolshelf::cli::run(
        cli.command,
        toolshelf::signals::shutdown(),
    ));
    // Stdin is read by a blocking read on a thread of its own (tokio's), which nothing can
    // cancel: on Windows, stopped by Ctrl-C while the client (or a terminal) kept stdin open,
    // toolshelf waited in that read until a line came (seen under Wine). The children are
    // stopped by now; a write to stdout still under way gets a moment, the read none.
    runtime.shutdown_timeout(std::time::Duration::from_millis(250));
    code
}

fn init_logging(level: Option<&str>, default_filter: &str, access_log: bool) {
    let mut filter = match level {
        Some(level) => EnvFilter::try_new(level).ok(),
        None => EnvFilter::try_from_default_env().ok(),
    }
    .unwrap_or_else(|| EnvFilter::new(default_filter));
    if access_log && let Ok(access) = toolshelf::transport::http::ACCESS_LOG_FILTER.parse() {
        filter = filter.add_directive(access);
    }
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .init();
}

/// glibc serves an allocation from its heap once it is below a threshold that grows with the
/// largest block freed (up to 32 MiB), and a heap rarely shrinks: after one large tool result
/// toolshelf stayed that much larger for good. A fixed threshold keeps every block of 1 MiB or more
/// in its own mapping, returned to the system when freed; smaller ones are unaffected.
///
/// Setting it also fixes glibc's trim threshold at its default, 128 KiB: each result of a few
/// hundred KiB was then given back when freed and faulted in anew by the next one (page faults
/// for every large result forwarded: docs/performance.md). Up to
/// 2 MiB of freed heap is kept instead, as much as a 1 MB result's buffers need.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn return_large_buffers_to_the_system() {
    const OWN_MAPPING_FROM: libc::c_int = 1024 * 1024;
    const FREE_HEAP_KEPT: libc::c_int = 2 * 1024 * 1024;
    // SAFETY: called first thing in `main`, before any other thread exists or allocates;
    // mallopt only sets parameters of the allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING_FROM);
        libc::mallopt(libc::M_TRIM_THRESHOLD, FREE_HEAP_KEPT);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_buffers_to_the_system() {}
