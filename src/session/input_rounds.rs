//! Input rounds (SEP-2322) for agents on protocol 2026-07-28, which take no requests from
//! servers. A child's sampling, elicitation or roots request made while it runs such an agent's
//! `use_tool` call ends that call's round with an `input_required` result that carries the
//! request. The child's call keeps running, parked; the result's `requestState` names it,
//! sealed with an HMAC under a key of this process and bound to the tool, so an agent cannot
//! forge a route to another call. The agent's retry brings `inputResponses` and the
//! `requestState` back: the answers go to the child and the call is waited on again, to its
//! result or to its next question.
//!
//! Such an agent asks for log messages per request (`_meta` `logLevel`): a child's messages
//! reach one call in flight to that child that asked for their level, and go out, before the
//! call's answer, on the agent's peer.
//!
//! Transport-independent: an adapter hands over the call (as a future), or the retry's state
//! and answers, and writes back what `wait` returns.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, sampling and roots, but 2026-07-28 still has them"
)]

use std::{
    collections::{BTreeMap, HashMap},
    future::Future,
    sync::{
        Arc, Mutex, Weak,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rmcp::{
    Peer, RoleServer,
    model::{
        ClientCapabilities, ClientResult, ErrorData as McpError, InputRequest, InputRequests,
        InputRequiredResult, InputResponses, LoggingLevel, LoggingMessageNotificationParam,
        ProgressToken, RequestStateCodec, SealOptions, ServerRequest,
    },
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::tool_name::ToolName;
use crate::{
    child_call::CallAnswer,
    children::CurrentToken,
    children::{Relayed, severity},
    locks,
};

/// How long a parked call waits for the agent's retry. A person may be answering; an agent
/// that gave up never comes back, and its call must not hold the child for ever.
pub(crate) const ANSWER_WAIT: Duration = Duration::from_secs(10 * 60);

/// The input rounds of one agent (or one serving process, for agents without a session).
pub(crate) struct InputRounds {
    codec: RequestStateCodec,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    serial: AtomicU64,
    /// Calls in flight that can carry a child's request, oldest first.
    askers: Mutex<Vec<Asker>>,
    /// Calls waiting for the agent's answers, by serial.
    parked: Mutex<HashMap<u64, Round>>,
}

struct Asker {
    serial: u64,
    /// "toolbox/server": the child the call went to.
    origin: String,
    capabilities: ClientCapabilities,
    /// The call's `logLevel`: it takes the child's log messages at or above it.
    log_level: Option<LoggingLevel>,
    events: mpsc::UnboundedSender<RoundEvent>,
}

/// What reaches a call from its child, besides the answer.
enum RoundEvent {
    Asked(Asked),
    Log(LoggingMessageNotificationParam),
}

/// A child's request, waiting for the agent's answer.
struct Asked {
    request: InputRequest,
    answer: oneshot::Sender<Value>,
}

/// One `use_tool` call of an agent without a session: the call itself, the child's requests
/// that reach it, and those the agent has not answered yet. Dropped unfinished (the agent never
/// came back), it cancels the call.
pub(crate) struct Round {
    serial: u64,
    tool: ToolName,
    call: tokio::task::JoinHandle<CallAnswer>,
    stop: CancellationToken,
    events: mpsc::UnboundedReceiver<RoundEvent>,
    pending: BTreeMap<String, Asked>,
    /// Keys of input requests are `i1`, `i2`, … over the whole call.
    asked: u64,
    /// How many times the call was parked: a state opens only the parking it was sealed for.
    parkings: u64,
    /// The progress token of the agent's request the round belongs to.
    progress: CurrentToken,
    shared: Weak<Shared>,
}

impl Drop for Round {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(shared) = self.shared.upgrade() {
            locks::lock(&shared.askers).retain(|asker| asker.serial != self.serial);
        }
    }
}

/// What a round of a call ends with.
pub(crate) enum RoundEnd {
    Done(CallAnswer),
    InputRequired(InputRequiredResult),
}

/// What the sealed `requestState` holds: which call, at which of its parkings.
#[derive(Serialize, Deserialize)]
struct State {
    call: u64,
    parking: u64,
}

impl Shared {
    /// Takes call `serial` out of the parked ones if it is still at `parking`.
    fn unpark(&self, serial: u64, parking: u64) -> Option<Round> {
        let mut parked = locks::lock(&self.parked);
        let current = parked
            .get(&serial)
            .is_some_and(|round| round.parkings == parking);
        current.then(|| parked.remove(&serial)).flatten()
    }
}

impl Default for InputRounds {
    fn default() -> Self {
        let mut key = [0u8; 32];
        // Without an OS random source no other secret would be better: fail loudly at start.
        getrandom::fill(&mut key).expect("the operating system provides random bytes");
        Self {
            codec: RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough"),
            shared: Arc::default(),
        }
    }
}

impl InputRounds {
    /// Starts `call` of `tool`; the child's requests made while it runs reach this round if the
    /// agent's `capabilities` declared them, its log messages if they are at `log_level` or above.
    pub(crate) fn begin<F>(
        &self,
        tool: ToolName,
        capabilities: ClientCapabilities,
        log_level: Option<LoggingLevel>,
        progress: CurrentToken,
        call: impl FnOnce(CancellationToken) -> F,
    ) -> Round
    where
        F: Future<Output = CallAnswer> + Send + 'static,
    {
        let serial = self.shared.serial.fetch_add(1, Ordering::Relaxed) + 1;
        let (sender, events) = mpsc::unbounded_channel();
        locks::lock(&self.shared.askers).push(Asker {
            serial,
            origin: tool.origin(),
            capabilities,
            log_level,
            events: sender,
        });
        let stop = CancellationToken::new();
        Round {
            serial,
            call: tokio::spawn(call(stop.clone())),
            stop,
            events,
            pending: BTreeMap::new(),
            asked: 0,
            parkings: 0,
            shared: Arc::downgrade(&self.shared),
            tool,
            progress,
        }
    }

    /// The parked round the agent's retry continues, with its answers given to the child.
    pub(crate) fn resume(
        &self,
        state: &str,
        tool: &ToolName,
        answers: Option<InputResponses>,
        progress: Option<ProgressToken>,
    ) -> Result<Round, McpError> {
        let opened = self
            .codec
            .open_json_with::<State>(state, tool.to_string().as_bytes())
            .map_err(|error| {
                tracing::debug!(%error, %tool, "a requestState that does not open");
                McpError::invalid_params(
                    format!(
                        "requestState was not issued by this toolshelf for a call of '{tool}', was altered, or is older than {} minutes; call use_tool again without requestState and inputResponses",
                        ANSWER_WAIT.as_secs() / 60
                    ),
                    None,
                )
            })?;
        let Some(mut round) = self.shared.unpark(opened.call, opened.parking) else {
            return Err(McpError::invalid_params(
                format!(
                    "the call of '{tool}' that this requestState continues is no longer waiting (it was continued already, or it ended); call use_tool again without requestState and inputResponses"
                ),
                None,
            ));
        };
        // Set before the answers go: what the child reports after them belongs to this request.
        round.progress.set(progress);
        for (key, answer) in answers.unwrap_or_default() {
            if let Some(asked) = round.pending.remove(&key) {
                let _ = asked.answer.send(answer);
            }
        }
        Ok(round)
    }

    /// Waits for `round`'s call to end, or for a child's request the agent must answer: then
    /// the round is parked for the agent's retry. The child's log messages go to `agent`
    /// meanwhile. The agent's `cancel` ends the call (the child is told).
    pub(crate) async fn wait(
        &self,
        mut round: Round,
        agent: &Peer<RoleServer>,
        cancel: &CancellationToken,
    ) -> RoundEnd {
        loop {
            // A request the child has withdrawn needs no answer.
            round.pending.retain(|_, asked| !asked.answer.is_closed());
            if !round.pending.is_empty() {
                return RoundEnd::InputRequired(self.park(round));
            }
            tokio::select! {
                // What the child sent before its answer goes out before it.
                biased;
                // Whatever else is queued comes along: the requests go out in one round.
                Some(first) = round.events.recv() => {
                    let mut next = Some(first);
                    while let Some(event) = next {
                        match event {
                            RoundEvent::Asked(asked) => round.take(asked),
                            RoundEvent::Log(message) => log(agent, message).await,
                        }
                        next = round.events.try_recv().ok();
                    }
                }
                answer = &mut round.call => return RoundEnd::Done(round.answered(answer)),
                // The call sees the cancellation (the child is told) and answers as it does.
                () = cancel.cancelled() => {
                    round.stop.cancel();
                    let answer = (&mut round.call).await;
                    return RoundEnd::Done(round.answered(answer));
                }
            }
        }
    }

    /// Keeps `round` for the agent's retry and says what it must answer.
    fn park(&self, mut round: Round) -> InputRequiredResult {
        let requests: InputRequests = round
            .pending
            .iter()
            .map(|(key, asked)| (key.clone(), asked.request.clone()))
            .collect();
        let tool = round.tool.to_string();
        let options = SealOptions::new()
            .associated_data(tool.as_bytes())
            .ttl(ANSWER_WAIT);
        round.parkings += 1;
        round.progress.set(None);
        let (serial, parking) = (round.serial, round.parkings);
        let state = self
            .codec
            .seal_json_with(
                &State {
                    call: serial,
                    parking,
                },
                &options,
            )
            .expect("numbers encode as JSON");
        locks::lock(&self.shared.parked).insert(serial, round);
        let shared = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            tokio::time::sleep(ANSWER_WAIT).await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            if let Some(round) = shared.unpark(serial, parking) {
                tracing::info!(tool = %round.tool, "the MCP client did not answer a server's request in time; its call is cancelled");
            }
        });
        InputRequiredResult::new(Some(requests), Some(state))
    }

    /// Relays a child's `request` to the agent through the oldest call in flight to that child
    /// (`origin`, "toolbox/server") whose agent declared the capability, and waits for the answer
    /// the agent's retry brings.
    pub(crate) async fn ask(
        &self,
        kind: Relayed,
        request: ServerRequest,
        origin: &str,
        cancel: &CancellationToken,
    ) -> Result<ClientResult, String> {
        let request = Relayed::into_input(request)?;
        let (answer, answered) = oneshot::channel();
        let sent = {
            let askers = locks::lock(&self.shared.askers);
            let mut calls = askers.iter().filter(|asker| asker.origin == origin);
            let Some(asker) = calls.find(|asker| kind.declared(&asker.capabilities)) else {
                return Err(format!(
                    "no call of the MCP client that declared {} is in flight on {origin} (clients on protocol 2026-07-28 answer servers' requests only as part of a call)",
                    kind.capability()
                ));
            };
            asker
                .events
                .send(RoundEvent::Asked(Asked { request, answer }))
                .is_ok()
        };
        if !sent {
            return Err("the call that was to carry it has just ended".into());
        }
        let answer = tokio::select! {
            answer = answered => answer.map_err(|_| {
                "the MCP client did not answer: the call that carried the request was cancelled, ended, or was not continued in time".to_owned()
            })?,
            () = cancel.cancelled() => return Err("cancelled".into()),
        };
        kind.result(answer)
    }

    /// Passes a child's log message to the oldest call in flight to `origin` that asked for its
    /// level. `false` when none did.
    pub(crate) fn log(&self, origin: &str, message: LoggingMessageNotificationParam) -> bool {
        let askers = locks::lock(&self.shared.askers);
        let wanted = |asker: &&Asker| {
            asker.origin == origin
                && asker
                    .log_level
                    .is_some_and(|level| severity(message.level) >= severity(level))
        };
        askers
            .iter()
            .find(wanted)
            .is_some_and(|asker| asker.events.send(RoundEvent::Log(message)).is_ok())
    }
}

async fn log(agent: &Peer<RoleServer>, message: LoggingMessageNotificationParam) {
    if let Err(error) = agent.notify_logging_message(message).await {
        tracing::debug!(%error, "a child's log message did not reach the MCP client");
    }
}

impl Round {
    fn take(&mut self, asked: Asked) {
        self.asked += 1;
        self.pending.insert(format!("i{}", self.asked), asked);
    }

    fn answered(&self, answer: Result<CallAnswer, tokio::task::JoinError>) -> CallAnswer {
        answer.unwrap_or_else(|error| self.tool.stopped_inside(&error))
    }
}
