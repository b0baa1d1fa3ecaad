//! Flat mode (`serve --flat`): `tools/list` holds the tools of every served server, each named
//! `{server}{separator}{tool}` (the flat naming convention), and `tools/call` of such a name reaches that server's
//! tool through the same call path as `use_tool` (`child_call`). The children start as soon as the
//! agent's session is initialized; one that fails is left out of the list and retried in the
//! background with the restart backoff, and the agent is told when the list changes.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use indexmap::IndexMap;
use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

pub use crate::qualified_names::DEFAULT_SEPARATOR;

use crate::{
    catalog,
    child_call::{self, CallAnswer, CallFailure, CallParts, Target},
    config::Config,
    config::Prestart,
    error::ToolError,
    locks, qualified_names as names,
    toolboxes::{Opening, ServerSlot, ServerState, Toolboxes},
};

/// What flat mode serves, fixed at start: checked against the config before anything runs.
#[derive(Debug)]
pub struct FlatSpec {
    separator: String,
    /// The toolboxes asked for (`--toolbox`); empty: all.
    asked: Vec<String>,
    /// Each served server and its toolbox, in config order.
    servers: IndexMap<String, String>,
}

impl FlatSpec {
    /// Flat mode over `toolboxes` (every toolbox when empty), naming tools with `separator`.
    /// `Err` says what is wrong and how to fix it: an unknown toolbox, an empty separator, a
    /// separator inside a server name, or two served servers of the same name.
    pub fn new(config: &Config, toolboxes: &[String], separator: &str) -> Result<Self, String> {
        if separator.is_empty() {
            return Err(format!(
                "--separator is empty; give the text between a server's name and its tool's, e.g. {DEFAULT_SEPARATOR} (the default) or __"
            ));
        }
        for name in toolboxes {
            if !config.toolboxes.contains_key(name) {
                let known: Vec<&str> = config.toolboxes.keys().map(String::as_str).collect();
                return Err(format!(
                    "--toolbox {name}: the config has no such toolbox; it has {}",
                    known.join(", ")
                ));
            }
        }
        let mut servers: IndexMap<String, String> = IndexMap::new();
        let served = config
            .toolboxes
            .values()
            .filter(|toolbox| toolboxes.is_empty() || toolboxes.contains(&toolbox.name));
        for toolbox in served {
            for server in &toolbox.servers {
                if server.name.contains(separator) {
                    return Err(format!(
                        "server \"{}\" (toolboxes.{}.mcpServers.{}) contains the separator \"{separator}\", so its tools' names could not be split back; pick another --separator, or rename the server",
                        server.name, toolbox.name, server.name
                    ));
                }
                if let Some(first) = servers.get(&server.name) {
                    return Err(format!(
                        "two servers named \"{0}\" are served flat: toolboxes.{first}.mcpServers.{0} and toolboxes.{1}.mcpServers.{0}. Flat mode names tools {0}{separator}TOOL, so served servers need distinct names: rename one of them, or serve only some toolboxes with --toolbox NAME",
                        server.name, toolbox.name
                    ));
                }
                servers.insert(server.name.clone(), toolbox.name.clone());
            }
        }
        Ok(Self {
            separator: separator.to_owned(),
            asked: toolboxes.to_vec(),
            servers,
        })
    }

    /// Flat mode over the same toolboxes of a reloaded `config`, or why there cannot be one.
    pub fn rebuilt(&self, config: &Config) -> Result<FlatSpec, String> {
        FlatSpec::new(config, &self.asked, &self.separator)
    }

    /// The part of it `view` (a caller's view of the config) has: only the servers it sees.
    pub(crate) fn within(&self, view: &Config) -> FlatSpec {
        let visible = |server: &String, toolbox: &String| {
            view.toolboxes
                .get(toolbox)
                .is_some_and(|spec| spec.server(server).is_some())
        };
        let servers = self
            .servers
            .iter()
            .filter(|(server, toolbox)| visible(server, toolbox));
        FlatSpec {
            separator: self.separator.clone(),
            asked: self.asked.clone(),
            servers: servers
                .map(|(server, toolbox)| (server.clone(), toolbox.clone()))
                .collect(),
        }
    }

    /// Whether every tool name will break the MCP guidance for tool names because of the
    /// separator itself (the convention's own `:` does).
    pub fn separator_breaks_guidance(&self) -> bool {
        !names::follows_guidance(&self.separator)
    }

    /// The served toolboxes, each once, in config order.
    fn toolboxes(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for toolbox in self.servers.values() {
            if !names.contains(&toolbox.as_str()) {
                names.push(toolbox);
            }
        }
        names
    }

    /// The `instructions` of `initialize` in flat mode.
    pub(crate) fn instructions(&self) -> String {
        let servers: Vec<&str> = self.servers.keys().map(String::as_str).collect();
        format!(
            "toolshelf serves the tools of several MCP servers, each named SERVER{0}TOOL (for example {1}{0}TOOL). Servers: {2}.",
            self.separator,
            servers.first().copied().unwrap_or("server"),
            servers.join(", ")
        )
    }
}

/// Flat mode for one agent session.
pub(crate) struct FlatServing {
    spec: Arc<FlatSpec>,
    started: tokio::sync::OnceCell<()>,
    /// Names that break the MCP guidance are reported once.
    warned: AtomicBool,
    /// The servers being retried in the background, by name: one retry each.
    retrying: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
}

impl FlatServing {
    pub(crate) fn new(spec: Arc<FlatSpec>) -> Self {
        Self {
            spec,
            started: tokio::sync::OnceCell::new(),
            warned: AtomicBool::new(false),
            retrying: Arc::default(),
        }
    }

    /// Starts every served server once, all at once, each bounded by its startup timeout;
    /// waits for a start already under way.
    pub(crate) async fn ready(&self, toolboxes: &Toolboxes) {
        self.started.get_or_init(|| self.start(toolboxes)).await;
    }

    async fn start(&self, toolboxes: &Toolboxes) {
        let served: Vec<_> = self
            .spec
            .toolboxes()
            .into_iter()
            .filter_map(|name| toolboxes.get(name))
            .collect();
        // A flat client may never call most servers: those whose tools are remembered start
        // on their first call.
        let conflicts = toolboxes
            .open_all_as(&served, Opening::Remembered(Prestart::FirstCall))
            .await;
        for conflict in conflicts {
            tracing::warn!(%conflict, "an alias clashes with a tool name; calls by that name reach the tool");
        }
        for toolbox in &served {
            for slot in &toolbox.servers {
                if let ServerState::Failed(reason) = slot.state() {
                    tracing::warn!(toolbox = %slot.toolbox, server = %slot.spec.name, %reason, "left out of tools/list until it starts; retrying in the background");
                    self.retry(slot, toolboxes);
                }
            }
        }
    }

    /// The flat tool list: every tool of every served server that is not failed.
    pub(crate) async fn tools(&self, toolboxes: &Toolboxes) -> Vec<Tool> {
        self.ready(toolboxes).await;
        let mut tools = Vec::new();
        for (server, slot) in self.served(toolboxes) {
            for entry in toolboxes.tools_of(slot).iter() {
                let mut tool = entry.tool.clone();
                tool.name = self.flat_name(server, entry).into();
                tool.title = entry.title.clone();
                tool.description = entry.description.clone().map(Into::into);
                tool.input_schema = completed(&tool.input_schema);
                tool.meta = catalog::tagged(tool.meta.take(), &[], &entry.tags);
                tools.push(tool);
            }
        }
        self.warn_about_names(&tools);
        tools
    }

    /// The served servers that are not failed, once their start is over.
    pub(crate) async fn servers(&self, toolboxes: &Toolboxes) -> Vec<Arc<ServerSlot>> {
        self.ready(toolboxes).await;
        self.served(toolboxes)
            .map(|(_, slot)| slot.clone())
            .collect()
    }

    /// The toolbox, server and tool (as named) a flat `name` stands for, if it splits.
    pub(crate) fn locate<'a>(&'a self, name: &'a str) -> Option<(&'a str, &'a str, &'a str)> {
        let (server, tool) = names::split(name, &self.spec.separator).ok()?;
        let toolbox = self.spec.servers.get(server)?;
        Some((toolbox, server, tool))
    }

    pub(crate) fn separator(&self) -> &str {
        &self.spec.separator
    }

    /// The toolbox and slot of served server `server`.
    fn slot<'a>(
        &'a self,
        toolboxes: &'a Toolboxes,
        server: &str,
    ) -> Option<(&'a str, &'a Arc<ServerSlot>)> {
        let (server, toolbox) = self.spec.servers.get_key_value(server)?;
        let slot = toolboxes
            .get(toolbox)?
            .servers
            .iter()
            .find(|slot| &slot.spec.name == server)?;
        Some((toolbox, slot))
    }

    /// The served servers' slots that list tools now (a failed server is left out), with
    /// their names.
    fn served<'a>(
        &'a self,
        toolboxes: &'a Toolboxes,
    ) -> impl Iterator<Item = (&'a str, &'a Arc<ServerSlot>)> {
        self.spec.servers.keys().filter_map(|server| {
            let (_, slot) = self.slot(toolboxes, server)?;
            let failed = matches!(slot.state(), ServerState::Failed(_));
            (!failed).then_some((server.as_str(), slot))
        })
    }

    /// A tool's flat name: its alias, or its name, after its server's.
    fn flat_name(&self, server: &str, entry: &catalog::CatalogTool) -> String {
        let shown = entry.alias.as_deref().unwrap_or(entry.name());
        names::join(server, &self.spec.separator, shown)
    }

    /// Calls the tool `name` names, with `parts` (a child's JSON-RPC errors pass unchanged).
    pub(crate) async fn call(
        &self,
        toolboxes: &Toolboxes,
        name: &str,
        parts: CallParts<'_>,
    ) -> CallAnswer {
        self.ready(toolboxes).await;
        let (server, tool) = match names::split(name, &self.spec.separator) {
            Ok(parts) => parts,
            Err(error) => return CallAnswer::Refused(error),
        };
        let Some((toolbox, slot)) = self.slot(toolboxes, server) else {
            return CallAnswer::Refused(self.not_found(toolboxes, name));
        };
        let target = Target {
            toolbox,
            server,
            slot,
            name: tool,
        };
        let outcome = child_call::call(toolboxes, target, parts).await;
        // It failed to restart under this call: its tools leave the list until it is back.
        if matches!(slot.state(), ServerState::Failed(_)) && self.retry(slot, toolboxes) {
            toolboxes.agent().tool_list_changed().await;
        }
        match outcome {
            Err(CallFailure::Tool(ToolError::ToolUnknown { .. })) => {
                CallAnswer::Refused(self.not_found(toolboxes, name))
            }
            outcome => outcome.into(),
        }
    }

    /// Retries `slot` in the background until it starts (then the agent hears that the tool
    /// list changed) or the session ends; `false` if a retry of it runs already.
    fn retry(&self, slot: &Arc<ServerSlot>, toolboxes: &Toolboxes) -> bool {
        let name = slot.spec.name.clone();
        if !locks::lock(&self.retrying).insert(name.clone()) {
            return false;
        }
        let (slot, agent, stop) = (
            slot.clone(),
            toolboxes.agent().clone(),
            toolboxes.stopping(),
        );
        let retrying = self.retrying.clone();
        tokio::spawn(async move {
            loop {
                // At least a second between attempts, however the backoff counts.
                let wait = slot.start_wait().max(std::time::Duration::from_secs(1));
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(wait) => {}
                }
                if slot.live().is_some() || slot.ensure().await.is_ok() {
                    tracing::info!(toolbox = %slot.toolbox, server = %slot.spec.name, "started; its tools are listed again");
                    locks::lock(&retrying).remove(&name);
                    agent.tool_list_changed().await;
                    return;
                }
            }
        });
        true
    }

    fn not_found(&self, toolboxes: &Toolboxes, name: &str) -> rmcp::model::ErrorData {
        let listed: Vec<String> = self
            .served(toolboxes)
            .flat_map(|(server, slot)| {
                let tools = toolboxes.tools_of(slot);
                tools
                    .iter()
                    .map(|entry| self.flat_name(server, entry))
                    .collect::<Vec<_>>()
            })
            .collect();
        names::not_found(name, listed.iter().map(String::as_str))
    }

    /// Names that break the MCP guidance for a reason of their own (the separator's is told
    /// at start), once.
    fn warn_about_names(&self, tools: &[Tool]) {
        if self.spec.separator_breaks_guidance() {
            return;
        }
        let breaking: Vec<&str> = tools
            .iter()
            .map(|tool| tool.name.as_ref())
            .filter(|name| !names::follows_guidance(name))
            .collect();
        if breaking.is_empty() || self.warned.swap(true, Ordering::AcqRel) {
            return;
        }
        let examples: Vec<&str> = breaking.iter().take(3).copied().collect();
        tracing::warn!(
            count = breaking.len(),
            examples = %examples.join(", "),
            "tool names outside the MCP guidance (1 to 128 of A-Z a-z 0-9 _ - .); clients that check names may refuse them: pick another --separator, e.g. __"
        );
    }
}

/// `schema` as a tool's input schema must be: an object schema. Only a schema without a
/// `type` (such as `{}`, which strict clients refuse) is completed; any other is sent as written.
fn completed(schema: &Arc<JsonObject>) -> Arc<JsonObject> {
    if schema.contains_key("type") {
        return schema.clone();
    }
    let mut schema = (**schema).clone();
    schema.insert("type".into(), Value::String("object".into()));
    Arc::new(schema)
}
