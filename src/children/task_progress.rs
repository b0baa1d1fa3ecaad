//! Progress of a task-augmented call after its answer. A child that answers `tools/call` with
//! a created task may go on sending progress under the call's token until the task ends (the
//! 2025-11-25 tasks section allows it): such a call's progress route outlives its answer, until
//! the task's terminal status is seen, its time to live passes, or more tasks than `MAX_KEPT`
//! need routes (the oldest goes).

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::progress_out::ProgressTarget;

/// Routes kept at most per child.
const MAX_KEPT: usize = 256;

/// How long a route is kept for a task that states no time to live.
const DEFAULT_TTL: Duration = Duration::from_secs(60 * 60);

/// The progress routes of one child's tasks.
#[derive(Default)]
pub(super) struct KeptProgress {
    kept: Vec<Kept>,
}

struct Kept {
    call: i64,
    child_task: String,
    target: ProgressTarget,
    last_progress: f64,
    until: Instant,
}

/// The part of a `CreateTaskResult` that names the task.
#[derive(Deserialize)]
struct Created {
    task: ChildTaskCreated,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChildTaskCreated {
    task_id: String,
    #[serde(default)]
    ttl: Option<u64>,
}

impl KeptProgress {
    /// Call `call` answered with `result`: if that is a created task, its progress keeps going
    /// to `target`.
    pub(super) fn keep(
        &mut self,
        call: i64,
        target: ProgressTarget,
        last_progress: f64,
        result: &str,
    ) {
        let Ok(Created { task }) = serde_json::from_str::<Created>(result) else {
            return;
        };
        let now = Instant::now();
        self.kept.retain(|kept| kept.until > now);
        if self.kept.len() >= MAX_KEPT {
            self.kept.remove(0);
        }
        let ttl = task.ttl.map_or(DEFAULT_TTL, Duration::from_millis);
        self.kept.push(Kept {
            call,
            child_task: task.task_id,
            target,
            last_progress,
            until: now + ttl,
        });
    }

    /// The route of call `call`'s task and the last progress it forwarded, while it lasts.
    pub(super) fn route(&mut self, call: i64) -> Option<(&ProgressTarget, &mut f64)> {
        let now = Instant::now();
        let kept = self
            .kept
            .iter_mut()
            .find(|kept| kept.call == call && kept.until > now)?;
        Some((&kept.target, &mut kept.last_progress))
    }

    /// The child's task `child_task` reached a terminal status.
    pub(super) fn ended(&mut self, child_task: &str) {
        self.kept.retain(|kept| kept.child_task != child_task);
    }
}
