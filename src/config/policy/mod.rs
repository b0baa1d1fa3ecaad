//! Who may use what, and which calls wait for the user: the `access` rules of the config, at its
//! top (the rule of every toolbox without its own), on a toolbox, a server and a tool. Without a
//! rule that names who it admits (`rule.rs`: callers by token, or subjects, groups and scopes of
//! access tokens) every caller sees everything; with one, each sees only what a rule allows it
//! (`serve --http`). Each level narrows the one above: a server's rule admits only
//! callers its toolbox admits, a tool's only those its server admits; a rule that names a caller
//! the level above never lets through could never apply, and is a config error. `confirm`
//! (`confirm.rs`) holds on both transports.
//!
//! A caller sees only what it may use (`Config::for_caller`): the rest is withheld from its
//! sessions as if it were not configured, so the answers it gets tell it nothing of the rest.

use std::collections::HashSet;

use indexmap::IndexMap;
use serde_json::Value;

mod confirm;
mod rule;
mod view;

pub use confirm::Confirm;
pub use rule::Identity;
use rule::{Rule, rule, unreachable};
pub use view::Withheld;

use super::Violation;

#[derive(Debug, Default)]
struct ServerRules {
    own: Option<Rule>,
    tools: IndexMap<String, Rule>,
    confirm: Option<Confirm>,
    tool_confirms: IndexMap<String, Confirm>,
}

#[derive(Debug, Default)]
struct ToolboxRules {
    own: Option<Rule>,
    servers: IndexMap<String, ServerRules>,
    confirm: Option<Confirm>,
}

/// The config's `access` rules.
#[derive(Debug)]
pub struct Policy {
    /// The rule of every toolbox that has none of its own.
    default: Option<Rule>,
    toolboxes: IndexMap<String, ToolboxRules>,
    /// Some rule names callers: each caller sees only what a rule allows it.
    gates: bool,
    /// The `confirm` of the top-level rule.
    default_confirm: Option<Confirm>,
    /// Some rule says `confirm`.
    confirms: bool,
}

/// What a caller may not use, by toolbox, server and tool (canonical names).
impl Policy {
    /// The rules of `value` (a config whose shape is checked), or `None` when it has none;
    /// rules that could never apply are `problems`.
    pub(super) fn read(value: &Value, problems: &mut Vec<Violation>) -> Option<Policy> {
        let (mut gates, mut confirms) = (false, false);
        let mut misspelt = Vec::new();
        let mut rule_at = |node: &Value, path: &str| {
            let rule = rule(node, path, &mut misspelt);
            gates |= rule.is_some();
            rule
        };
        let mut confirm_at = |node: &Value| {
            let confirm = confirm_of(node);
            confirms |= confirm.is_some();
            confirm
        };
        let default = rule_at(value, "access");
        let default_confirm = confirm_at(value);
        let mut toolboxes = IndexMap::new();
        let boxes = value.get("toolboxes").and_then(Value::as_object);
        for (name, toolbox) in boxes.into_iter().flatten() {
            let toolbox_path = format!("toolboxes.{name}");
            let mut rules = ToolboxRules {
                own: rule_at(toolbox, &format!("{toolbox_path}.access")),
                servers: IndexMap::new(),
                confirm: confirm_at(toolbox),
            };
            let servers = toolbox.get("mcpServers").and_then(Value::as_object);
            for (server_name, server) in servers.into_iter().flatten() {
                let server_path = format!("{toolbox_path}.mcpServers.{server_name}");
                let mut server_rules = ServerRules {
                    own: rule_at(server, &format!("{server_path}.access")),
                    confirm: confirm_at(server),
                    ..ServerRules::default()
                };
                let tools = server.get("tools").and_then(Value::as_object);
                for (tool, entry) in tools.into_iter().flatten() {
                    if let Some(rule) =
                        rule_at(entry, &format!("{server_path}.tools.{tool}.access"))
                    {
                        server_rules.tools.insert(tool.clone(), rule);
                    }
                    if let Some(confirm) = confirm_at(entry) {
                        server_rules.tool_confirms.insert(tool.clone(), confirm);
                    }
                }
                let prompts = server.get("prompts").and_then(Value::as_object);
                for (prompt, entry) in prompts.into_iter().flatten() {
                    if entry.get("access").is_some() {
                        problems.push(Violation::other(
                            format!("{server_path}.prompts.{prompt}.access"),
                            "a prompt follows its server's access: remove this, or give the server an access rule".into(),
                        ));
                    }
                }
                rules.servers.insert(server_name.clone(), server_rules);
            }
            toolboxes.insert(name.clone(), rules);
        }
        problems.append(&mut misspelt);
        let policy = Policy {
            default,
            toolboxes,
            gates,
            default_confirm,
            confirms,
        };
        policy.check_reach(problems);
        (gates || confirms).then_some(policy)
    }

    /// True when some rule names callers: then each caller sees only what a rule allows it.
    pub fn gates(&self) -> bool {
        self.gates
    }

    /// Every caller some rule names, each once.
    pub fn callers(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for rule in self.rules() {
            for caller in &rule.callers {
                if !names.contains(&caller.as_str()) {
                    names.push(caller);
                }
            }
        }
        names
    }

    /// True when some rule admits access tokens by their claims (subjects, groups or scopes).
    pub fn names_claims(&self) -> bool {
        self.rules().any(Rule::names_claims)
    }

    fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.default
            .iter()
            .chain(self.toolboxes.values().flat_map(|toolbox| {
                toolbox.own.iter().chain(
                    toolbox
                        .servers
                        .values()
                        .flat_map(|server| server.own.iter().chain(server.tools.values())),
                )
            }))
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
        if !self.gates {
            return withheld;
        }
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

/// What `node`'s `access` says of confirmation, if it says something.
fn confirm_of(node: &Value) -> Option<Confirm> {
    match node.get("access")?.get("confirm")?.as_str()? {
        "always" => Some(Confirm::Always),
        "destructive" => Some(Confirm::Destructive),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
