//! Code mode's runs in a session: a `run_code` script's calls made as `use_tool` makes them
//! (`SessionState::call`: the caller's view, access rules and confirmation, the call budget,
//! the audit log, each call's record naming the script by its digest), and the script's end
//! as the agent's answer.

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    time::Instant,
};

use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken};
use serde_json::{Value, json, value::RawValue};
use tokio_util::sync::CancellationToken;

use super::{calls::AgentCall, state::SessionState};
use crate::{
    child_call::CallAnswer,
    children::PeerProgress,
    code_mode::{self, CALL_TOOL, Ending, Finished, ToolCall},
    error::{ScriptFailure, ToolError, printed},
    meta_tools::UseToolInput,
};

impl SessionState {
    /// `run_code` with `input`: the script run within the config's limits, stopped by `cancel`;
    /// with `progress`, a notice to the agent as each of its tool calls ends.
    pub(crate) async fn run_code(
        &self,
        input: Value,
        cancel: &CancellationToken,
        progress: Option<(PeerProgress, ProgressToken)>,
    ) -> CallToolResult {
        let served = self.served();
        let code = match served.meta.script(input) {
            Ok(code) => code,
            Err(error) => return error.into_result(),
        };
        let limits = served.meta.code_limits();
        drop(served);
        let began = Instant::now();
        let script = crate::audit::digest(code.as_bytes());
        let made = AtomicUsize::new(0);
        let Finished { output, ending } = code_mode::run(code, &limits, cancel, |call, stop| {
            let (script, progress, made) = (&script, &progress, &made);
            async move {
                let tool = call.tool.clone();
                let result = self.script_call(call, &stop, script).await;
                if let Some((progress, token)) = progress {
                    let count = made.fetch_add(1, Ordering::Relaxed) + 1;
                    let ended = match &result {
                        Ok(_) => "returned",
                        Err(_) => "failed",
                    };
                    let notice = ProgressNotificationParam::new(token.clone(), count as f64)
                        .with_message(format!("tool call {count}: {tool} {ended}"));
                    progress.notify(notice);
                }
                result
            }
        })
        .await;
        let result = match ending {
            Ending::Returned(value) => {
                let mut text = printed(&output);
                if !value.is_null() {
                    if !text.is_empty() && !text.ends_with('\n') {
                        text.push('\n');
                    }
                    text.push_str(&value.to_string());
                }
                if text.is_empty() {
                    text.push_str("(the script printed nothing and its last line has no value)");
                }
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            ending => ToolError::Script(Box::new(ScriptFailure {
                ending,
                output,
                limits,
            }))
            .into_result(),
        };
        let outcome = match result.is_error {
            Some(true) => result
                .structured_content
                .as_ref()
                .and_then(|content| content.pointer("/error/kind"))
                .and_then(Value::as_str)
                .unwrap_or("error"),
            _ => "ok",
        };
        self.audit_script(&script, outcome, began);
        result
    }

    /// One call of the script whose digest is `script`: the tool's result as the script's
    /// value, or the error it raises.
    async fn script_call(
        &self,
        call: ToolCall,
        cancel: &CancellationToken,
        script: &str,
    ) -> Result<Value, String> {
        let ToolCall { tool, arguments } = call;
        let mut parts = tool.splitn(3, '/');
        let (Some(toolbox), Some(server), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!(
                "{CALL_TOOL}({tool:?}): name the tool as \"toolbox/server/name\", as open_toolbox lists it"
            ));
        };
        let input = json!({
            "tool": {"toolbox": toolbox, "server": server, "name": name},
            "arguments": arguments,
        });
        let raw = RawValue::from_string(input.to_string()).map_err(|error| error.to_string())?;
        let call = AgentCall::UseTool(UseToolInput::from_raw(&raw));
        let _in_flight = self
            .enter_call()
            .map_err(|error| error.message.to_string())?;
        // A script's first call of a toolbox opens it, as a tool a search showed would be.
        self.open_named(&call).await;
        let takes = self.check_arguments(&tool, [toolbox, server, name], &input["arguments"])?;
        let answer = self.call_for_script(call, cancel, script).await;
        // A client without an rmcp peer (2026-07-28) is asked only in a round of its own
        // use_tool call, and a script's call is none: the refusal's advice alone would send it
        // for another client.
        let unasked = self.agent.peer().is_none() && is_unconfirmed(&answer);
        let error = match python_value(&tool, answer) {
            Ok(value) => return Ok(value),
            Err(error) if unasked => format!(
                "{error}; a client on protocol 2026-07-28 cannot be asked from a script: if it declared elicitation, make this call through use_tool, whose input round asks the user"
            ),
            Err(error) => error,
        };
        Err(match takes {
            Some(takes) => format!("{error} (it takes {takes})"),
            None => error,
        })
    }
}

impl SessionState {
    /// Checks a script's `arguments` against the input schema of the tool `named`, before the
    /// child sees them: the mistakes, and the parameters the tool takes; else those parameters,
    /// for the error of a failed call. A tool toolshelf does not know is left to the call,
    /// whose error says so.
    fn check_arguments(
        &self,
        tool: &str,
        named: [&str; 3],
        arguments: &Value,
    ) -> Result<Option<String>, String> {
        let [toolbox, server, name] = named;
        let served = self.served();
        let toolboxes = &served.toolboxes;
        let Some(listed) = toolboxes
            .get(toolbox)
            .and_then(|boxed| boxed.server(server))
            .and_then(|slot| toolboxes.tool_of(slot, &toolboxes.resolve(slot, name)?))
        else {
            return Ok(None);
        };
        let schema = &listed.tool.input_schema;
        // `{"type": "object"}` alone takes anything.
        let parameters = match schema.contains_key("properties") || schema.len() > 1 {
            true => crate::meta_tools::signature::arguments(schema),
            false => "**arguments".to_owned(),
        };
        let takes = format!("{name}({parameters})");
        let schema = Value::Object((*listed.tool.input_schema).clone());
        let Ok(validator) = jsonschema::validator_for(&schema) else {
            return Ok(Some(takes));
        };
        let mistakes: Vec<String> = validator
            .iter_errors(arguments)
            .take(5)
            .map(|error| match error.instance_path().as_str() {
                "" => error.to_string(),
                path => format!("{path}: {error}"),
            })
            .collect();
        if mistakes.is_empty() {
            return Ok(Some(takes));
        }
        Err(format!(
            "{tool}: the arguments do not match the tool's inputSchema ({}); it takes {takes}; the call was not made",
            mistakes.join("; ")
        ))
    }
}

/// Whether `answer` is the refusal of a call the user had to confirm and did not.
fn is_unconfirmed(answer: &CallAnswer) -> bool {
    let CallAnswer::Failed(result) = answer else {
        return false;
    };
    let kind = result.structured_content.as_ref();
    kind.and_then(|content| content.pointer("/error/kind")) == Some(&json!("not_confirmed"))
}

/// What a script gets of `answer`: the tool's `structuredContent`, else its text (parsed as
/// JSON when it is JSON), else its content blocks as they are; an error raises with the
/// tool's own text.
fn python_value(tool: &str, answer: CallAnswer) -> Result<Value, String> {
    let result: Value = match answer {
        CallAnswer::Forwarded(result) => {
            serde_json::from_str(result.json()).map_err(|error| error.to_string())?
        }
        CallAnswer::Failed(result) => serde_json::to_value(result).unwrap_or_default(),
        CallAnswer::Refused(error) => return Err(format!("{tool} failed: {}", error.message)),
    };
    let content = result.get("content").and_then(Value::as_array);
    let texts: Option<Vec<&str>> = content.map(|blocks| {
        blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect()
    });
    let text = texts.map(|texts| texts.join("\n")).unwrap_or_default();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(format!("{tool} failed: {text}"));
    }
    if let Some(structured) = result.get("structuredContent") {
        return Ok(structured.clone());
    }
    let all_text = content.is_none_or(|blocks| {
        blocks
            .iter()
            .all(|block| block.get("type").and_then(Value::as_str) == Some("text"))
    });
    Ok(match all_text {
        true => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        false => Value::Array(content.cloned().unwrap_or_default()),
    })
}
