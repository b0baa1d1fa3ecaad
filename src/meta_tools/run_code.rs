//! `run_code`, code mode's tool: its input (a script, nothing else) and what the agent is told
//! of it.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::code_mode::CALL_TOOL;

pub(crate) const RUN_CODE: &str = "run_code";

/// Input of `run_code`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunCodeArgs {
    /// The Python script. Call a tool with `await call_tool("toolbox/server/name", {...arguments})`; what it prints and the value of its last line are the answer.
    #[schemars(length(min = 1))]
    pub code: String,
}

/// What the agent reads of `run_code`.
pub(super) fn description() -> String {
    format!(
        "Run a Python script that calls the toolboxes' tools and answer with only what it prints and returns: one call of this tool instead of many of use_tool, and the tools' results stay out of the conversation unless printed. In the script, `await {CALL_TOOL}(\"toolbox/server/name\", {{...arguments}})` calls a tool as use_tool would (a toolbox starts at its first call) and returns its result as a Python value: its structuredContent, else its text parsed as JSON, else the text; a failed call raises RuntimeError with the tool's error. `asyncio.gather` makes calls at once. The interpreter is Monty, a sandboxed subset of Python: no files, network, environment or imports beyond asyncio, json, re, math, datetime and a few others; limits on time, memory and calls per run. Find tools and their parameters with open_toolbox."
    )
}
