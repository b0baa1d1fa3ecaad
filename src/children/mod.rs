//! Child MCP servers: the only module that starts processes or connects to remote servers.
//! `link` is how a child is reached: `process` runs and stops a local one (`environment`
//! decides what it inherits; `registry` knows every live process and tells `guard`, which kills
//! what is left if toolshelf dies), `remote` bridges a remote one over HTTP. `child` is the
//! MCP client session over it (`child_transport` carries its messages, bounded in size;
//! `tool_calls` sends tool calls and routes their answers and progress past rmcp,
//! `tool_result` is what they answer, passed on as written, in the line it came in
//! (`result_text`; `plain_answer` reads such a line in one fast pass); `tool_list` lists tools the
//! same way, keeping what rmcp's `Tool` drops), `client` is toolshelf's client role, which speaks
//! to the agent side only through `agent_port`.

mod agent_port;
mod call_error;
mod call_timeouts;
mod child;
mod child_start;
mod child_transport;
mod client;
mod ends;
mod environment;
mod exit;
mod link;
mod plain_answer;
mod process;
pub mod process_tree;
mod progress_out;
mod registry;
mod remote;
mod request_lines;
mod result_text;
mod task_progress;
mod tool_calls;
mod tool_list;
mod tool_result;

use std::sync::Arc;

pub(crate) use agent_port::{
    Agent, AgentList, AgentPort, RELATED_TASK, Relayed, STATUS_NOTIFICATION, severity,
};
pub(crate) use call_error::{CallError, child_error};
pub(crate) use child::{Child, TaskHold};
pub(crate) use process_tree::open_in_browser;
pub(crate) use progress_out::{CurrentToken, PeerProgress, ProgressOut, ProgressTarget};
pub(crate) use registry::ProcessRegistry;
pub(crate) use tool_calls::CallRoute;
pub(crate) use tool_result::ToolResultJson;

use crate::metrics::Metrics;

/// What starting a child needs besides its spec: the registry every process goes through, the
/// agent side, which the child's client role relays to, the metrics starts count in
/// (`serve --http` only), and where the tools it lists are persisted (unless that is off).
pub(crate) struct Launch {
    pub registry: Arc<ProcessRegistry>,
    pub agent: Agent,
    pub metrics: Option<Arc<Metrics>>,
    pub catalogs: Option<Arc<crate::catalog::cache::CatalogCache>>,
}
