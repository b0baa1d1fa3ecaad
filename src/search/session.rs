//! One agent session's search: the index of the tools its toolboxes know now, rebuilt only
//! when one of their lists changed (a server started, said its list changed, or was recalled
//! from the persisted catalog), and the tools the session was shown in a search answer, which
//! `use_tool` may call without an `open_toolbox` first.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
};

use super::{Entry, SearchIndex};
use crate::locks;

/// A session's index and what its searches found.
pub(crate) struct SessionSearch {
    /// Whether the index ranks by meaning too (`search.meaning`).
    meaning: bool,
    built: Mutex<Option<Built>>,
    /// (toolbox, server, name) of every tool a search answer showed.
    found: Mutex<HashSet<(String, String, String)>>,
}

struct Built {
    /// Each server's list revision, in the toolboxes' order, when the index was built.
    revisions: Vec<u64>,
    index: Arc<SearchIndex>,
}

impl SessionSearch {
    pub(crate) fn new(meaning: bool) -> SessionSearch {
        SessionSearch {
            meaning,
            built: Mutex::default(),
            found: Mutex::default(),
        }
    }

    /// The index of the lists whose revisions are `revisions`: the one built before if they
    /// are the same, else a new one of `entries()`.
    pub(crate) fn index(
        &self,
        revisions: Vec<u64>,
        entries: impl FnOnce() -> Vec<Entry>,
    ) -> Arc<SearchIndex> {
        if let Some(built) = locks::lock(&self.built).as_ref()
            && built.revisions == revisions
        {
            return built.index.clone();
        }
        // Built outside the lock: two searches at once may both build, and either result is
        // right.
        let index = Arc::new(SearchIndex::build(entries(), self.meaning));
        *locks::lock(&self.built) = Some(Built {
            revisions,
            index: index.clone(),
        });
        index
    }

    /// Remembers that the session was shown these tools.
    pub(crate) fn shown<'a>(&self, entries: impl Iterator<Item = &'a Entry>) {
        let mut found = locks::lock(&self.found);
        for entry in entries {
            // A tool answers to its canonical name as well as to its alias.
            for name in [&entry.name, &entry.canonical] {
                found.insert((entry.toolbox.clone(), entry.server.clone(), name.clone()));
            }
        }
    }

    /// True when a search answer showed the session this tool (by either of its names).
    pub(crate) fn was_shown(&self, toolbox: &str, server: &str, name: &str) -> bool {
        locks::lock(&self.found).contains(&(toolbox.to_owned(), server.to_owned(), name.to_owned()))
    }
}
