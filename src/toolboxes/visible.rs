//! What a session may see of a server's tools: its catalog, less the tools the policy withholds
//! from the session's caller. Every listing, search and call of the agent reads tools through
//! here, so a withheld tool is answered for as one that does not exist.

use std::{borrow::Cow, sync::Arc};

use super::{ServerSlot, Toolboxes};
use crate::{catalog::CatalogTool, config::Withheld};

impl Toolboxes {
    /// The tools of `slot` the session may use.
    pub(crate) fn tools_of(&self, slot: &ServerSlot) -> Arc<[CatalogTool]> {
        let tools = slot.catalog.tools();
        match self.withheld.tools(&slot.toolbox, &slot.spec.name) {
            Some(withheld) => tools
                .iter()
                .filter(|tool| !withheld.contains(tool.name()))
                .cloned()
                .collect(),
            None => tools,
        }
    }

    /// The tool of `slot` whose canonical name is `canonical`, if the session may use it; read
    /// in place, as `resolve` reads the list.
    pub(crate) fn tool_of(&self, slot: &ServerSlot, canonical: &str) -> Option<CatalogTool> {
        let withheld = self.withheld.tools(&slot.toolbox, &slot.spec.name);
        if withheld.is_some_and(|withheld| withheld.contains(canonical)) {
            return None;
        }
        let tools = slot.catalog.tools();
        tools.iter().find(|tool| tool.name() == canonical).cloned()
    }

    /// The canonical name of the tool of `slot` called `name` (its canonical name, or else its
    /// alias), among those the session may use. Every call resolves its tool: the list is read
    /// in place (a copy of it per call cost a gateway's call as much as the rest of the call),
    /// and the name is compared before the withheld set hashes it.
    pub(crate) fn resolve(&self, slot: &ServerSlot, name: &str) -> Option<Cow<'static, str>> {
        let Some(withheld) = self.withheld.tools(&slot.toolbox, &slot.spec.name) else {
            return slot.catalog.resolve(name);
        };
        let tools = slot.catalog.tools();
        let usable = |tool: &&CatalogTool| !withheld.contains(tool.name());
        let named = tools.iter().filter(|tool| tool.name() == name).find(usable);
        let aliased = |tool: &&CatalogTool| tool.alias.as_deref() == Some(name);
        let found = named.or_else(|| tools.iter().filter(aliased).find(usable));
        found.map(|tool| tool.tool.name.clone())
    }

    /// Every name a tool of `slot` the session may use is called by: canonical names, then
    /// aliases.
    pub(crate) fn names_of(&self, slot: &ServerSlot) -> Vec<String> {
        if self
            .withheld
            .tools(&slot.toolbox, &slot.spec.name)
            .is_none()
        {
            return slot.catalog.names();
        }
        let tools = self.tools_of(slot);
        let canonical = tools.iter().map(|tool| tool.name().to_owned());
        let aliases = tools.iter().filter_map(|tool| tool.alias.clone());
        canonical.chain(aliases).collect()
    }

    /// The path of the access rule that asks the user to confirm a call of `canonical` on
    /// `slot`, if one does.
    pub(crate) fn confirmation(&self, slot: &ServerSlot, canonical: &str) -> Option<String> {
        let policy = self.policy.as_ref().filter(|policy| policy.confirms())?;
        let tools = slot.catalog.tools();
        let tool = tools.iter().find(|tool| tool.name() == canonical);
        let annotations = tool.and_then(|tool| tool.tool.annotations.as_ref());
        let destructive = annotations.and_then(|annotations| annotations.destructive_hint);
        policy.confirmation(
            &slot.toolbox,
            &slot.spec.name,
            canonical,
            destructive == Some(true),
        )
    }

    /// What the policy withholds from the session's caller.
    pub(crate) fn withheld(&self) -> &Withheld {
        &self.withheld
    }
}
