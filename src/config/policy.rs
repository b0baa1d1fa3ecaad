//! Who may use what under `serve --http`: the `access` rules of the config, at its top (the
//! rule of every toolbox without its own), on a toolbox, a server and a tool. A config without
//! any rule has no policy and every caller sees everything; a config with one denies whatever
//! no rule allows. Each level narrows the one above: a server's rule admits only callers its
//! toolbox admits, a tool's only those its server admits; a rule that names a caller the level
//! above never lets through could never apply, and is a config error.
//!
//! A caller sees only what it may use (`Config::for_caller`): the rest is withheld from its
//! sessions as if it were not configured, so the answers it gets tell it nothing of the rest.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
};

use indexmap::IndexMap;
use serde_json::Value;

use super::{Config, ToolboxSpec, Violation};

/// Who is asking, as the transport proved it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Identity<'a> {
    /// The name a bearer token stands for.
    pub caller: Option<&'a str>,
}

/// One `access` rule: who it admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    callers: Vec<String>,
}

impl Rule {
    fn admits(&self, who: Identity<'_>) -> bool {
        who.caller
            .is_some_and(|caller| self.callers.iter().any(|named| named == caller))
    }

    fn describe(&self) -> String {
        match self.callers.as_slice() {
            [] => "no caller".to_owned(),
            callers => callers.join(", "),
        }
    }
}

#[derive(Debug, Default)]
struct ServerRules {
    own: Option<Rule>,
    tools: IndexMap<String, Rule>,
}

#[derive(Debug, Default)]
struct ToolboxRules {
    own: Option<Rule>,
    servers: IndexMap<String, ServerRules>,
}

/// The config's `access` rules.
#[derive(Debug)]
pub struct Policy {
    /// The rule of every toolbox that has none of its own.
    default: Option<Rule>,
    toolboxes: IndexMap<String, ToolboxRules>,
}

/// What a caller may not use, by toolbox, server and tool (canonical names).
#[derive(Debug, Default)]
pub struct Withheld {
    toolboxes: HashSet<String>,
    servers: HashMap<String, HashSet<String>>,
    tools: HashMap<String, HashMap<String, HashSet<String>>>,
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
        let prefixed = |server: &str| {
            name.strip_prefix(server)
                .and_then(|rest| rest.strip_prefix(separator))
        };
        servers.into_iter().any(|server| prefixed(server).is_some())
            || tools
                .into_iter()
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

impl Policy {
    /// The rules of `value` (a config whose shape is checked), or `None` when it has none;
    /// rules that could never apply are `problems`.
    pub(super) fn read(value: &Value, problems: &mut Vec<Violation>) -> Option<Policy> {
        let mut found = false;
        let mut rule_at = |node: &Value| {
            let rule = rule(node);
            found |= rule.is_some();
            rule
        };
        let default = rule_at(value);
        let mut toolboxes = IndexMap::new();
        let boxes = value.get("toolboxes").and_then(Value::as_object);
        for (name, toolbox) in boxes.into_iter().flatten() {
            let mut rules = ToolboxRules {
                own: rule_at(toolbox),
                servers: IndexMap::new(),
            };
            let servers = toolbox.get("mcpServers").and_then(Value::as_object);
            for (server_name, server) in servers.into_iter().flatten() {
                let mut server_rules = ServerRules {
                    own: rule_at(server),
                    tools: IndexMap::new(),
                };
                let tools = server.get("tools").and_then(Value::as_object);
                for (tool, entry) in tools.into_iter().flatten() {
                    if let Some(rule) = rule_at(entry) {
                        server_rules.tools.insert(tool.clone(), rule);
                    }
                }
                let prompts = server.get("prompts").and_then(Value::as_object);
                for (prompt, entry) in prompts.into_iter().flatten() {
                    if entry.get("access").is_some() {
                        problems.push(Violation::other(
                            format!("toolboxes.{name}.mcpServers.{server_name}.prompts.{prompt}.access"),
                            "a prompt follows its server's access: remove this, or give the server an access rule".into(),
                        ));
                    }
                }
                rules.servers.insert(server_name.clone(), server_rules);
            }
            toolboxes.insert(name.clone(), rules);
        }
        let policy = Policy { default, toolboxes };
        policy.check_reach(problems);
        found.then_some(policy)
    }

    /// Every caller some rule names, each once.
    pub fn callers(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        let rules = self
            .default
            .iter()
            .chain(self.toolboxes.values().flat_map(|toolbox| {
                toolbox.own.iter().chain(
                    toolbox
                        .servers
                        .values()
                        .flat_map(|server| server.own.iter().chain(server.tools.values())),
                )
            }));
        for rule in rules {
            for caller in &rule.callers {
                if !names.contains(&caller.as_str()) {
                    names.push(caller);
                }
            }
        }
        names
    }

    fn toolbox_rule<'a>(&'a self, rules: &'a ToolboxRules) -> Option<&'a Rule> {
        rules.own.as_ref().or(self.default.as_ref())
    }

    /// A rule below another names only callers the one above admits.
    fn check_reach(&self, problems: &mut Vec<Violation>) {
        for (name, toolbox) in &self.toolboxes {
            let toolbox_path = format!("toolboxes.{name}");
            // `None`: no rule admits anyone to this toolbox.
            let above = self.toolbox_rule(toolbox);
            let written = match (&toolbox.own, &self.default) {
                (None, Some(_)) => "access".to_owned(),
                _ => format!("{toolbox_path}.access"),
            };
            for (server_name, server) in &toolbox.servers {
                let server_path = format!("{toolbox_path}.mcpServers.{server_name}");
                let mut limits = vec![(above, written.clone())];
                if let Some(own) = &server.own {
                    unreachable(own, &limits, &server_path, problems);
                    limits.push((Some(own), format!("{server_path}.access")));
                }
                for (tool, rule) in &server.tools {
                    let path = format!("{server_path}.tools.{tool}");
                    unreachable(rule, &limits, &path, problems);
                }
            }
        }
    }

    /// What `who` may not use of `toolboxes` (the config's, by name and server names).
    pub(super) fn withheld<'a>(
        &self,
        toolboxes: impl Iterator<Item = (&'a str, Vec<&'a str>)>,
        who: Identity<'_>,
    ) -> Withheld {
        let mut withheld = Withheld::default();
        let none = ToolboxRules::default();
        for (name, servers) in toolboxes {
            let rules = self.toolboxes.get(name).unwrap_or(&none);
            if !self
                .toolbox_rule(rules)
                .is_some_and(|rule| rule.admits(who))
            {
                withheld.toolboxes.insert(name.to_owned());
                let all = servers.iter().map(|server| (*server).to_owned());
                withheld.servers.insert(name.to_owned(), all.collect());
                continue;
            }
            let mut hidden_servers = HashSet::new();
            for server in &servers {
                let Some(server_rules) = rules.servers.get(*server) else {
                    continue;
                };
                if server_rules
                    .own
                    .as_ref()
                    .is_some_and(|rule| !rule.admits(who))
                {
                    hidden_servers.insert((*server).to_owned());
                    continue;
                }
                let tools: HashSet<String> = server_rules
                    .tools
                    .iter()
                    .filter(|(_, rule)| !rule.admits(who))
                    .map(|(tool, _)| tool.clone())
                    .collect();
                if !tools.is_empty() {
                    withheld
                        .tools
                        .entry(name.to_owned())
                        .or_default()
                        .insert((*server).to_owned(), tools);
                }
            }
            if hidden_servers.len() == servers.len() {
                withheld.toolboxes.insert(name.to_owned());
            }
            if !hidden_servers.is_empty() {
                withheld.servers.insert(name.to_owned(), hidden_servers);
            }
        }
        withheld
    }
}

impl Config {
    /// What `who` sees of this config: the toolboxes and servers the policy withholds from it
    /// left out, and its withheld tools named in `withheld`. The whole config without a policy.
    pub fn for_caller(&self, who: Identity<'_>) -> Config {
        let Some(policy) = &self.policy else {
            return self.clone();
        };
        let names = self.toolboxes.values().map(|toolbox| {
            let servers = toolbox.servers.iter().map(|server| server.name.as_str());
            (toolbox.name.as_str(), servers.collect())
        });
        let withheld = policy.withheld(names, who);
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
            notes: Vec::new(),
            policy: self.policy.clone(),
            withheld: Arc::new(withheld),
        }
    }
}

/// The rule of `node`'s `access`, if it has one.
fn rule(node: &Value) -> Option<Rule> {
    let access = node.get("access")?;
    let callers = access.get("callers").and_then(Value::as_array);
    let callers = callers
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    Some(Rule { callers })
}

/// Reports each caller `rule` (at `path`) names that a rule above it (`limits`, with where each
/// is written; `None`: no rule there) does not admit.
fn unreachable(
    rule: &Rule,
    limits: &[(Option<&Rule>, String)],
    path: &str,
    problems: &mut Vec<Violation>,
) {
    for (at, caller) in rule.callers.iter().enumerate() {
        let who = Identity {
            caller: Some(caller),
        };
        let barred = limits
            .iter()
            .find(|(limit, _)| limit.is_none_or(|limit| !limit.admits(who)));
        let Some((limit, written)) = barred else {
            continue;
        };
        let above = match limit {
            Some(limit) => format!("{written} admits only {}", limit.describe()),
            None => format!("no {written} rule admits anyone to this toolbox"),
        };
        problems.push(Violation::other(
            format!("{path}.access.callers[{at}]"),
            format!(
                "caller '{caller}' can never use this, since {above}: add '{caller}' to {written}, or remove it here"
            ),
        ));
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
