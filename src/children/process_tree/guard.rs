//! Unix: the guard, a second, small process that kills toolshelf's process groups when toolshelf is
//! gone, however it went. The parent-death signal reaches only each direct child, so a grandchild
//! that ignores both the end of its input and SIGTERM (a server run as `sh -c "server; true"`)
//! would outlive a SIGKILLed toolshelf. The guard is toolshelf's own binary
//! (`toolshelf process-guard`), started with the first child in a process group of its own (so a
//! terminal's Ctrl-C does not stop it before toolshelf has stopped its children). toolshelf
//! writes `+PGID` to the guard's stdin for each child it spawns and `-PGID` once that child's
//! group is gone; when the pipe ends, because toolshelf exited or was killed, the guard sends
//! SIGKILL to every group still registered and exits.
//!
//! Why not a subreaper: orphans are re-parented to the nearest subreaper, and when that is
//! toolshelf itself and it dies, they go to init all the same. Why not a PID namespace or a
//! cgroup: both need privileges an MCP client does not give its servers.

use std::{
    collections::HashSet,
    io::{BufRead, Write},
    os::unix::process::CommandExt,
    process::{ChildStdin, Command, Stdio},
    sync::{Mutex, MutexGuard},
};

use crate::locks;
use nix::{sys::signal, unistd::Pid};

/// toolshelf's end of the guard (`Guard::shared`): started on first use; without it (it could
/// not be started), children still have their parent-death signal.
#[derive(Debug)]
pub(crate) struct Guard {
    pipe: Mutex<Pipe>,
}

#[derive(Debug, Default)]
enum Pipe {
    #[default]
    NotStarted,
    Open(ChildStdin),
    /// It could not be started, or stopped reading: said once in the log.
    Broken,
}

impl Guard {
    /// The process's one guard, shared by every registry (one per agent session over HTTP): a
    /// guard per registry would outlive its session as a zombie, since nobody waits for it.
    pub(crate) fn shared() -> &'static Guard {
        static SHARED: Guard = Guard {
            pipe: Mutex::new(Pipe::NotStarted),
        };
        &SHARED
    }

    fn lock(&self) -> MutexGuard<'_, Pipe> {
        locks::lock(&self.pipe)
    }

    /// Process group `pgid` is to be killed if toolshelf dies.
    pub(crate) fn watch(&self, pgid: u32) {
        self.tell(&format!("+{pgid}\n"));
    }

    /// Process group `pgid` is gone.
    pub(crate) fn release(&self, pgid: u32) {
        self.tell(&format!("-{pgid}\n"));
    }

    fn tell(&self, line: &str) {
        let mut pipe = self.lock();
        if let Pipe::NotStarted = *pipe {
            *pipe = start();
        }
        if let Pipe::Open(stdin) = &mut *pipe
            && let Err(error) = stdin.write_all(line.as_bytes())
        {
            tracing::warn!(%error, "the process guard stopped; children keep their parent-death signal only");
            *pipe = Pipe::Broken;
        }
    }
}

fn start() -> Pipe {
    let spawned = std::env::current_exe().and_then(|exe| {
        Command::new(exe)
            .arg(super::GUARD_COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
    });
    // The guard outlives toolshelf by design: nobody waits for it, init reaps it.
    match spawned.map(|mut guard| guard.stdin.take()) {
        Ok(Some(stdin)) => Pipe::Open(stdin),
        Ok(None) => Pipe::Broken,
        Err(error) => {
            tracing::warn!(%error, "cannot start the process guard; children keep their parent-death signal only");
            Pipe::Broken
        }
    }
}

/// The guard's own life: read `+PGID`/`-PGID` lines until the input ends, then kill what is left.
pub fn run(input: impl BufRead) {
    let mut groups = HashSet::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        let (sign, number) = line.split_at(line.len().min(1));
        let Ok(pgid) = number.parse::<i32>() else {
            continue;
        };
        match sign {
            "+" => {
                groups.insert(pgid);
            }
            "-" => {
                groups.remove(&pgid);
            }
            _ => {}
        }
    }
    for pgid in groups {
        if pgid > 1 {
            let _ = signal::killpg(Pid::from_raw(pgid), signal::Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_registered_and_not_released_are_killed() {
        let mut sleeper = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("spawn sleep");
        let pgid = sleeper.id();
        let input = format!("+{pgid}\n+999999\n-999999\nnoise\n");
        run(input.as_bytes());
        let status = sleeper.wait().expect("wait");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
    }
}
