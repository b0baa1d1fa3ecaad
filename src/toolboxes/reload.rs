//! A session's toolboxes after a config reload, made from the ones before: toolboxes that
//! remain keep their open state, the session's own servers defined as before keep their slot
//! and child, shared servers come from the reloaded `SharedServers`; what the new set no longer
//! has stops once idle.

use std::sync::Arc;

use super::{ServerSlot, SharedServers, Toolbox, Toolboxes, own_slots};
use crate::config::{Config, ServerSpec};

impl Toolboxes {
    /// The same session's toolboxes under `config` (its view of the reloaded config).
    pub(crate) fn carried(&self, config: &Config, shared: Option<Arc<SharedServers>>) -> Toolboxes {
        Toolboxes::assemble(
            config,
            self.agent.clone(),
            self.launch.clone(),
            shared,
            Some(self),
        )
    }

    /// Ends this set's background work and stops, once idle, the session's own children that
    /// `next` (the set that replaced it) does not have.
    pub(crate) fn retire_replaced(&self, next: &Toolboxes) {
        self.stop.cancel();
        for slot in own_slots(&self.boxes) {
            if !own_slots(&next.boxes).any(|kept| Arc::ptr_eq(kept, slot)) {
                slot.clone().retire();
            }
        }
    }
}

impl Toolbox {
    /// The session's own slot of a server defined exactly as `server`, if it has one.
    pub(super) fn own_slot_for(&self, server: &ServerSpec) -> Option<Arc<ServerSlot>> {
        let same = |slot: &&Arc<ServerSlot>| {
            !slot.shared && slot.spec.name == server.name && *slot.spec == *server
        };
        self.servers.iter().find(same).cloned()
    }
}
