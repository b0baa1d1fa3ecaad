//! What a server offers the agent: its tools after `toolFilters` and `hidden`, with the config's
//! aliases, titles, descriptions and merged tags applied; name lookups (canonical or alias);
//! the overrides that name no tool; alias conflicts across a toolbox; the tags a listing
//! carries in `_meta`; and what changed since the agent was last shown the list. A catalog is
//! replaced whole whenever its server is (re)started or says its list changed, and each live
//! list is kept in the persisted catalog (`catalog::cache`), from which a server that has not
//! started yet is `recall`ed.

pub mod cache;
mod changes;
mod listed_tool;
pub(crate) mod poisoning;

pub(crate) use changes::{Changes, changes, drift};
pub(crate) use listed_tool::ListedTool;

use std::{
    sync::{Arc, Mutex, RwLock},
    time::SystemTime,
};

use indexmap::IndexMap;
use rmcp::model::{MetaObject, Tool};

use crate::{
    catalog::cache::{CacheFile, CatalogCache, ListIdentity, Offer},
    config::{ServerSpec, ToolFilter, ToolOverride},
    locks,
};

/// One tool as the agent sees it.
#[derive(Debug, Clone)]
pub(crate) struct CatalogTool {
    /// As the server listed it; `tool.name` is the canonical name the server is called with.
    pub tool: Tool,
    pub alias: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    /// The server's tags, then the tool's own, without repeats.
    pub tags: Vec<String>,
    /// Task support (`execution`), as the server wrote it.
    pub execution: Option<Box<serde_json::value::RawValue>>,
}

impl CatalogTool {
    pub(crate) fn name(&self) -> &str {
        &self.tool.name
    }

    fn answers_to(&self, name: &str) -> bool {
        self.name() == name || self.alias.as_deref() == Some(name)
    }

    /// True when the agent would see no difference between the two.
    pub(super) fn same_as(&self, other: &CatalogTool) -> bool {
        self.tool == other.tool
            && self.alias == other.alias
            && self.title == other.title
            && self.description == other.description
            && self.tags == other.tags
            && self.execution.as_ref().map(|raw| raw.get())
                == other.execution.as_ref().map(|raw| raw.get())
    }
}

/// Where a server's current list came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Source {
    /// Nothing is known yet.
    #[default]
    None,
    /// The server listed it in this process.
    Live,
    /// The persisted catalog, written when the server listed it at `listed_at`; `nearest`
    /// when the list is not of this agent's kind of client but of the nearest kind that
    /// offered less (`Offer::nearest_first`): tools the server lists only to a client that
    /// offers more are missing until it starts.
    Remembered {
        listed_at: SystemTime,
        nearest: bool,
    },
}

impl Source {
    /// True for a list of a kind of client that offered less than the agent does.
    pub(super) fn of_fewer_offers(self) -> bool {
        matches!(self, Source::Remembered { nearest: true, .. })
    }
}

#[derive(Debug, Default)]
struct Listing {
    source: Source,
    tools: Arc<[CatalogTool]>,
    /// Override keys that name no tool of the server.
    unmatched: Vec<String>,
    /// Every tool name the server listed, filtered or not (for suggestions in warnings).
    listed: Vec<String>,
    /// Unique to this list among every list of the process, so that what was built from a
    /// list (the search index) can tell it is out of date.
    revision: u64,
}

/// The next list's revision; 0 is the empty list every catalog starts with.
static REVISIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The current tools of one server.
#[derive(Debug)]
pub(crate) struct ServerCatalog {
    /// `toolboxes.<toolbox>.mcpServers.<server>`, for messages that point into the config.
    path: String,
    filter: ToolFilter,
    tags: Vec<String>,
    overrides: IndexMap<String, ToolOverride>,
    listing: RwLock<Arc<Listing>>,
    /// The server's name in the config, for messages.
    server: String,
    /// Its file in the persisted catalog, if the catalog is persisted.
    file: Option<CacheFile>,
    /// What the server declared when it last listed its tools.
    capabilities: Mutex<Option<rmcp::model::ServerCapabilities>>,
    /// The tools the agent was last shown (`open_toolbox`) and where they came from, to say
    /// what changed since.
    shown: Mutex<Option<(Arc<[CatalogTool]>, Source)>>,
}

impl ServerCatalog {
    pub(crate) fn new(toolbox: &str, spec: &ServerSpec, cache: Option<&CatalogCache>) -> Self {
        Self {
            path: format!("toolboxes.{toolbox}.mcpServers.{}", spec.name),
            filter: spec.tool_filter.clone(),
            tags: spec.tags.clone(),
            overrides: spec.tools.clone(),
            listing: RwLock::new(Arc::default()),
            server: spec.name.clone(),
            file: cache.map(|cache| cache.file(spec)),
            capabilities: Mutex::default(),
            shown: Mutex::default(),
        }
    }

    /// Replaces the list with `listed`, the server's whole `tools/list` now, and persists it.
    pub(crate) fn replace(&self, listed: Vec<ListedTool>, identity: &ListIdentity<'_>) {
        if let Some(file) = &self.file {
            file.write(&self.server, identity, &listed);
        }
        *locks::lock(&self.capabilities) = identity.capabilities.cloned();
        self.install(listed, Source::Live);
    }

    /// Takes the persisted list of a server that has not started, unless there is none; true
    /// when the catalog holds a list now.
    /// `offer` is what toolshelf offers the server now: the list it gave to such a client is
    /// taken, else the one it gave the nearest kind that offered less.
    pub(crate) fn recall(&self, offer: Offer) -> bool {
        if self.source() != Source::None {
            return true;
        }
        let read = |file: &CacheFile| file.read_nearest(&self.server, offer);
        let Some(remembered) = self.file.as_ref().and_then(read) else {
            return false;
        };
        *locks::lock(&self.capabilities) = remembered.capabilities;
        self.install(
            remembered.tools,
            Source::Remembered {
                listed_at: remembered.listed_at,
                nearest: remembered.offer != offer,
            },
        );
        true
    }

    /// Where the current list came from.
    pub(crate) fn source(&self) -> Source {
        self.listing().source
    }

    /// What the server declared when it last listed its tools (in this run, or as persisted),
    /// for when it is not running.
    pub(crate) fn known_capabilities(&self) -> Option<rmcp::model::ServerCapabilities> {
        locks::lock(&self.capabilities).clone()
    }

    /// How the tools drifted since the agent was last shown them, if it was and they did; what
    /// it is shown now is remembered for next time.
    pub(crate) fn changes_since_shown(&self) -> Option<Changes> {
        let listing = self.listing();
        let now = listing.tools.clone();
        let (before, source) = locks::lock(&self.shown).replace((now.clone(), listing.source))?;
        changes(&before, &now).and_then(|changed| drift(changed, source))
    }

    fn install(&self, listed: Vec<ListedTool>, source: Source) {
        let names: Vec<String> = listed
            .iter()
            .map(|listed| listed.tool.name.to_string())
            .collect();
        let unmatched = self
            .overrides
            .keys()
            .filter(|key| !names.contains(key))
            .cloned()
            .collect();
        let tools: Vec<CatalogTool> = listed
            .into_iter()
            .filter(|listed| self.filter.keeps(&listed.tool.name))
            .filter_map(|ListedTool { tool, execution }| {
                let change = self.overrides.get(tool.name.as_ref());
                if change.is_some_and(|change| change.hidden) {
                    return None;
                }
                let mut tags = self.tags.clone();
                for tag in change.into_iter().flat_map(|change| &change.tags) {
                    if !tags.contains(tag) {
                        tags.push(tag.clone());
                    }
                }
                Some(CatalogTool {
                    alias: change.and_then(|change| change.alias.clone()),
                    title: change
                        .and_then(|change| change.title.clone())
                        .or_else(|| tool.title.clone()),
                    description: change
                        .and_then(|change| change.description.clone())
                        .or_else(|| tool.description.as_deref().map(str::to_owned)),
                    tags,
                    tool,
                    execution,
                })
            })
            .collect();
        let listing = Listing {
            source,
            tools: Arc::from(tools),
            unmatched,
            listed: names,
            revision: REVISIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        *locks::write(&self.listing) = Arc::new(listing);
    }

    fn listing(&self) -> Arc<Listing> {
        locks::read(&self.listing).clone()
    }

    /// Changes whenever the list is replaced (a start, a `list_changed`, a recall).
    pub(crate) fn revision(&self) -> u64 {
        self.listing().revision
    }

    /// The tools as they are now.
    pub(crate) fn tools(&self) -> Arc<[CatalogTool]> {
        self.listing().tools.clone()
    }

    /// The canonical name of the tool called `name` (its canonical name, or else its alias).
    pub(crate) fn resolve(&self, name: &str) -> Option<std::borrow::Cow<'static, str>> {
        let listing = locks::read(&self.listing);
        let tools = &listing.tools;
        let found = tools
            .iter()
            .find(|tool| tool.name() == name)
            .or_else(|| tools.iter().find(|tool| tool.answers_to(name)));
        found.map(|tool| tool.tool.name.clone())
    }

    /// True when the tool called `canonical` declares `execution.taskSupport: "required"`.
    pub(crate) fn requires_task(&self, canonical: &str) -> bool {
        #[derive(serde::Deserialize)]
        struct Execution<'a> {
            #[serde(rename = "taskSupport", borrow)]
            task_support: Option<std::borrow::Cow<'a, str>>,
        }
        let tools = self.tools();
        let Some(execution) = tools
            .iter()
            .find(|tool| tool.name() == canonical)
            .and_then(|tool| tool.execution.as_deref())
        else {
            return false;
        };
        serde_json::from_str::<Execution<'_>>(execution.get())
            .is_ok_and(|execution| execution.task_support.as_deref() == Some("required"))
    }

    /// Every name a tool can be called by: canonical names, then aliases.
    pub(crate) fn names(&self) -> Vec<String> {
        let tools = self.tools();
        let canonical = tools.iter().map(|tool| tool.name().to_owned());
        let aliases = tools.iter().filter_map(|tool| tool.alias.clone());
        canonical.chain(aliases).collect()
    }

    /// One line per override that names no tool of the server, with the fix.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let listing = self.listing();
        listing
            .unmatched
            .iter()
            .map(|key| {
                let hint =
                    match crate::suggest::closest(key, listing.listed.iter().map(String::as_str)) {
                        Some(close) => format!(
                            "rename it to '{close}' if that is the tool meant, or remove it"
                        ),
                        None => "fix the tool name or remove the override".to_owned(),
                    };
                format!(
                    "{}.tools.{key}: the server has no tool '{key}'; {hint}",
                    self.path
                )
            })
            .collect()
    }
}

/// Aliases that equal the canonical name of another visible tool of the same toolbox, each with
/// the config change that resolves it. `servers` are (server name, catalog) pairs.
pub(crate) fn alias_conflicts(servers: &[(&str, &ServerCatalog)]) -> Vec<String> {
    let listed: Vec<(&str, Arc<[CatalogTool]>)> = servers
        .iter()
        .map(|(name, catalog)| (*name, catalog.tools()))
        .collect();
    let mut conflicts = Vec::new();
    for ((server, tools), (_, catalog)) in listed.iter().zip(servers) {
        for tool in tools.iter() {
            let Some(alias) = tool.alias.as_deref() else {
                continue;
            };
            for (other_server, other_tools) in &listed {
                for other in other_tools.iter() {
                    let same = other_server == server && other.name() == tool.name();
                    if same || other.name() != alias {
                        continue;
                    }
                    let instead = format!("{server}-{alias}");
                    conflicts.push(format!(
                        "alias '{alias}' of tool '{}' (server '{server}') is also the name of tool '{}' of server '{other_server}', so a call to '{alias}' would be ambiguous. Fix: in {}.tools.{}, change \"alias\": \"{alias}\" to a name no tool has, e.g. \"alias\": \"{instead}\", or remove the alias.",
                        tool.name(),
                        other.name(),
                        catalog.path,
                        tool.name(),
                    ));
                }
            }
        }
    }
    conflicts
}

/// The `_meta` key under which a listed tool or prompt carries its tags (the
/// server's, then its own).
pub(crate) const TAGS_META: &str = "toolshelf/tags";

/// `meta` with `server` and `own` tags (without repeats) under `TAGS_META`, if there are any.
pub(crate) fn tagged(
    meta: Option<MetaObject>,
    server: &[String],
    own: &[String],
) -> Option<MetaObject> {
    let mut tags: Vec<&String> = server.iter().collect();
    for tag in own {
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    if tags.is_empty() {
        return meta;
    }
    let mut meta = meta.unwrap_or_default();
    meta.insert(TAGS_META.into(), serde_json::json!(tags));
    Some(meta)
}

#[cfg(test)]
mod tests;
