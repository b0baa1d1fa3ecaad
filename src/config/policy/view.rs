//! A caller's view of the config: what the policy withholds from it, and the config without
//! that, from which its sessions are built.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
};

use super::Identity;
use crate::config::{Config, ToolboxSpec};

#[derive(Debug, Default)]
pub struct Withheld {
    pub(super) toolboxes: HashSet<String>,
    pub(super) servers: HashMap<String, HashSet<String>>,
    pub(super) tools: HashMap<String, HashMap<String, HashSet<String>>>,
    /// The aliases the config gives withheld tools, by server: flat mode names a tool by its
    /// alias.
    aliases: HashMap<String, HashSet<String>>,
}

impl Withheld {
    /// True when nothing is withheld.
    pub fn is_empty(&self) -> bool {
        self.toolboxes.is_empty() && self.servers.is_empty() && self.tools.is_empty()
    }

    /// The tools of `toolbox`/`server` the caller may not use, if any.
    pub fn tools(&self, toolbox: &str, server: &str) -> Option<&HashSet<String>> {
        self.tools.get(toolbox)?.get(server)
    }

    /// True when the policy withholds the tool a flat-mode name (`SERVER` `separator` `TOOL`,
    /// the tool by its canonical name) stands for: its server, or the tool itself.
    pub fn covers_flat(&self, name: &str, separator: &str) -> bool {
        let servers = self.servers.values().flatten();
        let tools = self.tools.values().flat_map(|servers| {
            servers
                .iter()
                .flat_map(|(server, tools)| tools.iter().map(move |tool| (server, tool)))
        });
        let aliases = self
            .aliases
            .iter()
            .flat_map(|(server, aliases)| aliases.iter().map(move |alias| (server, alias)));
        let prefixed = |server: &str| {
            name.strip_prefix(server)
                .and_then(|rest| rest.strip_prefix(separator))
        };
        servers.into_iter().any(|server| prefixed(server).is_some())
            || tools
                .chain(aliases)
                .any(|(server, tool)| prefixed(server) == Some(tool.as_str()))
    }

    /// True when the policy withholds what a request named: the toolbox, its server, or the
    /// tool (`tool` is compared with canonical names).
    pub fn covers(&self, toolbox: &str, server: Option<&str>, tool: Option<&str>) -> bool {
        let server_withheld = |server: &str| {
            self.servers
                .get(toolbox)
                .is_some_and(|servers| servers.contains(server))
        };
        self.toolboxes.contains(toolbox)
            || server.is_some_and(server_withheld)
            || server
                .zip(tool)
                .and_then(|(server, tool)| Some(self.tools(toolbox, server)?.contains(tool)))
                .unwrap_or(false)
    }
}

impl Config {
    /// What `who` sees of this config: the toolboxes and servers the policy withholds from it
    /// left out, and its withheld tools named in `withheld`. The whole config without a policy.
    pub fn for_caller(&self, who: Identity<'_>) -> Config {
        let Some(policy) = self.policy.as_ref().filter(|policy| policy.gates()) else {
            return self.clone();
        };
        let names = self.toolboxes.values().map(|toolbox| {
            let servers = toolbox.servers.iter().map(|server| server.name.as_str());
            (toolbox.name.as_str(), servers.collect())
        });
        let mut withheld = policy.withheld(names, who);
        for (toolbox, servers) in &withheld.tools {
            let specs = self.toolboxes.get(toolbox).map(|toolbox| &toolbox.servers);
            for server in specs.into_iter().flatten() {
                let Some(tools) = servers.get(&server.name) else {
                    continue;
                };
                let aliases = tools
                    .iter()
                    .filter_map(|tool| server.tools.get(tool)?.alias.clone());
                withheld
                    .aliases
                    .entry(server.name.clone())
                    .or_default()
                    .extend(aliases);
            }
        }
        let toolboxes = self
            .toolboxes
            .iter()
            .filter(|(name, _)| !withheld.toolboxes.contains(*name))
            .map(|(name, toolbox)| {
                let Some(hidden) = withheld.servers.get(name) else {
                    return (name.clone(), toolbox.clone());
                };
                let servers = toolbox
                    .servers
                    .iter()
                    .filter(|server| !hidden.contains(&server.name));
                let visible = ToolboxSpec {
                    name: toolbox.name.clone(),
                    description: toolbox.description.clone(),
                    servers: servers.cloned().collect(),
                };
                (name.clone(), Arc::new(visible))
            })
            .collect();
        Config {
            toolboxes,
            http: self.http,
            catalog: self.catalog,
            search: self.search,
            code: self.code,
            notes: Vec::new(),
            policy: self.policy.clone(),
            withheld: Arc::new(withheld),
        }
    }
}
