//! The one boundary where toolshelf's own failures become agent-visible tool results: use_tool's error table's
//! text (byte for byte, then a line of suggestions where a name was not found) and, for programs,
//! `structuredContent.error` with a stable shape. Change no text without its snapshot.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Value, json};

use crate::schema_check::Violation;

mod script;
mod texts;

pub(crate) use script::{ScriptFailure, printed};

use texts::{alternatives, invalid, suggestions};

/// A failure the agent can act on; it goes back as an `isError` tool result.
#[derive(Debug)]
pub(crate) enum ToolError {
    /// `use_tool`'s input broke its schema.
    InvalidUseTool(Vec<Violation>),
    /// `open_toolbox`'s input broke its schema.
    InvalidOpenToolbox(Vec<Violation>),
    /// `run_code`'s input broke its schema.
    InvalidRunCode(Vec<Violation>),
    /// A `run_code` script raised, or was stopped at a limit: why, what it printed.
    Script(Box<script::ScriptFailure>),
    ToolboxUnknown {
        context: Context,
        toolbox: String,
        known: Vec<String>,
    },
    ToolboxNotOpen {
        toolbox: String,
    },
    ServerUnknown {
        toolbox: String,
        server: String,
        known: Vec<String>,
    },
    ToolUnknown {
        toolbox: String,
        server: String,
        name: String,
        known: Vec<String>,
    },
    /// The child failed the call, could not be reached, or its answer could not be passed on.
    Downstream {
        toolbox: String,
        server: String,
        name: String,
        kind: DownstreamKind,
        error: String,
    },
    /// A call into a toolbox whose open failed, to a server that could not start: why, and
    /// what would get past it.
    OpenedWithoutServer {
        toolbox: String,
        server: String,
        name: String,
        /// The server's own error.
        reason: String,
        /// The config leaves it unable to start (an unset variable…): only the user can fix
        /// that, and a new open does not help before they have.
        by_config: bool,
    },
    /// Not one server of the toolbox could be started.
    OpenFailed {
        toolbox: String,
        failures: Vec<(String, String)>,
    },
    /// An alias equals another tool's name: the toolbox does not open until the config changes.
    AliasConflict {
        toolbox: String,
        conflicts: Vec<String>,
    },
    /// An access rule asks the user to confirm the call, and the user did not.
    Unconfirmed {
        toolbox: String,
        server: String,
        name: String,
        /// The rule's path in the config.
        rule: String,
        why: Unconfirmed,
    },
}

/// Why a call that needed the user's confirmation did not get it.
#[derive(Debug)]
pub(crate) enum Unconfirmed {
    Declined,
    Cancelled,
    /// The user could not be asked: why.
    NotAsked(String),
}

/// Which meta-tool reports an unknown toolbox.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Context {
    OpenToolbox,
    UseTool,
}

/// Why a forwarded call failed, for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DownstreamKind {
    /// Not running and could not be (re)started now: failed start, crash, backoff.
    ServerUnavailable,
    Timeout,
    /// The child answered with a JSON-RPC error or an unusable response.
    ChildError,
    ResultTooLarge,
    Cancelled,
}

/// `structuredContent.error`: the same failure, for programs.
#[derive(Debug, Serialize)]
struct Structured<'a> {
    kind: &'static str,
    toolbox: Option<&'a str>,
    server: Option<&'a str>,
    name: Option<&'a str>,
    retryable: bool,
    suggestions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    violations: Option<&'a [Violation]>,
    /// The call that gets past this error, where there is one the agent can make.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

impl ToolError {
    /// The agent-visible text.
    pub(crate) fn text(&self) -> String {
        match self {
            ToolError::InvalidUseTool(violations) => {
                invalid("Invalid tool invocation parameters", violations)
            }
            ToolError::InvalidOpenToolbox(violations) => {
                invalid("Invalid open_toolbox parameters", violations)
            }
            ToolError::InvalidRunCode(violations) => {
                invalid("Invalid run_code parameters", violations)
            }
            ToolError::Script(failure) => failure.text(),
            ToolError::ToolboxUnknown {
                context,
                toolbox,
                known,
            } => {
                let prefix = match context {
                    Context::UseTool => "Error executing tool: ",
                    Context::OpenToolbox => "",
                };
                format!(
                    "{prefix}Toolbox '{toolbox}' does not exist{}",
                    alternatives(toolbox, known, "Configured toolboxes")
                )
            }
            ToolError::ToolboxNotOpen { toolbox } => {
                format!("Error executing tool: Toolbox '{toolbox}' is not open")
            }
            ToolError::ServerUnknown {
                toolbox,
                server,
                known,
            } => format!(
                "Error executing tool: Server '{server}' not found in toolbox '{toolbox}'{}",
                alternatives(server, known, "Servers of this toolbox")
            ),
            ToolError::ToolUnknown {
                server,
                name,
                known,
                ..
            } => format!(
                "Error executing tool: Tool '{name}' not found in server '{server}'{}",
                alternatives(name, known, "Tools of this server")
            ),
            ToolError::Downstream {
                toolbox,
                server,
                name,
                error,
                ..
            } => format!(
                "Error executing tool '{name}' in server '{server}' (toolbox '{toolbox}'): {error}"
            ),
            ToolError::OpenedWithoutServer {
                toolbox,
                server,
                name,
                reason,
                by_config,
            } => {
                let advice = match by_config {
                    true => "The user has to fix this in toolshelf's config or environment and restart toolshelf (or reload its config); until then the server's tools cannot be called.".to_owned(),
                    false => format!(
                        "Once the cause is fixed, call open_toolbox {} again: it starts the server anew.",
                        serde_json::json!({ "toolbox": toolbox })
                    ),
                };
                format!(
                    "Error executing tool '{name}' in server '{server}' (toolbox '{toolbox}'): the toolbox did not open, as this server could not start: {reason}\n{advice}"
                )
            }
            ToolError::OpenFailed { toolbox, failures } => {
                let mut text = format!(
                    "Error opening toolbox '{toolbox}': none of its servers could be started."
                );
                for (server, reason) in failures {
                    text.push_str(&format!("\n- {server}: {reason}"));
                }
                text.push_str("\nFix the cause above, then call open_toolbox again.");
                text
            }
            ToolError::Unconfirmed {
                toolbox,
                server,
                name,
                rule,
                why,
            } => {
                let why = match why {
                    Unconfirmed::Declined => "the user declined it".to_owned(),
                    Unconfirmed::Cancelled => "the user cancelled the question".to_owned(),
                    Unconfirmed::NotAsked(reason) => format!(
                        "the user could not be asked ({reason}): use an MCP client that supports elicitation, or change the rule"
                    ),
                };
                format!(
                    "Error executing tool '{name}' in server '{server}' (toolbox '{toolbox}'): the access rule {rule} asks the user to confirm each call, and {why}"
                )
            }
            ToolError::AliasConflict { toolbox, conflicts } => {
                let mut text = format!(
                    "Error opening toolbox '{toolbox}': its config gives a tool an alias that is another tool's name."
                );
                for conflict in conflicts {
                    text.push_str(&format!("\n- {conflict}"));
                }
                text
            }
        }
    }

    fn structured(&self) -> Structured<'_> {
        let mut error = Structured {
            kind: "invalid_arguments",
            toolbox: None,
            server: None,
            name: None,
            retryable: false,
            suggestions: Vec::new(),
            violations: None,
            next: None,
        };
        match self {
            ToolError::InvalidUseTool(violations)
            | ToolError::InvalidOpenToolbox(violations)
            | ToolError::InvalidRunCode(violations) => {
                error.violations = Some(violations);
            }
            ToolError::Script(failure) => {
                error.kind = failure.kind();
                error.retryable = failure.retryable();
            }
            ToolError::ToolboxUnknown { toolbox, known, .. } => {
                error.kind = "toolbox_unknown";
                error.toolbox = Some(toolbox);
                error.suggestions = suggestions(toolbox, known);
            }
            ToolError::ToolboxNotOpen { toolbox } => {
                error.kind = "toolbox_not_open";
                error.toolbox = Some(toolbox);
                error.next = Some(format!(
                    "call open_toolbox {} first",
                    serde_json::json!({ "toolbox": toolbox })
                ));
            }
            ToolError::ServerUnknown {
                toolbox,
                server,
                known,
            } => {
                error.kind = "server_unknown";
                error.toolbox = Some(toolbox);
                error.server = Some(server);
                error.suggestions = suggestions(server, known);
            }
            ToolError::ToolUnknown {
                toolbox,
                server,
                name,
                known,
            } => {
                error.kind = "tool_unknown";
                error.toolbox = Some(toolbox);
                error.server = Some(server);
                error.name = Some(name);
                error.suggestions = suggestions(name, known);
            }
            ToolError::Downstream {
                toolbox,
                server,
                name,
                kind,
                ..
            } => {
                (error.kind, error.retryable) = match kind {
                    DownstreamKind::ServerUnavailable => ("server_unavailable", true),
                    DownstreamKind::Timeout => ("timeout", true),
                    DownstreamKind::ChildError => ("child_error", false),
                    DownstreamKind::ResultTooLarge => ("result_too_large", false),
                    DownstreamKind::Cancelled => ("cancelled", false),
                };
                error.toolbox = Some(toolbox);
                error.server = Some(server);
                error.name = Some(name);
            }
            ToolError::OpenedWithoutServer {
                toolbox,
                server,
                name,
                by_config,
                ..
            } => {
                error.kind = "server_unavailable";
                error.toolbox = Some(toolbox);
                error.server = Some(server);
                error.name = Some(name);
                error.retryable = !by_config;
                if !by_config {
                    error.next = Some(format!(
                        "call open_toolbox {} once the cause is fixed",
                        serde_json::json!({ "toolbox": toolbox })
                    ));
                }
            }
            ToolError::OpenFailed { toolbox, .. } => {
                error.kind = "toolbox_unavailable";
                error.toolbox = Some(toolbox);
                error.retryable = true;
            }
            ToolError::AliasConflict { toolbox, .. } => {
                error.kind = "alias_conflict";
                error.toolbox = Some(toolbox);
            }
            ToolError::Unconfirmed {
                toolbox,
                server,
                name,
                ..
            } => {
                error.kind = "not_confirmed";
                error.toolbox = Some(toolbox);
                error.server = Some(server);
                error.name = Some(name);
            }
        }
        error
    }

    /// The tool result the agent receives.
    pub(crate) fn into_result(self) -> CallToolResult {
        let structured = serde_json::to_value(self.structured()).unwrap_or(Value::Null);
        let mut result = CallToolResult::error(vec![ContentBlock::text(self.text())]);
        result.structured_content = Some(json!({ "error": structured }));
        result
    }
}
