//! The `code` section: whether `run_code` is offered, and what one run may spend.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::code_mode::Limits;

/// Code mode: the `run_code` tool beside the two, and the limits of each run.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CodeFile {
    /// Offer `run_code`, which runs a Python script that calls the toolboxes' tools (default false; `serve --code` turns it on).
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Seconds one run may take, its tool calls included (default 60).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub timeout: Option<f64>,
    /// Seconds of the interpreter's own work in one run, its tool calls not counted (default 10).
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub cpu_timeout: Option<f64>,
    /// Bytes the values of one run may take (default 67108864, 64 MiB).
    #[serde(default)]
    #[schemars(range(min = 65536))]
    pub max_memory_bytes: Option<u64>,
    /// How deep a run's functions may call each other (default 1000, as Python's).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000))]
    pub max_recursion_depth: Option<u32>,
    /// Tool calls one run may make; one more ends it (default 100).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_tool_calls: Option<u32>,
    /// Bytes of what a run prints that reach the agent; the rest is cut, and the answer says how much (default 65536).
    #[serde(default)]
    #[schemars(range(min = 256))]
    pub max_output_bytes: Option<u64>,
}

/// Whether `run_code` is offered, and its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeSettings {
    pub enabled: bool,
    pub(crate) limits: Limits,
}

impl Default for CodeSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            limits: Limits {
                timeout: Duration::from_secs(60),
                cpu: Duration::from_secs(10),
                memory_bytes: 64 * 1024 * 1024,
                recursion_depth: 1000,
                tool_calls: 100,
                output_bytes: 64 * 1024,
            },
        }
    }
}

impl CodeFile {
    /// The settings this section asks for, each limit falling back to its default; `seconds`
    /// reads a number of seconds at a key of the section, or says why it cannot.
    pub(super) fn settings(
        self,
        mut seconds: impl FnMut(Option<f64>, &str, Duration) -> Duration,
    ) -> CodeSettings {
        let defaults = CodeSettings::default();
        let limits = defaults.limits;
        let size = |value: Option<u64>, default: usize| {
            value.map_or(default, |value| {
                usize::try_from(value).unwrap_or(usize::MAX)
            })
        };
        CodeSettings {
            enabled: self.enabled.unwrap_or(defaults.enabled),
            limits: Limits {
                timeout: seconds(self.timeout, "timeout", limits.timeout),
                cpu: seconds(self.cpu_timeout, "cpuTimeout", limits.cpu),
                memory_bytes: size(self.max_memory_bytes, limits.memory_bytes),
                recursion_depth: size(
                    self.max_recursion_depth.map(u64::from),
                    limits.recursion_depth,
                ),
                tool_calls: size(self.max_tool_calls.map(u64::from), limits.tool_calls),
                output_bytes: size(self.max_output_bytes, limits.output_bytes),
            },
        }
    }
}
