//! Which calls wait for the user's confirmation: a rule's `confirm` says it, for every tool
//! under it (`always`) or for those whose annotations say `destructiveHint: true`
//! (`destructive`); the rule nearest the tool that says anything decides.

use super::Policy;

/// When a rule asks the user to confirm a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// Every call of a tool under the rule.
    Always,
    /// Calls of a tool whose annotations say `destructiveHint: true`.
    Destructive,
}

impl Policy {
    /// True when some rule says `confirm`.
    pub fn confirms(&self) -> bool {
        self.confirms
    }

    /// The path of the rule that asks the user to confirm a call of `tool` (its canonical name)
    /// of `toolbox`/`server`, if one does; `destructive`: the tool says `destructiveHint: true`.
    pub fn confirmation(
        &self,
        toolbox: &str,
        server: &str,
        tool: &str,
        destructive: bool,
    ) -> Option<String> {
        if !self.confirms {
            return None;
        }
        let toolbox_rules = self.toolboxes.get(toolbox);
        let server_rules = toolbox_rules.and_then(|rules| rules.servers.get(server));
        let server_path = || format!("toolboxes.{toolbox}.mcpServers.{server}");
        let levels: [(Option<Confirm>, &dyn Fn() -> String); 4] = [
            (
                server_rules.and_then(|rules| rules.tool_confirms.get(tool).copied()),
                &|| format!("{}.tools.{tool}.access.confirm", server_path()),
            ),
            (server_rules.and_then(|rules| rules.confirm), &|| {
                format!("{}.access.confirm", server_path())
            }),
            (toolbox_rules.and_then(|rules| rules.confirm), &|| {
                format!("toolboxes.{toolbox}.access.confirm")
            }),
            (self.default_confirm, &|| "access.confirm".to_owned()),
        ];
        let (confirm, path) = levels
            .into_iter()
            .find_map(|(confirm, path)| Some((confirm?, path)))?;
        (confirm == Confirm::Always || destructive).then(path)
    }
}
