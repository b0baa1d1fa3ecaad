//! Child MCP servers: the only module that starts processes. `registry` knows every live
//! process, `process` runs and stops one (`environment` decides what it inherits), `child` is the
//! MCP client session over it (`child_transport` carries its messages, bounded in size;
//! `progress` routes its progress to the agent), `client` is toolshelf's client role.

mod child;
mod child_transport;
mod client;
mod environment;
mod process;
mod progress;
mod registry;

pub(crate) use child::Child;
pub(crate) use progress::ProgressTarget;
pub(crate) use registry::ProcessRegistry;
