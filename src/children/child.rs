//! One started child: its process, its MCP client session, the calls in flight. Starting,
//! calling and stopping a child all happen here.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging; children on earlier revisions have it"
)]

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use rmcp::{
    RoleClient,
    model::{InputRequiredResult, LoggingLevel, SetLevelRequestParams},
    service::RunningService,
};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::{
    call_error::CallError,
    client::ChildClient,
    link::Link,
    request_lines::{self, CallRequest},
    result_text::ResultText,
    tool_calls::{CallRoute, CallTicket, ChildAnswer, ToolCalls},
    tool_result::ToolResultJson,
};
use crate::config::ServerSpec;
use crate::jsonrpc::{call_meta::ForwardedMeta, line_writer::LineWriter};

/// The most pages of one list read from a child.
pub(super) const MAX_LIST_PAGES: usize = 100;

/// The most `input_required` rounds one call goes through (as the MCP SDKs' drivers).
pub(super) const MAX_INPUT_ROUNDS: usize = 10;

/// How long to wait for a dead child's exit status and last stderr lines before reporting.
pub(super) const DEATH_REPORT_WAIT: Duration = Duration::from_millis(500);

/// A child that answered `initialize` and `tools/list`.
pub(crate) struct Child {
    pub spec: Arc<ServerSpec>,
    /// Time from spawn to the end of `tools/list`.
    pub startup: Duration,
    pub(super) peer: rmcp::Peer<RoleClient>,
    pub(super) session: tokio::sync::Mutex<Option<RunningService<RoleClient, ChildClient>>>,
    pub(super) link: Link,
    /// The child's input, shared with the transport.
    pub(super) input: LineWriter,
    pub(super) calls: ToolCalls,
    pub(super) oversized: Arc<AtomicBool>,
    /// Shared with the client role, which then leaves list changes alone.
    pub(super) stopping: Arc<AtomicBool>,
    pub(super) in_flight: AtomicUsize,
    /// When a call last started or ended, as milliseconds since `born`.
    pub(super) last_used_ms: AtomicU64,
    pub(super) born: Instant,
    /// The client role toward this child: relays of what it asks, and the `_meta` of requests
    /// to a child on 2026-07-28.
    pub(super) client: ChildClient,
}

/// Marks one call in flight; dropping it marks the child used just now.
pub(crate) struct CallGuard<'a> {
    child: &'a Child,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.child.touch();
        self.child.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counts a task the child runs for the agent as a call in flight, so that the child is not
/// stopped for idleness under it; dropping it releases the child.
pub(crate) struct TaskHold {
    child: Arc<Child>,
}

impl Drop for TaskHold {
    fn drop(&mut self) {
        self.child.touch();
        self.child.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Child {
    /// The agent set a log level: the child gets it too, if it logs.
    pub(crate) async fn set_log_level(&self, level: LoggingLevel) {
        // A child on 2026-07-28 has no logging/setLevel: the level goes with each request.
        match &self.client.hop {
            Some(hop) => hop.set_log_level(level),
            None => set_log_level(&self.peer, level).await,
        }
    }

    /// The agent's roots changed: the child is told, if it was offered roots.
    pub(crate) async fn roots_changed(&self) {
        if let Err(error) = self.peer.notify_roots_list_changed().await {
            tracing::debug!(server = %self.spec.name, %error, "roots change not passed on");
        }
    }

    /// What the child declared it serves (tools, prompts, resources, completions…).
    pub(crate) fn capabilities(&self) -> Option<rmcp::model::ServerCapabilities> {
        self.peer.peer_info().map(|info| info.capabilities.clone())
    }

    /// Every page of the child's answer to list request `method` (`prompts/list`,
    /// `resources/list`, `resources/templates/list`, `tasks/list`): the items under `key`, each
    /// page bounded by the call timeout.
    pub(crate) async fn list_all(
        &self,
        method: &'static str,
        key: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<serde_json::Value>, CallError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = match &cursor {
                Some(cursor) => serde_json::json!({ "cursor": cursor }),
                None => serde_json::json!({}),
            };
            let page = self
                .request(method, params, Some(self.spec.call_timeout), cancel)
                .await?;
            let mut page: serde_json::Value =
                serde_json::from_str(page.get()).map_err(|error| CallError::Unreadable {
                    method,
                    error: error.to_string(),
                })?;
            if let Some(serde_json::Value::Array(found)) =
                page.get_mut(key).map(serde_json::Value::take)
            {
                items.extend(found);
            }
            cursor = page
                .get("nextCursor")
                .and_then(serde_json::Value::as_str)
                .filter(|next| !next.is_empty())
                .map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        Ok(items)
    }

    /// True once the child's process has ended or its connection is closed.
    pub(crate) fn is_gone(&self) -> bool {
        self.link.ended() || self.peer.is_transport_closed()
    }

    /// "the process exited with status 1; last stderr lines: …"
    pub(crate) fn describe_end(&self) -> String {
        self.link.describe_end()
    }

    /// Counts a call in flight until the guard drops.
    pub(crate) fn begin_call(&self) -> CallGuard<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.touch();
        CallGuard { child: self }
    }

    /// The child's task `child_task` reached a terminal status: its progress stops reaching
    /// the agent.
    pub(crate) fn task_ended(&self, child_task: &str) {
        self.calls.task_ended(child_task);
    }

    /// Holds the child while a task of the agent may still run on it.
    pub(crate) fn hold(self: &Arc<Self>) -> TaskHold {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        TaskHold {
            child: self.clone(),
        }
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    fn touch(&self) {
        let now = self.born.elapsed().as_millis() as u64;
        self.last_used_ms.store(now, Ordering::Relaxed);
    }

    /// How long since a call last started or ended.
    pub(crate) fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_used_ms.load(Ordering::Relaxed));
        self.born.elapsed().saturating_sub(last)
    }

    /// Forwards `tools/call` and returns the child's result as it came. `cancel` is the agent's
    /// cancellation of its own request: the child is told at once. Progress the child sends for
    /// this call goes to the caller's progress target, if the agent asked for it, and restarts
    /// the call's timer; the child's requests during the call reach the caller's session.
    /// `task` is the agent's request to run the call as a task (protocol 2025-11-25), passed on
    /// as written; the child then answers with its task instead of the result. A child on
    /// 2026-07-28 does not get it: that revision has no `task` param, and toolshelf does not
    /// offer it the tasks extension, so it runs the call at once, as 2025-11-25 lets a receiver
    /// answer a task-augmented request.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Option<&RawValue>,
        cancel: &CancellationToken,
        caller: CallRoute,
        meta: &ForwardedMeta,
        task: Option<&RawValue>,
    ) -> Result<ToolResultJson, CallError> {
        let mut retry = None;
        for _ in 0..MAX_INPUT_ROUNDS {
            let progress = caller.progress.clone();
            let limit = Some(self.spec.call_timeout);
            let Some(ticket) = self
                .calls
                .register(progress, Some(caller.agent.clone()), limit)
            else {
                return Err(self.explain_death().await);
            };
            let hop = self.client.hop();
            if task.is_some() && hop.is_none() {
                self.calls.expect_task(ticket.id);
            }
            let call = CallRequest {
                name,
                arguments,
                meta,
                task: task.filter(|_| hop.is_none()),
                hop: hop.as_deref(),
                retry: retry.as_ref(),
            };
            let request = request_lines::request_line(ticket.id, call)
                .map_err(|error| CallError::Unencodable(error.to_string()))?;
            let raw = self
                .round_trip(ticket, request, Some(self.spec.call_timeout), cancel)
                .await?;
            // A child on 2026-07-28 asks its client for input in the call's result; the call is
            // sent again with the agent's answers.
            let asked = match self.client.hop.as_ref().and_then(|_| input_required(&raw)) {
                Some(asked) => asked,
                None => {
                    return ToolResultJson::check(raw)
                        .map_err(|raw| CallError::NotAToolResult(excerpt(raw.get())));
                }
            };
            let answered = self.client.answer(asked, &caller.agent, cancel).await;
            retry = Some(answered.map_err(|error| CallError::Unanswered {
                message: error.message.into_owned(),
            })?);
        }
        Err(CallError::Unanswered {
            message: format!(
                "the server asked for input {MAX_INPUT_ROUNDS} times in a row, the most toolshelf answers for one call; call the tool again"
            ),
        })
    }

    /// Sends request `method` with `params` past rmcp and returns the child's result as it came.
    /// `limit` bounds the wait (restarted by progress, paused while the agent answers the
    /// child); `None` waits until the child answers, stops, or the agent cancels.
    pub(crate) async fn request(
        &self,
        method: &'static str,
        params: impl Serialize,
        limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<ResultText, CallError> {
        let Some(ticket) = self.calls.register(None, None, limit) else {
            return Err(self.explain_death().await);
        };
        let hop = self.client.hop();
        let request = request_lines::direct_request_line(ticket.id, method, params, hop.as_deref())
            .map_err(|error| CallError::Unencodable(error.to_string()))?;
        self.round_trip(ticket, request, limit, cancel).await
    }

    /// Writes `request` (registered as `ticket`) and waits for its answer.
    async fn round_trip(
        &self,
        mut ticket: CallTicket,
        request: Vec<u8>,
        limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<ResultText, CallError> {
        let began = Instant::now();
        if self.input.send(request).await.is_err() {
            return Err(self.explain_death().await);
        }
        // The watch of the calls' timeouts (`call_timeouts`) says when this one ran out; it
        // drops its side unsent once the call is answered or has no limit.
        let mut may_expire = true;
        loop {
            tokio::select! {
                biased;
                answer = &mut ticket.answer => return match answer {
                    Ok(ChildAnswer::Result(raw)) => Ok(raw),
                    Ok(ChildAnswer::Error {
                        code,
                        message,
                        data,
                    }) => Err(CallError::Protocol {
                        code,
                        message,
                        data,
                    }),
                    Err(_) => Err(self.explain_death().await),
                },
                expired = &mut ticket.expired, if may_expire => match expired {
                    Ok(()) => {
                        self.tell_cancelled(ticket.id, "timed out").await;
                        let limit = limit.unwrap_or_default();
                        return Err(CallError::Timeout { limit, elapsed: began.elapsed() });
                    }
                    Err(_) => may_expire = false,
                },
                () = cancel.cancelled() => {
                    self.tell_cancelled(ticket.id, "cancelled by the client").await;
                    return Err(CallError::Cancelled);
                }
            }
        }
    }

    /// Tells the child that call `id` is abandoned (best effort).
    async fn tell_cancelled(&self, id: i64, reason: &str) {
        if let Some(line) = request_lines::cancel_line(id, reason) {
            let _ = self.input.send(line).await;
        }
    }

    /// Why the connection ended: a message over the limit, or the process's exit (bounded wait).
    async fn explain_death(&self) -> CallError {
        if self.oversized.load(Ordering::Acquire) {
            return CallError::TooLarge;
        }
        self.link.wait_ended(DEATH_REPORT_WAIT).await;
        CallError::Died {
            end: self.link.describe_end(),
        }
    }

    /// Closes the session (the child's stdin), then stops the process: SIGTERM, then SIGKILL;
    /// a remote child's session is ended (DELETE).
    pub(crate) async fn shutdown(&self) {
        self.stopping.store(true, Ordering::Release);
        self.link.expect_end();
        if let Some(mut session) = self.session.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), session.close()).await;
        }
        self.link.stop().await;
    }
}

/// Sends `logging/setLevel` to a child that declared logging; a refusal is only logged.
pub(super) async fn set_log_level(peer: &rmcp::Peer<RoleClient>, level: LoggingLevel) {
    let logs = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.logging.is_some());
    if logs && let Err(error) = peer.set_level(SetLevelRequestParams::new(level)).await {
        tracing::debug!(%error, "the child refused logging/setLevel");
    }
}

/// Stops a child that failed to start without making the caller wait for its stop grace
/// periods: the open answers at once, the registry still knows the process (so shutdown waits
/// for it), and a stop is never left half done.
pub(super) fn stop_in_background(link: Link) {
    tokio::spawn(async move {
        link.stop().await;
    });
}

/// The child's `input_required` result, if `raw` is one.
fn input_required(raw: &ResultText) -> Option<InputRequiredResult> {
    // Most results are not: a look at the discriminator spares decoding them.
    if !raw.get().contains("\"input_required\"") {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// The start of `text`, for an error message (a child's or a remote server's words).
pub(super) fn excerpt(text: &str) -> String {
    const SHOWN: usize = 200;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
