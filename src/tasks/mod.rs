//! Tasks (protocol 2025-11-25) through toolshelf, for one agent session. A `use_tool` call made
//! with `task` reaches the child as a task-augmented `tools/call`. The child's task id never
//! reaches the agent: it gets a handle of toolshelf's own (`ts-N`), which exists only in this
//! session's table, so no other agent can name it; `tasks/get`, `tasks/result`, `tasks/cancel`
//! and `tasks/list` go to the child that runs the task, under the child's id, and come back with
//! the handle in its place.
//!
//! Transport-independent: an adapter hands over the method, its raw params and the agent's
//! cancellation, and writes back the raw result or the error.

mod ask;
mod declaration;
mod errors;
mod method;
pub(crate) mod questions;
mod task_json;

pub(crate) use crate::children::{RELATED_TASK, STATUS_NOTIFICATION};
pub(crate) use ask::{TaskAsk, TaskRequest};
pub(crate) use declaration::TaskDeclaration;
pub(crate) use task_json::as_created;

use method::Method;

use errors::{failed, not_a_task, unreadable};
use task_json::{
    created_task, json_string, modern_task, task_ended, task_params, terminal, with_task_ids,
};

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
    time::Instant,
};

use indexmap::IndexMap;
use rmcp::model::{DetailedTask, ErrorCode, ErrorData, InputResponses, TaskPayload, TaskStatus};
use serde_json::{Value, value::RawValue};
use tokio_util::sync::CancellationToken;

use crate::{
    children::{Child, TaskHold, ToolResultJson},
    locks,
    tasks::questions::{QUESTION_WAIT, TaskQuestions},
};

/// The tasks the agent of one session started, by handle.
#[derive(Default)]
pub(crate) struct SessionTasks {
    routes: Mutex<HandleTable>,
}

#[derive(Default)]
struct HandleTable {
    next: u64,
    by_handle: HashMap<String, Route>,
}

/// Where a handle leads.
#[derive(Clone)]
struct Route {
    /// The handle's number: `tasks/list` answers in the order the tasks started.
    serial: u64,
    toolbox: String,
    server: String,
    child: Arc<Child>,
    child_task: String,
    /// Keeps the child from idling out while the task may still run; dropped once it ended.
    hold: Option<Arc<TaskHold>>,
    /// The child may forget the task after its ttl; so does toolshelf.
    expires: Option<Instant>,
    /// What the child asks during the task, for an agent on the tasks extension.
    questions: Arc<TaskQuestions>,
}

impl SessionTasks {
    fn routes(&self) -> MutexGuard<'_, HandleTable> {
        locks::lock(&self.routes)
    }

    /// True for the methods `serve` answers.
    pub(crate) fn serves(method: &str) -> bool {
        Method::parse(method).is_some()
    }

    /// A child answered a task-augmented call of `toolbox`/`server`: a created task gets a
    /// handle in place of the child's id; any other answer (the child ran the call at once) is
    /// returned as it came.
    pub(crate) fn created(
        &self,
        toolbox: &str,
        server: &str,
        child: &Arc<Child>,
        result: ToolResultJson,
    ) -> ToolResultJson {
        let Some(task) = created_task(result.json()) else {
            return result;
        };
        let mut routes = self.routes();
        routes.prune();
        routes.next += 1;
        let serial = routes.next;
        let handle = format!("ts-{serial}");
        let Some(raw) = with_task_ids(result.json(), |id| (id == task.id).then(|| handle.clone()))
        else {
            return result;
        };
        let Ok(rewritten) = ToolResultJson::check(raw.into()) else {
            return result;
        };
        routes.by_handle.insert(
            handle,
            Route {
                serial,
                toolbox: toolbox.to_owned(),
                server: server.to_owned(),
                child: child.clone(),
                child_task: task.id,
                hold: (!task.ended).then(|| Arc::new(child.hold())),
                expires: task.ttl.map(|ttl| Instant::now() + ttl),
                questions: Arc::default(),
            },
        );
        rewritten
    }

    /// The params of a status notification of child `origin` ("toolbox/server") with the
    /// handle in place of the child's task id; `None` if the task is not one of this session's.
    pub(crate) fn status(&self, origin: &str, params: &Value) -> Option<Value> {
        let child_task = params.get("taskId")?.as_str()?;
        let mut routes = self.routes();
        let (handle, route) = routes.of_child(origin, child_task)?;
        if params
            .get("status")
            .and_then(Value::as_str)
            .is_some_and(terminal)
        {
            route.hold = None;
            route.child.task_ended(child_task);
        }
        let renamed = with_task_ids(&params.to_string(), |id| {
            (id == child_task).then(|| handle.clone())
        })?;
        serde_json::from_str(renamed.get()).ok()
    }

    /// The handle and the questions of the task `child_task` of child `origin`, if it is one
    /// of this session's.
    pub(crate) fn related(
        &self,
        origin: &str,
        child_task: &str,
    ) -> Option<(String, Arc<TaskQuestions>)> {
        let mut routes = self.routes();
        let (handle, route) = routes.of_child(origin, child_task)?;
        Some((handle.clone(), route.questions.clone()))
    }

    /// Answers `tasks/get`, `tasks/result`, `tasks/cancel` or `tasks/list` of the agent.
    pub(crate) async fn serve(
        &self,
        method: &str,
        params: Option<&RawValue>,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, ErrorData> {
        let Some(method) = Method::parse(method) else {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Unknown method '{method}': toolshelf serves tasks/get, tasks/result, tasks/cancel and tasks/list"
                ),
                None,
            ));
        };
        if method == Method::List {
            return self.list(cancel).await;
        }
        let (handle, rest) = task_params(method, params)?;
        self.forward(method, &handle, rest, cancel).await
    }

    /// Sends `method` for task `handle`, with the agent's other params `rest`, to the child
    /// that runs it; its answer with the handle in place of the child's task id.
    async fn forward(
        &self,
        method: Method,
        handle: &str,
        mut rest: IndexMap<String, Box<RawValue>>,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, ErrorData> {
        let route = self.route(handle)?;
        rest.insert("taskId".into(), json_string(&route.child_task));
        // tasks/result waits for the task to end, however long it runs; the rest are bounded.
        let limit = (method != Method::Result).then_some(route.child.spec.call_timeout);
        let answer = route
            .child
            .request(method.name(), &rest, limit, cancel)
            .await
            .map_err(|error| failed(method, Some(handle), &route, error))?;
        let ended = method == Method::Result || task_ended(answer.get());
        if ended && let Some(route) = self.routes().by_handle.get_mut(handle) {
            route.hold = None;
            route.child.task_ended(&route.child_task);
        }
        with_task_ids(answer.get(), |id| {
            (id == route.child_task).then(|| handle.to_owned())
        })
        .ok_or_else(|| unreadable(method, &route))
    }

    /// `tasks/get` of the tasks extension (2026-07-28): the child's task (2025-11-25) with its
    /// result or error once it ended, or with its questions when it waits for input.
    pub(crate) async fn detailed(
        &self,
        handle: &str,
        cancel: &CancellationToken,
    ) -> Result<DetailedTask, ErrorData> {
        let got = self
            .forward(Method::Get, handle, IndexMap::new(), cancel)
            .await?;
        let task = serde_json::from_str(got.get())
            .ok()
            .and_then(|got: Value| modern_task(&got))
            .ok_or_else(|| not_a_task(Method::Get, handle))?;
        let payload = match task.status {
            TaskStatus::Completed | TaskStatus::Failed => {
                match self
                    .forward(Method::Result, handle, IndexMap::new(), cancel)
                    .await
                {
                    Ok(result) => TaskPayload::Completed {
                        result: serde_json::from_str(result.get())
                            .map_err(|_| not_a_task(Method::Result, handle))?,
                    },
                    Err(error) => TaskPayload::Failed {
                        error: match serde_json::to_value(&error) {
                            Ok(Value::Object(error)) => error,
                            _ => serde_json::Map::new(),
                        },
                    },
                }
            }
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            TaskStatus::InputRequired => {
                let questions = self.listen(handle)?;
                let input_requests = questions.outstanding(QUESTION_WAIT).await;
                if input_requests.is_empty() {
                    // Asked but not arrived yet: the agent polls again.
                    TaskPayload::Working
                } else {
                    TaskPayload::InputRequired { input_requests }
                }
            }
            _ => TaskPayload::Working,
        };
        Ok(DetailedTask::new(task, payload))
    }

    /// The questions of task `handle`, whose child waits for input: they come only to a
    /// requestor waiting in `tasks/result`, so toolshelf waits there (once) for the agent.
    fn listen(&self, handle: &str) -> Result<Arc<TaskQuestions>, ErrorData> {
        let route = self.route(handle)?;
        let questions = route.questions.clone();
        questions.listen(move |stop| async move {
            let params = serde_json::json!({ "taskId": route.child_task });
            if let Err(error) = route
                .child
                .request("tasks/result", &params, None, &stop)
                .await
            {
                tracing::debug!(%error, "waiting in a task's tasks/result for its questions ended");
            }
        });
        Ok(questions)
    }

    /// `tasks/update` of the tasks extension: the agent's answers to the task's questions.
    pub(crate) fn update(&self, handle: &str, answers: InputResponses) -> Result<(), ErrorData> {
        self.route(handle)?
            .questions
            .answer(answers)
            .map_err(|why| {
                ErrorData::invalid_params(format!("tasks/update for task '{handle}': {why}"), None)
            })
    }

    /// `tasks/cancel` of the tasks extension: the child's answer matters only as an error.
    pub(crate) async fn cancel(
        &self,
        handle: &str,
        cancel: &CancellationToken,
    ) -> Result<(), ErrorData> {
        self.forward(Method::Cancel, handle, IndexMap::new(), cancel)
            .await
            .map(drop)
    }

    /// The route of `handle`, if it leads to a child that still runs.
    fn route(&self, handle: &str) -> Result<Route, ErrorData> {
        let mut routes = self.routes();
        routes.prune();
        let Some(route) = routes.by_handle.get(handle).cloned() else {
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown task '{handle}': this session has no task with that id. Task ids come from a use_tool call made with `task` and last until their ttl passes or their server stops; call use_tool again to start a new task."
                ),
                None,
            ));
        };
        if route.child.is_gone() {
            routes.by_handle.remove(handle);
            return Err(ErrorData::invalid_params(
                format!(
                    "Task '{handle}' is lost: server '{}' of toolbox '{}' stopped since it started the task ({}). Call use_tool again to start a new task.",
                    route.server,
                    route.toolbox,
                    route.child.describe_end()
                ),
                None,
            ));
        }
        Ok(route)
    }

    /// `tasks/list`: this session's tasks only, from each child that runs some, with handles.
    async fn list(&self, cancel: &CancellationToken) -> Result<Box<RawValue>, ErrorData> {
        let routes: Vec<(String, Route)> = {
            let mut routes = self.routes();
            routes.prune();
            let mut all: Vec<_> = routes
                .by_handle
                .iter()
                .map(|(handle, route)| (handle.clone(), route.clone()))
                .collect();
            all.sort_by_key(|(_, route)| route.serial);
            all
        };
        // Each child that runs some of them is asked once; its tasks by the child's id.
        let mut listings: Vec<(&Arc<Child>, HashMap<String, Value>)> = Vec::new();
        for (_, route) in &routes {
            if route.child.is_gone()
                || listings
                    .iter()
                    .any(|(child, _)| Arc::ptr_eq(child, &route.child))
            {
                continue;
            }
            let by_id = list_child(route, cancel)
                .await?
                .into_iter()
                .filter_map(|task| Some((task.get("taskId")?.as_str()?.to_owned(), task)))
                .collect();
            listings.push((&route.child, by_id));
        }
        let tasks: Vec<Value> = routes
            .iter()
            .filter_map(|(handle, route)| {
                let (_, by_id) = listings
                    .iter_mut()
                    .find(|(child, _)| Arc::ptr_eq(child, &route.child))?;
                let mut task = by_id.remove(&route.child_task)?;
                task["taskId"] = Value::String(handle.clone());
                Some(task)
            })
            .collect();
        serde_json::value::to_raw_value(&serde_json::json!({ "tasks": tasks }))
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }
}

impl HandleTable {
    /// The handle and route of the task `child_task` of child `origin` ("toolbox/server").
    fn of_child(&mut self, origin: &str, child_task: &str) -> Option<(&String, &mut Route)> {
        self.by_handle.iter_mut().find(|(_, route)| {
            route.child_task == child_task
                && origin.split_once('/') == Some((&route.toolbox, &route.server))
        })
    }

    /// Forgets tasks past their ttl.
    fn prune(&mut self) {
        let now = Instant::now();
        self.by_handle
            .retain(|_, route| route.expires.is_none_or(|at| at > now));
    }
}

/// Every task of the child behind `route`, page by page.
async fn list_child(route: &Route, cancel: &CancellationToken) -> Result<Vec<Value>, ErrorData> {
    route
        .child
        .list_all("tasks/list", "tasks", cancel)
        .await
        .map_err(|error| failed(Method::List, None, route, error))
}
