//! The processes toolshelf started, seen from /proc: its children, whether one is alive.

use std::time::Duration;

use super::DEADLINE;

/// Direct children of `pid`, from /proc.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if parent_of(child) == Some(pid) && !is_guard(child) {
            found.push(child);
        }
    }
    found
}

/// The process guard toolshelf starts beside its children is not one of them.
fn is_guard(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        cmdline.split(|byte| *byte == 0).nth(1) == Some(toolshelf::GUARD_COMMAND.as_bytes())
    })
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(1)?.parse().ok()
}

/// True while `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|at| stat.get(at + 2..at + 3))
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

/// Waits (bounded) until none of `pids` is alive.
pub async fn wait_all_gone(pids: &[u32]) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|pid| is_alive(*pid)).collect();
        if alive.is_empty() || tokio::time::Instant::now() > deadline {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
