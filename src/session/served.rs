//! What a session serves from the config it was last given: its toolboxes, the meta-tools (or
//! flat mode's view) and the answer to `initialize`. A config reload builds the next one from
//! the last (`SessionState::reload`, `Toolboxes::carried`): open toolboxes stay open and unchanged servers keep their
//! children; the session swaps it in whole, so each request sees one config.

use std::sync::Arc;

use rmcp::model::ServerConfig;

use super::Surface;
use crate::{flat::FlatServing, meta_tools::MetaTools, toolboxes::Toolboxes};

pub(crate) struct Served {
    pub(crate) toolboxes: Toolboxes,
    pub(crate) meta: Arc<MetaTools>,
    /// Flat mode: the children's tools listed and called by `server:tool` names.
    pub(crate) flat: Option<FlatServing>,
    pub(crate) info: Arc<ServerConfig>,
}

impl Served {
    pub(super) fn new(toolboxes: Toolboxes, surface: &Surface) -> Self {
        Self {
            toolboxes,
            meta: surface.meta.clone(),
            flat: surface.flat.clone().map(FlatServing::new),
            info: surface.info.clone(),
        }
    }
}
