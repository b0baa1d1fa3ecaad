//! Progress of a task-augmented call after its answer. A child that answers `tools/call` with
//! a created task may go on sending progress under the call's token until the task ends (the
//! 2025-11-25 tasks section allows it): such a call's progress route outlives its answer, until
//! the task's terminal status is seen, its time to live passes, or more tasks than `MAX_KEPT`
//! need routes (the oldest goes).

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::tool_calls::ProgressTarget;

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
    task: CreatedTask,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreatedTask {
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
        result: &RawValue,
    ) {
        let Ok(Created { task }) = serde_json::from_str::<Created>(result.get()) else {
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

#[cfg(test)]
mod tests {
    use rmcp::model::{NumberOrString, ProgressToken};
    use serde_json::value::RawValue;

    use crate::{
        children::tool_calls::{
            Answer, ChildProgress, CurrentToken, ProgressOut, ProgressTarget, ToolCalls,
        },
        json_lines::LineWriter,
    };

    #[tokio::test]
    async fn a_created_task_keeps_its_progress_route_until_it_ends() {
        let (ours, mut theirs) = tokio::io::duplex(1 << 16);
        let out = LineWriter::spawn(ours);
        let calls = ToolCalls::default();
        let token = CurrentToken::new(Some(ProgressToken(NumberOrString::String("a1".into()))));
        let target = ProgressTarget {
            out: ProgressOut::Lines(out.clone()),
            token,
        };
        let task = calls.register(Some(target.clone()), None).expect("open");
        calls.expect_task(task.id);
        let plain = calls.register(Some(target), None).expect("open");
        let progress = |id: i64, value: u32| {
            let text = format!(r#"{{"progressToken":{id},"progress":{value}}}"#);
            let params: ChildProgress<'_> = serde_json::from_str(&text).expect("params");
            calls.progress(id, &params)
        };
        let created = r#"{"task":{"taskId":"c1","status":"working","ttl":60000}}"#;
        let answered =
            |text: &str| Answer::Result(RawValue::from_string(text.into()).expect("JSON"));
        calls.answer(task.id, answered(created));
        calls.answer(plain.id, answered(r#"{"content":[]}"#));
        assert_eq!(
            progress(task.id, 1),
            Some(()),
            "the task's progress goes on"
        );
        assert_eq!(
            progress(plain.id, 1),
            None,
            "a plain call's ends with its answer"
        );
        calls.task_ended("c1");
        assert_eq!(progress(task.id, 2), None, "and the task's with the task");
        out.close().await;
        let mut written = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut theirs, &mut written)
            .await
            .expect("read");
        assert_eq!(
            written,
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"a1\",\"progress\":1}}\n"
        );
    }
}
