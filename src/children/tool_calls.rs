//! `tools/call` requests to one child, sent and answered without rmcp's request machinery. The
//! profile showed rmcp's path (a channel to its loop, a responder pool, a task per send, then
//! decoding the result into typed content and encoding it again) to be most of toolshelf's cost
//! per call. Here a call takes an id from a range rmcp never uses (rmcp counts from 0), writes its
//! request line itself, and the transport hands the response's `result` bytes straight back.
//!
//! Progress uses the call's id as its token. The transport handles it in the same read loop as
//! responses, so progress is forwarded in the order the child sent it and never after the call
//! answered: answering removes the call, and with it the route (unless the answer created a
//! task, whose progress may go on: `task_progress`).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use super::{
    agent_port::{Agent, same},
    call_timeouts::{CallWatch, Limit, Watched},
    progress_out::{PeerMessage, ProgressOut, ProgressTarget},
    request_lines::Notification,
    result_text::ResultText,
    task_progress::KeptProgress,
};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use crate::{
    jsonrpc::line_writer::{self},
    locks,
};

/// The first id of a direct call; below are rmcp's own requests (initialize, tools/list).
pub(crate) const FIRST_ID: i64 = 1 << 40;

/// How a child answered a call.
pub(crate) enum ChildAnswer {
    Result(ResultText),
    Error {
        code: i32,
        message: String,
        /// The error's `data`, as written.
        data: Option<Box<RawValue>>,
    },
}

/// Whose call it is: the agent session, which the child's requests during the call reach,
/// and where the call's progress goes (if the agent asked for it).
pub(crate) struct CallRoute {
    pub agent: Agent,
    pub progress: Option<ProgressTarget>,
}

struct Waiting {
    answer: oneshot::Sender<ChildAnswer>,
    /// The agent session whose call this is (`None`: toolshelf's own request).
    caller: Option<Agent>,
    progress: Option<ProgressTarget>,
    /// The last progress forwarded (only increasing progress is).
    last_progress: f64,
    /// A task-augmented call: its progress route outlives its answer if a task was created.
    task: bool,
    /// When the call started or last reported progress; the call timeout counts from here.
    last_activity: Instant,
    limit: Limit,
}

#[derive(Default)]
struct State {
    next: i64,
    /// By id (toolshelf's own, counted up: a fast hash is safe).
    waiting: HashMap<i64, Waiting, foldhash::fast::RandomState>,
    /// The connection ended: calls waiting were told, and no new call is taken.
    closed: bool,
    /// Requests of the child that the agent is answering: no call times out meanwhile.
    pauses: usize,
    /// The progress routes of tasks whose calls were answered.
    kept: KeptProgress,
    /// The calls' timeouts.
    watch: CallWatch,
    /// When the watch looks at the deadlines next.
    next_look: Option<Instant>,
}

impl Watched for State {
    fn limits(&mut self) -> (Vec<(&mut Limit, Instant)>, bool) {
        let now = Instant::now();
        let paused = self.pauses > 0;
        let limits = self
            .waiting
            .values_mut()
            .map(|call| {
                let activity = if paused { now } else { call.last_activity };
                (&mut call.limit, activity)
            })
            .collect();
        (limits, self.closed)
    }

    fn next_look(&mut self) -> &mut Option<Instant> {
        &mut self.next_look
    }
}

/// While it lives, the child's calls do not time out; when it drops, each gets its whole
/// timeout again.
pub(crate) struct TimeoutPause {
    calls: ToolCalls,
}

impl Drop for TimeoutPause {
    fn drop(&mut self) {
        let mut state = self.calls.state();
        state.pauses -= 1;
        let now = Instant::now();
        for call in state.waiting.values_mut() {
            call.last_activity = now;
        }
    }
}

/// The direct calls in flight to one child, shared by `Child` (which sends) and the transport
/// (which answers). Only synchronous locks, never held across an `.await`.
#[derive(Clone, Default)]
pub(crate) struct ToolCalls {
    state: Arc<Mutex<State>>,
}

/// A registered call. Dropping it forgets the call, so an abandoned call leaves nothing behind.
pub(crate) struct CallTicket {
    calls: ToolCalls,
    pub id: i64,
    pub answer: oneshot::Receiver<ChildAnswer>,
    /// Resolves with `Ok` when the call ran out of its limit.
    pub expired: oneshot::Receiver<()>,
}

impl Drop for CallTicket {
    fn drop(&mut self) {
        self.calls.state().waiting.remove(&self.id);
    }
}

impl ToolCalls {
    fn state(&self) -> MutexGuard<'_, State> {
        locks::lock(&self.state)
    }

    /// Registers a call of `caller` that may wait `limit` without an answer or progress (`None`:
    /// as long as it takes); `None` once the connection has ended.
    pub(crate) fn register(
        &self,
        progress: Option<ProgressTarget>,
        caller: Option<Agent>,
        limit: Option<Duration>,
    ) -> Option<CallTicket> {
        let (answer, receiver) = oneshot::channel();
        let (expired, expiry) = oneshot::channel();
        let mut state = self.state();
        if state.closed {
            return None;
        }
        let id = FIRST_ID + state.next;
        state.next += 1;
        let now = Instant::now();
        state.waiting.insert(
            id,
            Waiting {
                answer,
                caller,
                progress,
                last_progress: f64::NEG_INFINITY,
                task: false,
                last_activity: now,
                limit: Limit {
                    limit,
                    expired: Some(expired),
                },
            },
        );
        let next_look = state.next_look;
        // A limit past what the clock can count (a config may say 1e19 seconds) is none.
        let deadline = limit.and_then(|limit| now.checked_add(limit));
        state
            .watch
            .deadline_set(&Arc::downgrade(&self.state), next_look, deadline);
        drop(state);
        Some(CallTicket {
            calls: self.clone(),
            id,
            answer: receiver,
            expired: expiry,
        })
    }

    /// The agent sessions with a call in flight, each once.
    pub(crate) fn callers(&self) -> Vec<Agent> {
        let mut callers: Vec<Agent> = Vec::new();
        for caller in self
            .state()
            .waiting
            .values()
            .filter_map(|call| call.caller.as_ref())
        {
            if !callers.iter().any(|known| same(known, caller)) {
                callers.push(caller.clone());
            }
        }
        callers
    }

    /// Pauses every call's timeout until the returned guard drops (the child asked the agent
    /// something: a person may take minutes to answer).
    pub(crate) fn pause_timeouts(&self) -> TimeoutPause {
        self.state().pauses += 1;
        TimeoutPause {
            calls: self.clone(),
        }
    }

    /// Delivers the answer to call `id`, if it is still waiting.
    pub(crate) fn answer(&self, id: i64, answer: ChildAnswer) {
        let mut state = self.state();
        let waiting = state.waiting.remove(&id);
        if let Some(Waiting {
            task: true,
            progress: Some(target),
            last_progress,
            ..
        }) = &waiting
            && let ChildAnswer::Result(result) = &answer
        {
            state
                .kept
                .keep(id, target.clone(), *last_progress, result.get());
        }
        drop(state);
        match waiting {
            Some(call) => {
                let _ = call.answer.send(answer);
            }
            None => tracing::debug!(id, "dropping an answer to a call that is no longer waiting"),
        }
    }

    /// Progress the child sent for call `id`: it restarts the call's timer, and goes to the agent
    /// if the agent asked for progress and it moved forward. `None` when the params do not read.
    pub(crate) fn progress(&self, id: i64, params: &ChildProgress<'_>) -> Option<()> {
        let progress: f64 = params.progress.get().parse().ok()?;
        let mut state = self.state();
        let (target, last_progress) = match state.waiting.contains_key(&id) {
            true => {
                let call = state.waiting.get_mut(&id)?;
                call.last_activity = Instant::now();
                (call.progress.as_ref()?, &mut call.last_progress)
            }
            // A task-augmented call answered already: its task may still report progress.
            false => state.kept.route(id)?,
        };
        if progress <= *last_progress {
            return Some(());
        }
        let Some(token) = target.token.get() else {
            return Some(()); // between rounds: no request of the agent to go with
        };
        *last_progress = progress;
        let forwarded = progress_params(&token, params);
        match &target.out {
            ProgressOut::Lines(out) => {
                let notification = Notification {
                    jsonrpc: "2.0",
                    method: "notifications/progress",
                    params: forwarded,
                };
                let line = line_writer::encode(&notification).ok()?;
                if !out.try_send(line) {
                    tracing::debug!("progress dropped: the client's output is full or closed");
                }
            }
            ProgressOut::Peer(peer) => {
                let _ = peer.queue.send(PeerMessage::Progress(decoded(&forwarded)?));
            }
            ProgressOut::Watch(watcher) => {
                let _ = watcher.send(decoded(&forwarded)?);
            }
        }
        Some(())
    }

    /// Call `id` is task-augmented: if the child answers it with a created task, the call's
    /// progress keeps reaching the agent until the task ends.
    pub(crate) fn expect_task(&self, id: i64) {
        if let Some(call) = self.state().waiting.get_mut(&id) {
            call.task = true;
        }
    }

    /// The child's task `child_task` reached a terminal status: its progress route goes.
    pub(crate) fn task_ended(&self, child_task: &str) {
        self.state().kept.ended(child_task);
    }

    /// The connection ended: every waiting call fails at once, and no new call is taken.
    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        state.waiting.clear();
        state.watch.end();
    }
}

/// Forwarded progress params as rmcp's type, for a target that takes it typed.
fn decoded(forwarded: &impl Serialize) -> Option<ProgressNotificationParam> {
    serde_json::from_value(serde_json::to_value(forwarded).ok()?).ok()
}

/// The params of a child's `notifications/progress`, undecoded where they pass through.
#[derive(Deserialize)]
pub(crate) struct ChildProgress<'a> {
    #[serde(rename = "progressToken")]
    pub token: ProgressToken,
    #[serde(borrow)]
    progress: &'a RawValue,
    #[serde(borrow, default)]
    total: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

/// The agent's `notifications/progress` for `params`, under the agent's token. `total` and
/// `message` pass only when they are what the spec says (a number, a string).
/// The agent's progress params for one of the child's: the agent's token, the child's numbers
/// as written (a total or message of the wrong type left out).
fn progress_params<'a>(
    token: &'a ProgressToken,
    params: &ChildProgress<'a>,
) -> ForwardedProgress<'a> {
    let total = params
        .total
        .filter(|total| total.get().parse::<f64>().is_ok());
    let message = params
        .message
        .filter(|message| message.get().starts_with('"'));
    ForwardedProgress {
        token,
        progress: params.progress,
        total,
        message,
    }
}

#[derive(Serialize)]
struct ForwardedProgress<'a> {
    #[serde(rename = "progressToken")]
    token: &'a ProgressToken,
    progress: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a RawValue>,
}

#[cfg(test)]
#[path = "tool_calls_tests.rs"]
mod tests;
