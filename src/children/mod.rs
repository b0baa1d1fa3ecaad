//! Child MCP servers: the only module that starts processes. `registry` knows every live
//! process, `process` runs and stops one, `child` is the MCP client session over it, `client`
//! is toolshelf's client role.

mod child;
mod client;
mod process;
mod registry;

pub(crate) use child::Child;
pub(crate) use registry::ProcessRegistry;
