//! The one boundary where toolshelf's own failures become agent-visible tool results. Every
//! text here is part of the contract (seed 003's table); change none without its snapshot.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::schema_check::{Violation, ViolationKind};

/// A failure the agent can act on; it goes back as an `isError` tool result.
#[derive(Debug)]
pub(crate) enum ToolError {
    /// `use_tool`'s input broke its schema.
    InvalidUseTool(Vec<Violation>),
    /// `open_toolbox`'s input broke its schema.
    InvalidOpenToolbox(Vec<Violation>),
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
        server: String,
        name: String,
        known: Vec<String>,
    },
    /// The child failed the call: protocol error, death, timeout, or it could not be started.
    Downstream {
        toolbox: String,
        server: String,
        name: String,
        error: String,
    },
    /// Not one server of the toolbox could be started.
    OpenFailed {
        toolbox: String,
        failures: Vec<(String, String)>,
    },
}

/// Which meta-tool reports an unknown toolbox.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Context {
    OpenToolbox,
    UseTool,
}

/// Lists longer than this are not spelled out in an error.
const MAX_LISTED: usize = 20;

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
            } => format!(
                "Error executing tool: Tool '{name}' not found in server '{server}'{}",
                alternatives(name, known, "Tools of this server")
            ),
            ToolError::Downstream {
                toolbox,
                server,
                name,
                error,
            } => format!(
                "Error executing tool '{name}' in server '{server}' (toolbox '{toolbox}'): {error}"
            ),
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
        }
    }

    /// The tool result the agent receives.
    pub(crate) fn into_result(self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.text())])
    }
}

/// Seed 003: an empty identifier field has its own text; anything else is listed after the
/// prefix. Violations are joined with "; ".
fn invalid(prefix: &str, violations: &[Violation]) -> String {
    let mut empties = Vec::new();
    let mut others = Vec::new();
    for violation in violations {
        match empty_field_text(violation) {
            Some(text) => empties.push(text.to_owned()),
            None => others.push(violation.to_string()),
        }
    }
    if others.is_empty() {
        empties.join("; ")
    } else {
        others.extend(empties);
        format!("{prefix}: {}", others.join("; "))
    }
}

fn empty_field_text(violation: &Violation) -> Option<&'static str> {
    if violation.kind != ViolationKind::Empty {
        return None;
    }
    match violation.path.as_str() {
        "tool.toolbox" | "toolbox" => Some("toolbox: Toolbox name cannot be empty"),
        "tool.server" => Some("server: Server name cannot be empty"),
        "tool.name" => Some("name: Tool name cannot be empty"),
        _ => None,
    }
}

/// "\nDid you mean 'x'?" for a close match, else "\n{label}: a, b" when the list is short.
fn alternatives(input: &str, known: &[String], label: &str) -> String {
    if let Some(close) = crate::suggest::closest(input, known.iter().map(String::as_str)) {
        return format!("\nDid you mean: {close}?");
    }
    if known.is_empty() {
        format!("\n{label}: none")
    } else if known.len() <= MAX_LISTED {
        format!("\n{label}: {}", known.join(", "))
    } else {
        String::new()
    }
}
