//! Code mode's engine: an agent's Python script, run by Monty (pydantic's sandboxed
//! interpreter, in this process) within its limits, its `await call_tool(...)` calls handed to
//! the host, which makes them as `use_tool` would (`session::code_runs`). Nothing here knows
//! of sessions or children: the host passes the function that makes a call.

mod sandbox;
mod tracker;
mod values;

use std::{future::Future, time::Duration};

use monty_types::MontyObject;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub(crate) use sandbox::Output;
use sandbox::{CallResult, Script, Up};

/// The function a script calls tools with.
pub(crate) const CALL_TOOL: &str = "call_tool";

/// How long the host waits for a stopped script's thread to say it ended: it stops at its next
/// statement, microseconds away.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// What one run may spend; each has a default and a config key (`config::CodeSettings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The whole run, its tool calls included.
    pub(crate) timeout: Duration,
    /// The interpreter's own time, tool calls not included.
    pub(crate) cpu: Duration,
    /// The bytes of the script's values, as Monty's heap counts them.
    pub(crate) memory_bytes: usize,
    pub(crate) recursion_depth: usize,
    pub(crate) tool_calls: usize,
    /// What the script prints that reaches the agent; the rest is counted, not kept.
    pub(crate) output_bytes: usize,
}

/// A tool call a script made: `call_tool("toolbox/server/name", {...})`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub(crate) tool: String,
    pub(crate) arguments: Value,
}

impl ToolCall {
    /// The call from `call_tool`'s arguments: the tool's name, then its arguments as a dict
    /// (or as keywords); why not, as the `TypeError` the script gets.
    fn read(
        args: Vec<MontyObject>,
        kwargs: Vec<(MontyObject, MontyObject)>,
    ) -> Result<Self, String> {
        let usage = format!(
            "{CALL_TOOL}(\"toolbox/server/name\", {{...arguments}}) takes the tool's name and a dict of its arguments"
        );
        let mut args = args.into_iter();
        let tool = match args.next() {
            Some(MontyObject::String(tool)) => tool,
            _ => return Err(usage),
        };
        let arguments = match (args.next(), args.next(), kwargs.is_empty()) {
            (None, None, true) => Value::Object(Default::default()),
            (Some(dict @ MontyObject::Dict(_)), None, true) => values::to_json(dict),
            (None, None, false) => values::to_json(MontyObject::Dict(kwargs.into())),
            _ => return Err(usage),
        };
        Ok(ToolCall { tool, arguments })
    }
}

/// How a run ended, with what it printed.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) output: Output,
    pub(crate) ending: Ending,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Ending {
    /// The value of the script's last expression (`null` for a statement).
    Returned(Value),
    /// The script did not parse, or raised: Monty's traceback.
    Raised(String),
    /// One `call_tool` more than `Limits::tool_calls`.
    TooManyCalls,
    /// `Limits::timeout` passed.
    TimedOut,
    /// The agent cancelled the run.
    Cancelled,
    /// Stopped from the host's side (its thread saw the stop).
    Stopped,
    /// The interpreter's thread could not start.
    NotStarted(String),
}

/// Runs `code` within `limits`; each batch of its calls goes to `call` at once (a script's
/// `asyncio.gather` makes several), with a token that is cancelled when the run stops. `cancel`
/// is the agent's: the script and its calls in flight stop with it.
pub(crate) async fn run<Call, Made>(
    code: String,
    limits: &Limits,
    cancel: &CancellationToken,
    call: Call,
) -> Finished
where
    Call: Fn(ToolCall, CancellationToken) -> Made,
    Made: Future<Output = CallResult>,
{
    let (mut script, mut events) = Script::start(code, limits);
    let deadline = tokio::time::sleep(limits.timeout);
    tokio::pin!(deadline);
    let calls_cancel = cancel.child_token();
    let stop = loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = cancel.cancelled() => break Ending::Cancelled,
            () = &mut deadline => break Ending::TimedOut,
        };
        let calls = match event {
            Some(Up::Calls(calls)) => calls,
            Some(Up::Finished(finished)) => return finished,
            None => break Ending::Stopped,
        };
        let made = futures::future::join_all(calls.into_iter().map(|(id, tool_call)| {
            let made = call(tool_call, calls_cancel.clone());
            async move { (id, made.await) }
        }));
        tokio::pin!(made);
        let stopped = tokio::select! {
            results = &mut made => {
                script.answer(results);
                continue;
            }
            () = cancel.cancelled() => Ending::Cancelled,
            () = &mut deadline => Ending::TimedOut,
        };
        // The calls in flight are cancelled, so their children hear of it, and end.
        calls_cancel.cancel();
        let _ = tokio::time::timeout(STOP_GRACE, made).await;
        break stopped;
    };
    calls_cancel.cancel();
    script.stop();
    let output = loop {
        match tokio::time::timeout(STOP_GRACE, events.recv()).await {
            Ok(Some(Up::Finished(finished))) => break finished.output,
            Ok(Some(Up::Calls(_))) => continue,
            _ => break Output::default(),
        }
    };
    Finished {
        output,
        ending: stop,
    }
}

#[cfg(test)]
mod tests;
