//! The index of what the persisted catalog remembers for a config: each server's tools as the
//! agent would see them (filters, aliases, overrides and tags applied), read without starting
//! anything, and the toolboxes that have no remembered list yet.

use super::{Entry, SearchIndex};
use crate::{
    catalog::{
        ServerCatalog,
        cache::{CatalogCache, Offer},
    },
    config::Config,
};

/// What search can see of a config.
pub struct Catalog {
    pub index: SearchIndex,
    /// Toolboxes with a server whose tools were never listed (so are not searched).
    pub unlisted: Vec<String>,
}

/// The index of the tools `config`'s catalog remembers.
pub fn remembered(config: &Config) -> Catalog {
    let cache = CatalogCache::new(&config.catalog);
    let mut entries = Vec::new();
    let mut unlisted = Vec::new();
    for toolbox in config.toolboxes.values() {
        for spec in &toolbox.servers {
            let catalog = ServerCatalog::new(&toolbox.name, spec, cache.as_deref());
            // The list any client was given; they differ only for servers that list by what
            // the client offers.
            if !Offer::every().any(|offer| catalog.recall(offer)) {
                if !unlisted.contains(&toolbox.name) {
                    unlisted.push(toolbox.name.clone());
                }
                continue;
            }
            for tool in catalog.tools().iter() {
                entries.push(Entry::new(&toolbox.name, &spec.name, tool));
            }
        }
    }
    Catalog {
        index: SearchIndex::build(entries, config.search.meaning),
        unlisted,
    }
}
