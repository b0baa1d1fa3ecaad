//! How a `run_code` script failed, as the agent reads it: what stopped it, the limit's config
//! key where a limit did, and what it printed before.

use crate::code_mode::{Ending, Limits, Output};

/// A script that did not run to its end.
#[derive(Debug)]
pub(crate) struct ScriptFailure {
    pub(crate) ending: Ending,
    pub(crate) output: Output,
    pub(crate) limits: Limits,
}

impl ScriptFailure {
    pub(super) fn text(&self) -> String {
        let limits = &self.limits;
        let why = match &self.ending {
            Ending::Raised(traceback) => {
                let advice = match last_line(traceback) {
                    line if line.starts_with("MemoryError: memory limit exceeded") => format!(
                        "The script's values outgrew the {} bytes one run may hold (code.maxMemoryBytes): keep less at once, or let a tool do the bulk.",
                        limits.memory_bytes
                    ),
                    line if line.starts_with("TimeoutError: time limit exceeded") => format!(
                        "The script computed for longer than the {} s one run may (code.cpuTimeout; tool calls do not count): do less per run.",
                        limits.cpu.as_secs_f64()
                    ),
                    line if line.starts_with("RecursionError") => format!(
                        "The script's calls went deeper than {} (code.maxRecursionDepth): use a loop.",
                        limits.recursion_depth
                    ),
                    _ => "Fix the script and run it again.".to_owned(),
                };
                format!("run_code: the script failed.\n{traceback}\n{advice}")
            }
            Ending::TooManyCalls => format!(
                "run_code: the script made more than {} tool calls, the most one run may make (code.maxToolCalls), and was stopped there. Make fewer calls per run, or split the work over several runs.",
                limits.tool_calls
            ),
            Ending::TimedOut => format!(
                "run_code: the script ran past its {} s timeout (code.timeout, its tool calls included) and was stopped; its calls in flight were cancelled. Make it do less per run.",
                limits.timeout.as_secs_f64()
            ),
            Ending::Cancelled => {
                "run_code: the script was cancelled; its calls in flight were cancelled too."
                    .to_owned()
            }
            Ending::Stopped | Ending::Returned(_) => {
                "run_code: the script's interpreter stopped before the script ended; run it again."
                    .to_owned()
            }
            Ending::NotStarted(reason) => format!(
                "run_code: the script's interpreter could not start ({reason}); run it again."
            ),
        };
        match printed(&self.output) {
            printed if printed.is_empty() => why,
            printed => format!("{why}\nIt printed:\n{printed}"),
        }
    }

    pub(super) fn kind(&self) -> &'static str {
        match &self.ending {
            Ending::Raised(traceback) => match last_line(traceback) {
                line if line.contains("limit exceeded") || line.starts_with("RecursionError") => {
                    "script_limit"
                }
                _ => "script_error",
            },
            Ending::TooManyCalls => "script_limit",
            Ending::TimedOut => "script_timeout",
            Ending::Cancelled => "cancelled",
            Ending::Stopped | Ending::Returned(_) | Ending::NotStarted(_) => "script_stopped",
        }
    }

    pub(super) fn retryable(&self) -> bool {
        matches!(self.ending, Ending::Stopped | Ending::NotStarted(_))
    }
}

/// What a script printed, with a last line saying how much was cut, if any.
pub(crate) fn printed(output: &Output) -> String {
    match output.cut {
        0 => output.text.clone(),
        cut => format!(
            "{}\n[{cut} more bytes printed were cut: one run's output reaching the agent is limited (code.maxOutputBytes); print less, or return only what is needed]",
            output.text
        ),
    }
}

fn last_line(traceback: &str) -> &str {
    traceback.trim_end().lines().last().unwrap_or_default()
}
