//! Tasks as JSON: task ids replaced by handles where the protocol puts them (and nowhere else),
//! a created task read from a result, a terminal status told apart.

use super::{Method, RELATED_TASK};
use std::{borrow::Cow, time::Duration};

use indexmap::IndexMap;
use rmcp::model::{CreateTaskResult, ErrorData, Task, TaskStatus};
use serde_json::{Value, value::RawValue};

use crate::children::ToolResultJson;

pub(super) fn modern_task(task: &Value) -> Option<Task> {
    let status: TaskStatus = serde_json::from_value(task.get("status")?.clone()).ok()?;
    let text = |key: &str| task.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut modern = Task::new(
        text("taskId")?,
        status,
        text("createdAt").unwrap_or_default(),
        text("lastUpdatedAt")
            .or_else(|| text("createdAt"))
            .unwrap_or_default(),
    );
    modern.status_message = text("statusMessage");
    modern.ttl_ms = task.get("ttl").and_then(Value::as_u64);
    modern.poll_interval_ms = task.get("pollInterval").and_then(Value::as_u64);
    Some(modern)
}

/// A created task (the child's answer, with toolshelf's handle) as the tasks extension's
/// `CreateTaskResult`; `None` when the child ran the call at once.
pub(crate) fn as_created(result: &ToolResultJson) -> Option<CreateTaskResult> {
    let answer: IndexMap<Cow<'_, str>, &RawValue> = serde_json::from_str(result.json()).ok()?;
    let task: Value = serde_json::from_str(answer.get("task")?.get()).ok()?;
    Some(CreateTaskResult::new(modern_task(&task)?))
}

/// The task in a child's answer to a task-augmented call.
pub(super) struct CreatedTask {
    pub(super) id: String,
    pub(super) ended: bool,
    pub(super) ttl: Option<Duration>,
}

pub(super) fn created_task(json: &str) -> Option<CreatedTask> {
    // Only the task is decoded: the rest may be anything a tool result holds.
    let answer: IndexMap<Cow<'_, str>, &RawValue> = serde_json::from_str(json).ok()?;
    let task: serde_json::Map<String, Value> =
        serde_json::from_str(answer.get("task")?.get()).ok()?;
    let id = task.get("taskId")?.as_str()?.to_owned();
    Some(CreatedTask {
        id,
        ended: task
            .get("status")
            .and_then(Value::as_str)
            .is_some_and(terminal),
        ttl: task
            .get("ttl")
            .and_then(Value::as_u64)
            .map(Duration::from_millis),
    })
}

/// A task status after which nothing changes.
pub(super) fn terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// True when a `tasks/get` or `tasks/cancel` answer shows the task ended.
pub(super) fn task_ended(json: &str) -> bool {
    serde_json::from_str::<IndexMap<Cow<'_, str>, &RawValue>>(json)
        .ok()
        .and_then(|answer| string(answer.get("status")?))
        .is_some_and(|status| terminal(&status))
}

/// `json` with each task id `rename` knows replaced: the answer's own `taskId`, its `task`'s,
/// and the related task in its `_meta`. Everything else stays as written (a task's result may
/// be large: only these members are decoded). `None` if `json` is not an object.
pub(super) fn with_task_ids(
    json: &str,
    rename: impl Fn(&str) -> Option<String>,
) -> Option<Box<RawValue>> {
    let mut members: IndexMap<String, Box<RawValue>> = serde_json::from_str(json).ok()?;
    if let Some(id) = members.get("taskId").and_then(|raw| string(raw))
        && let Some(handle) = rename(&id)
    {
        members.insert("taskId".into(), json_string(&handle));
    }
    for (member, path) in [
        ("task", &["taskId"][..]),
        ("_meta", &[RELATED_TASK, "taskId"][..]),
    ] {
        let Some(raw) = members.get(member) else {
            continue;
        };
        // A member that does not read holds no task id toolshelf could know.
        let Ok(mut value) = serde_json::from_str::<Value>(raw.get()) else {
            continue;
        };
        let Some(slot) = path
            .iter()
            .try_fold(&mut value, |value, key| value.get_mut(*key))
        else {
            continue;
        };
        if let Some(handle) = slot.as_str().and_then(&rename) {
            *slot = Value::String(handle);
            members.insert(member.into(), serde_json::value::to_raw_value(&value).ok()?);
        }
    }
    serde_json::value::to_raw_value(&members).ok()
}

/// The handle and the rest of the params of `tasks/get|result|cancel`.
pub(super) fn task_params(
    method: Method,
    params: Option<&RawValue>,
) -> Result<(String, IndexMap<String, Box<RawValue>>), ErrorData> {
    let refuse = || {
        ErrorData::invalid_params(
            format!(
                "{} needs params {{\"taskId\": \"…\"}} with the task id use_tool answered with",
                method.name()
            ),
            None,
        )
    };
    let mut members: IndexMap<String, Box<RawValue>> = params
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .ok_or_else(refuse)?;
    let handle = members
        .shift_remove("taskId")
        .and_then(|raw| string(&raw))
        .ok_or_else(refuse)?;
    Ok((handle, members))
}

pub(super) fn string(raw: &RawValue) -> Option<String> {
    serde_json::from_str(raw.get()).ok()
}

pub(super) fn json_string(text: &str) -> Box<RawValue> {
    serde_json::value::to_raw_value(text).expect("a string encodes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_replaced_where_the_protocol_puts_them_and_nowhere_else() {
        let json = r#"{"task":{"taskId":"c1","status":"working","ttl":60000},"content":[{"type":"text","text":"c1"}],"structuredContent":{"n":1e400},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"c1"}}}"#;
        let rename = |id: &str| (id == "c1").then(|| "ts-1".to_owned());
        let raw = with_task_ids(json, rename).expect("object");
        assert_eq!(
            raw.get(),
            r#"{"task":{"taskId":"ts-1","status":"working","ttl":60000},"content":[{"type":"text","text":"c1"}],"structuredContent":{"n":1e400},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"ts-1"}}}"#,
        );
        let got = with_task_ids(r#"{"taskId":"c1","status":"completed"}"#, rename).expect("object");
        assert_eq!(got.get(), r#"{"taskId":"ts-1","status":"completed"}"#);
        assert!(task_ended(got.get()));
        assert!(with_task_ids("[]", rename).is_none());
        let task = created_task(json).expect("a task");
        assert_eq!(task.id, "c1");
        assert!(!task.ended);
        assert_eq!(task.ttl, Some(Duration::from_secs(60)));
    }
}
