//! Calls of children's tools as the agent makes them: through `use_tool`, or by a flat name;
//! for a 2026-07-28 agent without a session, in rounds a child's request ends.

use std::sync::Arc;

use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{CallToolRequestParams, ClientCapabilities},
    service::RequestContext,
};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::{input_rounds::RoundEnd, state::SessionState, tool_name::ToolName};
use crate::{
    child_call::{CallAnswer, CallParts, ChildErrors},
    children::{CurrentToken, PeerProgress, ProgressOut, ProgressTarget},
    jsonrpc::call_meta::CallMeta,
    meta_tools::UseToolInput,
    tasks::{TaskAsk, TaskRequest},
};

/// A call of a child's tool, as the agent made it.
pub(crate) enum AgentCall {
    /// `use_tool` with its input.
    UseTool(UseToolInput),
    /// Flat mode: the tool's flat name and its arguments as the agent wrote them.
    Flat {
        name: String,
        arguments: Option<Box<RawValue>>,
    },
}

impl AgentCall {
    /// The tool the call names, as the agent wrote it (`toolbox/server/name`, or a flat name).
    pub(crate) fn tool_named(&self) -> String {
        match self {
            AgentCall::UseTool(input) => input.tool_named(),
            AgentCall::Flat { name, .. } => name.clone(),
        }
    }

    /// The tool's own arguments, as the agent wrote them.
    pub(crate) fn arguments(&self) -> Option<&RawValue> {
        match self {
            AgentCall::UseTool(input) => input.arguments(),
            AgentCall::Flat { arguments, .. } => arguments.as_deref(),
        }
    }
}

impl SessionState {
    /// Runs `call`; progress goes to the agent through `out` under the call's progress token,
    /// if it gave one, and the rest of its `_meta` that is the agent's own goes to the child.
    /// `task` is the agent's `params.task` (2025-11-25): the call runs as a task if the child
    /// runs it as one.
    pub(crate) async fn call(
        &self,
        call: AgentCall,
        cancel: &CancellationToken,
        meta: CallMeta,
        task: Option<TaskAsk<'_>>,
        out: Option<ProgressOut>,
    ) -> CallAnswer {
        let progress = meta
            .progress
            .clone()
            .map(|token| CurrentToken::new(Some(token)))
            .zip(out)
            .map(|(token, out)| ProgressTarget { out, token });
        self.call_with(call, cancel, meta, task, progress, None)
            .await
    }

    /// A call of a `run_code` script (whose code's digest is `script`), audited as the script's.
    pub(crate) async fn call_for_script(
        &self,
        call: AgentCall,
        cancel: &CancellationToken,
        script: &str,
    ) -> CallAnswer {
        let meta = CallMeta::default();
        self.call_with(call, cancel, meta, None, None, Some(script))
            .await
    }

    /// `call` with the call's progress going to `progress`, under a token that may change while
    /// it runs; `script` is the digest of the `run_code` script that made the call.
    async fn call_with(
        &self,
        call: AgentCall,
        cancel: &CancellationToken,
        meta: CallMeta,
        task: Option<TaskAsk<'_>>,
        progress: Option<ProgressTarget>,
        script: Option<&str>,
    ) -> CallAnswer {
        let task = task.map(|ask| TaskRequest {
            ask,
            tasks: self.agent.tasks(),
        });
        let mut parts = CallParts {
            arguments: None,
            cancel,
            progress,
            meta: &meta.forwarded,
            task,
            child_errors: ChildErrors::UrlElicitation,
        };
        let audited = super::audit_trail::AuditedCall::of(&call).map(|mut audited| {
            audited.script = script.map(str::to_owned);
            audited
        });
        let served = self.served();
        let answer = match (call, &served.flat) {
            (AgentCall::Flat { name, arguments }, Some(flat)) => {
                parts.arguments = arguments.as_deref();
                parts.child_errors = ChildErrors::All;
                flat.call(&served.toolboxes, &name, parts).await
            }
            (AgentCall::UseTool(input), _) => {
                served.meta.use_tool(&served.toolboxes, input, parts).await
            }
            (AgentCall::Flat { .. }, None) => {
                CallAnswer::Refused(McpError::internal_error("flat mode is off", None))
            }
        };
        if let Some(audited) = audited {
            self.audit_call(audited, &answer);
        }
        answer
    }

    /// Runs `use_tool` for an agent without a session (2026-07-28), for which a child's request
    /// ends the call's round (`input_rounds`); a retry with `requestState` continues that call.
    pub(super) async fn in_rounds(
        self: &Arc<Self>,
        call: AgentCall,
        request: CallToolRequestParams,
        capabilities: ClientCapabilities,
        meta: CallMeta,
        ask: Option<TaskAsk<'static>>,
        context: &RequestContext<RoleServer>,
    ) -> Result<RoundEnd, McpError> {
        let input = self.agent.input();
        let log_level = context.meta.log_level();
        if let Some(level) = log_level
            && self.agent.log_level() != Some(level)
        {
            // Children have one level per session: the agent's latest.
            self.set_log_level(level).await;
        }
        // The retry's requestState is bound to the tool the call named.
        let served = self.served();
        let tool = match (&served.flat, &call) {
            (Some(flat), _) => {
                let (toolbox, server, name) = flat.locate(&request.name).unwrap_or_default();
                ToolName {
                    toolbox: toolbox.to_owned(),
                    server: server.to_owned(),
                    name: name.to_owned(),
                }
            }
            (None, call) => named_tool(call),
        };
        // Each round is a request of its own, with its own progress token.
        let progress = meta.progress.clone();
        // The first round's progress goes through its request's peer, handed to rmcp before the
        // round's answer; later rounds' progress takes the token of their own request.
        let mut first_round = None;
        let round = match request.request_state {
            Some(state) => input.resume(&state, &tool, request.input_responses, progress)?,
            None => {
                let state = self.clone();
                let peer_progress = PeerProgress::start(context.peer.clone());
                first_round = Some(peer_progress.clone());
                let out = ProgressOut::Peer(peer_progress);
                let token = CurrentToken::new(progress);
                let call_token = token.clone();
                input.begin(
                    tool,
                    capabilities,
                    log_level,
                    token,
                    move |stop| async move {
                        state
                            .call_with(
                                call,
                                &stop,
                                meta,
                                ask,
                                Some(ProgressTarget {
                                    out,
                                    token: call_token,
                                }),
                                None,
                            )
                            .await
                    },
                )
            }
        };
        let outcome = input.wait(round, &context.peer, &context.ct).await;
        if let Some(progress) = first_round {
            progress.flush().await;
        }
        Ok(outcome)
    }

    /// Opens the toolbox a `use_tool` call names, if it is configured and not open: a client
    /// without a session (2026-07-28 over HTTP) has no place to keep "open", so its calls open
    /// what they need. A toolbox that cannot open is left to `use_tool`'s own error.
    pub(crate) async fn open_named(&self, call: &AgentCall) {
        let named = named_tool(call);
        let served = self.served();
        let toolboxes = &served.toolboxes;
        if let Some(toolbox) = toolboxes.get(&named.toolbox)
            && !toolbox.is_open()
            && let Err(conflicts) = toolboxes.open(toolbox).await
        {
            tracing::warn!(toolbox = %named.toolbox, ?conflicts, "the toolbox a call named cannot open");
        }
    }
}

/// The tool a `use_tool` call names, as far as it does (it is checked later); empty parts for a
/// flat call, whose name its mode resolves.
fn named_tool(call: &AgentCall) -> ToolName {
    let [toolbox, server, name] = match call {
        AgentCall::UseTool(input) => input.named(),
        AgentCall::Flat { .. } => [None; 3],
    }
    .map(|part| part.unwrap_or_default().to_owned());
    ToolName {
        toolbox,
        server,
        name,
    }
}
