//! Who a session is (its caller also labels its calls in `/metrics`), and what it tells the
//! audit log (`crate::audit`): each call of a child's tool (both
//! modes, both transports pass `SessionState::call`), each open and each search, with who made
//! it (the caller and session the transport named) and how it ended.

use std::time::Instant;

use rmcp::model::CallToolResult;
use serde_json::Value;

use super::{SessionState, calls::AgentCall};
use crate::{
    audit::{self, Record},
    child_call::CallAnswer,
};

/// Who a session is, as the transport named it (`serve --http`: its caller and session id).
pub(crate) struct Who {
    pub caller: Option<String>,
    pub session: String,
    /// The caller is a token's name, of which there are few, so `/metrics` may count by it (an
    /// access token's subject is not: subjects are as many as the identity provider has).
    pub counted: bool,
}

/// A call, as it will be recorded once it ends.
pub(super) struct AuditedCall {
    toolbox: Option<String>,
    server: Option<String>,
    tool: String,
    digest: String,
    began: Instant,
    /// The digest of the `run_code` script that made the call.
    pub(super) script: Option<String>,
}

impl AuditedCall {
    /// The record-to-be of `call`, when the audit log is on.
    pub(super) fn of(call: &AgentCall) -> Option<AuditedCall> {
        if !audit::enabled() {
            return None;
        }
        let (toolbox, server, tool, arguments) = match call {
            AgentCall::UseTool(input) => {
                let named = input.tool_named();
                let mut parts = named.splitn(3, '/').map(str::to_owned);
                let (toolbox, server) = (parts.next(), parts.next());
                let tool = parts.next().unwrap_or_default();
                (toolbox, server, tool, input.arguments())
            }
            AgentCall::Flat { name, arguments } => (None, None, name.clone(), arguments.as_deref()),
        };
        Some(AuditedCall {
            toolbox,
            server,
            tool,
            digest: audit::digest(arguments.map_or("{}", |raw| raw.get()).as_bytes()),
            began: Instant::now(),
            script: None,
        })
    }
}

/// An `open_toolbox` (an open, or a search: then the digest of its query), as it will be
/// recorded once answered.
pub(super) struct AuditedOpen {
    toolbox: Option<String>,
    digest: Option<String>,
    began: Instant,
}

impl AuditedOpen {
    /// The record-to-be of an `open_toolbox` with `input`, when the audit log is on.
    pub(super) fn of(input: &Value) -> Option<AuditedOpen> {
        if !audit::enabled() {
            return None;
        }
        let text = |key: &str| input.get(key).and_then(Value::as_str);
        Some(AuditedOpen {
            toolbox: text("toolbox").map(str::to_owned),
            digest: text("query").map(|query| audit::digest(query.as_bytes())),
            began: Instant::now(),
        })
    }
}

impl SessionState {
    /// Records `call`, which ended with `answer`.
    pub(super) fn audit_call(&self, call: AuditedCall, answer: &CallAnswer) {
        let outcome = match answer {
            CallAnswer::Forwarded(result) if result.is_error() => "tool_error",
            CallAnswer::Forwarded(_) => "ok",
            CallAnswer::Failed(result) => error_kind(result),
            CallAnswer::Refused(_) => "refused",
        };
        let outcome = match outcome {
            "ok" | "tool_error" => outcome,
            _ if self.withholds(&call) => "denied",
            _ => outcome,
        };
        let revision = call
            .toolbox
            .as_deref()
            .zip(call.server.as_deref())
            .and_then(|(toolbox, server)| {
                let served = self.served();
                let revision = served
                    .toolboxes
                    .get(toolbox)?
                    .server(server)?
                    .catalog
                    .revision();
                Some(revision)
            });
        self.audit(Record {
            event: "call",
            toolbox: call.toolbox.as_deref(),
            server: call.server.as_deref(),
            tool: Some(&call.tool),
            outcome,
            ms: milliseconds(call.began),
            revision,
            digest: Some(call.digest),
            script: call.script.as_deref(),
            ..self.record_base()
        });
    }

    /// Records `open`, answered `result`.
    pub(super) fn audit_open(&self, open: AuditedOpen, result: &CallToolResult) {
        let outcome = match result.is_error {
            Some(true) => error_kind(result),
            _ => "ok",
        };
        let served = self.served();
        let withheld = served.toolboxes.withheld();
        let outcome = match &open.toolbox {
            Some(toolbox) if outcome != "ok" && withheld.covers(toolbox, None, None) => "denied",
            _ => outcome,
        };
        self.audit(Record {
            event: if open.digest.is_some() {
                "search"
            } else {
                "open"
            },
            toolbox: open.toolbox.as_deref(),
            outcome,
            ms: milliseconds(open.began),
            digest: open.digest,
            ..self.record_base()
        });
    }

    /// Records a `run_code` run of the script whose digest is `script`, which ended `outcome`
    /// (`ok`, or its error's kind) after `began`; its calls have their own records.
    pub(super) fn audit_script(&self, script: &str, outcome: &str, began: Instant) {
        self.audit(Record {
            event: "script",
            outcome,
            ms: milliseconds(began),
            script: Some(script),
            ..self.record_base()
        });
    }

    /// True when the policy withholds what `call` named from this session's caller: it was
    /// answered as if that did not exist, and is recorded as denied.
    fn withholds(&self, call: &AuditedCall) -> bool {
        let served = self.served();
        let Some(toolbox) = call.toolbox.as_deref() else {
            let flat = served.flat.as_ref();
            let withheld = served.toolboxes.withheld();
            return flat.is_some_and(|flat| withheld.covers_flat(&call.tool, flat.separator()));
        };
        let server = call.server.as_deref();
        let canonical = server
            .and_then(|server| served.toolboxes.get(toolbox)?.server(server))
            .and_then(|slot| slot.catalog.resolve(&call.tool));
        let tool = canonical.as_deref().unwrap_or(&call.tool);
        served
            .toolboxes
            .withheld()
            .covers(toolbox, server, Some(tool))
    }

    fn record_base(&self) -> Record<'_> {
        let who = self.who.get();
        Record {
            event: "",
            caller: who.and_then(|who| who.caller.as_deref()),
            session: who.map(|who| who.session.as_str()),
            toolbox: None,
            server: None,
            tool: None,
            outcome: "",
            ms: 0.0,
            revision: None,
            digest: None,
            script: None,
        }
    }

    fn audit(&self, record: Record<'_>) {
        audit::record(&record);
    }

    /// Names the session for the audit log and the metrics, once.
    pub(crate) fn identify(&self, who: Who) {
        if let Some(caller) = who.caller.as_ref().filter(|_| who.counted) {
            self.served().toolboxes.set_caller(caller);
        }
        let _ = self.who.set(who);
    }
}

/// The `kind` of toolshelf's own error in `result`.
fn error_kind(result: &CallToolResult) -> &str {
    result
        .structured_content
        .as_ref()
        .and_then(|content| content.pointer("/error/kind"))
        .and_then(Value::as_str)
        .unwrap_or("error")
}

fn milliseconds(began: Instant) -> f64 {
    (began.elapsed().as_secs_f64() * 1e5).round() / 100.0
}
