//! When a `use_tool` call runs as a task: the agent asked for one (2025-11-25), or the agent
//! declared the extension and the tool requires one (2026-07-28).

use serde_json::value::RawValue;

use super::SessionTasks;

/// A `use_tool` call that may run as a task, and the session's table its handle goes into.
#[derive(Clone, Copy)]
pub(crate) struct TaskRequest<'a> {
    pub ask: TaskAsk<'a>,
    pub tasks: &'a SessionTasks,
}

/// When a call runs as a task.
#[derive(Clone, Copy)]
pub(crate) enum TaskAsk<'a> {
    /// The agent asked in `params.task` (2025-11-25), passed on as written.
    Given(&'a RawValue),
    /// The agent declared the tasks extension (2026-07-28), where the server decides: toolshelf
    /// asks the child for a task when the tool requires one.
    IfRequired,
}

/// `params.task` of a call toolshelf itself runs as a task: the child's default ttl.
pub(super) const CHILD_TASK: &str = "{}";

impl<'a> TaskAsk<'a> {
    /// The `task` the child's call carries, if any, for a tool that `requires` tasks or not.
    pub(crate) fn for_child(self, requires: bool) -> Option<&'a RawValue> {
        match self {
            TaskAsk::Given(params) => Some(params),
            TaskAsk::IfRequired if requires => Some(child_task()),
            TaskAsk::IfRequired => None,
        }
    }
}

pub(super) fn child_task() -> &'static RawValue {
    static TASK: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    TASK.get_or_init(|| RawValue::from_string(CHILD_TASK.to_owned()).expect("JSON"))
}
