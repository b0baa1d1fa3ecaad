//! One child's operating-system process: spawned contained (`process_tree`: its own process group,
//! or Job Object), supervised by a task that records how it ended, its stderr drained line by line
//! into tracing (the last lines kept for error messages), and stopped with close-stdin → asked to
//! stop → its tree killed.

use std::{
    collections::VecDeque,
    process::Stdio,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use process_wrap::tokio::ChildWrapper;
use tokio::{
    io::AsyncReadExt,
    process::{ChildStderr, ChildStdin, ChildStdout},
    sync::watch,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{
    environment,
    exit::{Exit, SpawnError},
    process_tree,
    registry::{ProcessRegistry, Registration},
};
use crate::config::LocalServer;
use crate::locks;

/// How long a child gets to exit after its stdin closes, and again after SIGTERM.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(2);
/// Lines of stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr line kept or logged; the rest of a longer line is dropped.
const STDERR_LINE_MAX: usize = 2000;

/// The last lines a child wrote to stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
}

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = locks::lock(&self.lines);
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, oldest first, at most `count` of them.
    pub(crate) fn last(&self, count: usize) -> Vec<String> {
        let lines = locks::lock(&self.lines);
        lines
            .iter()
            .skip(lines.len().saturating_sub(count))
            .cloned()
            .collect()
    }
}

/// A running (or ended) child process.
#[derive(Debug)]
pub(crate) struct Process {
    pub pid: Option<u32>,
    stop: CancellationToken,
    /// Set when toolshelf is about to close the child's stdin: an exit after that is expected
    /// and logged at debug, not info.
    ending: Arc<AtomicBool>,
    exit: watch::Receiver<Option<Exit>>,
    stderr_done: watch::Receiver<bool>,
    pub stderr: Arc<StderrTail>,
}

/// The pipes of a freshly spawned child, for the MCP transport.
pub(crate) struct Pipes {
    pub stdout: ChildStdout,
    pub stdin: ChildStdin,
}

impl Process {
    /// Spawns `spec`'s command unless the registry is closed. The stderr and supervisor tasks
    /// run inside `span`, which names the toolbox and server.
    pub(crate) fn spawn(
        registry: &Arc<ProcessRegistry>,
        spec: &LocalServer,
        span: tracing::Span,
    ) -> Result<(Process, Pipes), SpawnError> {
        let mut environment = environment::inherited(spec, std::env::vars_os());
        environment.extend(
            spec.env
                .iter()
                .map(|(key, value)| (key.into(), value.into())),
        );
        let mut command =
            tokio::process::Command::new(process_tree::program(&spec.command, &environment));
        command
            .args(&spec.args)
            .env_clear()
            .envs(environment)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.current_dir(spec.cwd.as_ref().unwrap_or(&spec.config_dir));
        let mut wrapped = process_tree::contain(command);

        let stop = CancellationToken::new();
        let (exit_tx, exit) = watch::channel(None);
        let registration = registry.register(&stop, &exit, || {
            wrapped.spawn().map_err(|source| SpawnError::Io {
                command: spec.command.clone(),
                source,
            })
        })?;
        let Registration { mut child, guard } = registration;

        let pid = child.id();
        let stdout = child.stdout().take();
        let stdin = child.stdin().take();
        let stderr_pipe = child.stderr().take();
        let (Some(stdout), Some(stdin), Some(stderr_pipe)) = (stdout, stdin, stderr_pipe) else {
            // Cannot happen: all three were configured as pipes above. Reap and report.
            child.start_kill().ok();
            return Err(SpawnError::Io {
                command: spec.command.clone(),
                source: std::io::Error::other("the child's pipes were not created"),
            });
        };

        let stderr = Arc::new(StderrTail::default());
        let (stderr_done_tx, stderr_done) = watch::channel(false);
        tokio::spawn(
            drain_stderr(stderr_pipe, stderr.clone(), stderr_done_tx).instrument(span.clone()),
        );
        let stop_task = stop.clone();
        let ending = Arc::new(AtomicBool::new(false));
        let ending_task = ending.clone();
        tokio::spawn(
            async move {
                let exit = supervise(child, stop_task, &ending_task).await;
                exit_tx.send_replace(exit);
                drop(guard);
            }
            .instrument(span),
        );
        Ok((
            Process {
                pid,
                stop,
                ending,
                exit,
                stderr_done,
                stderr,
            },
            Pipes { stdout, stdin },
        ))
    }

    /// How the process ended, if it has.
    pub(crate) fn exit(&self) -> Option<Exit> {
        *self.exit.borrow()
    }

    /// Waits up to `limit` for the process to end and its stderr to be read to the end.
    pub(crate) async fn wait_ended(&self, limit: Duration) -> Option<Exit> {
        let mut exit = self.exit.clone();
        let mut stderr_done = self.stderr_done.clone();
        let _ = tokio::time::timeout(limit, async {
            let _ = exit.wait_for(Option::is_some).await;
            let _ = stderr_done.wait_for(|done| *done).await;
        })
        .await;
        self.exit()
    }

    /// Marks the exit that follows as one toolshelf asked for (it is about to close stdin).
    pub(crate) fn expect_end(&self) {
        self.ending.store(true, Ordering::Release);
    }

    /// Stops the process (its stdin should already be closed) and waits until it is gone.
    pub(crate) async fn stop(&self) -> Option<Exit> {
        self.stop.cancel();
        let mut exit = self.exit.clone();
        let _ = exit.wait_for(Option::is_some).await;
        self.exit()
    }

    /// "exited with status 1; last stderr lines: …", for error messages.
    pub(crate) fn describe_end(&self) -> String {
        let mut text = match self.exit() {
            Some(exit) => format!("the process {exit}"),
            None => "the process was stopped".to_owned(),
        };
        let tail = self.stderr.last(5);
        if !tail.is_empty() {
            text.push_str("; last stderr lines:\n");
            text.push_str(&tail.join("\n"));
        }
        text
    }
}

/// Waits for the child to exit, or for `stop`: then gives it `STOP_GRACE`, asks its tree to stop
/// (SIGTERM to its group on Unix), gives it `STOP_GRACE` again, and kills the tree. However the
/// child itself ended, whatever it left running (npx → node, `sh -c "server; true"` → server) is
/// killed then.
async fn supervise(
    mut child: Box<dyn ChildWrapper>,
    stop: CancellationToken,
    ending: &AtomicBool,
) -> Option<Exit> {
    let exit = wait_or_stop(&mut child, stop, ending).await;
    process_tree::kill_tree(&mut child);
    exit
}

async fn wait_or_stop(
    child: &mut Box<dyn ChildWrapper>,
    stop: CancellationToken,
    ending: &AtomicBool,
) -> Option<Exit> {
    tokio::select! {
        status = child.wait() => {
            let exit = status.ok().map(Exit);
            log_exit(exit, ending.load(Ordering::Acquire));
            return exit;
        }
        () = stop.cancelled() => {}
    }
    if let Ok(status) = tokio::time::timeout(STOP_GRACE, child.wait()).await {
        return status.ok().map(Exit);
    }
    tracing::debug!("child did not exit after stdin closed; asking it to stop");
    if process_tree::ask_to_stop(child)
        && let Ok(status) = tokio::time::timeout(STOP_GRACE, child.wait()).await
    {
        return status.ok().map(Exit);
    }
    tracing::warn!("child did not stop when asked; killing its process tree");
    let _ = Box::into_pin(child.kill()).await;
    child.wait().await.ok().map(Exit)
}

/// The log target of a child's exit: `check`, `tools` and `call` report a failed start or a
/// crash in their own output, so their log leaves these lines out (`CHECK_LOG_FILTER`).
const EXIT_LOG_TARGET: &str = "toolshelf::child_exit";

fn log_exit(exit: Option<Exit>, expected: bool) {
    match exit {
        Some(exit) if exit.0.success() && expected => {
            tracing::debug!(target: EXIT_LOG_TARGET, "child exited");
        }
        Some(exit) if exit.0.success() => tracing::info!(target: EXIT_LOG_TARGET, "child exited"),
        Some(exit) => tracing::warn!(target: EXIT_LOG_TARGET, status = %exit, "child exited"),
        None => {
            tracing::warn!(target: EXIT_LOG_TARGET, "child ended; its exit status could not be read");
        }
    }
}

/// Reads stderr to the end, logging each line and keeping the last ones.
async fn drain_stderr(mut pipe: ChildStderr, tail: Arc<StderrTail>, done: watch::Sender<bool>) {
    let mut buffer = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let emit = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line).trim_end().to_owned();
        line.clear();
        if !text.is_empty() {
            // Servers write banners and notices there ("running on stdio", npm's warnings): at
            // debug. The last lines are in every error about the server, where they matter.
            tracing::debug!(line = %text, "child stderr");
            tail.push(text);
        }
    };
    loop {
        let read = match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        for chunk in buffer[..read].split_inclusive(|byte| *byte == b'\n') {
            let room = STDERR_LINE_MAX.saturating_sub(line.len());
            let body = chunk.strip_suffix(b"\n").unwrap_or(chunk);
            line.extend_from_slice(&body[..body.len().min(room)]);
            if chunk.ends_with(b"\n") {
                emit(&mut line);
            }
        }
    }
    emit(&mut line);
    done.send_replace(true);
}
