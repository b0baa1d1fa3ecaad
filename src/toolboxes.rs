//! The configured toolboxes and the state of each of their servers: not started, ready (a live
//! child) or failed (with the reason). Opening a toolbox starts what is not ready, all servers at
//! once; the call path only reads state, never waits on a lock held across a start.

use std::{
    sync::{
        Arc, RwLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::future::join_all;
use indexmap::IndexMap;

use crate::{
    children::{Child, ProcessRegistry},
    config::{Config, ServerSpec, ToolboxSpec},
};

/// How long shutdown waits for all children before giving up on the stragglers.
pub(crate) const SHUTDOWN_LIMIT: Duration = Duration::from_secs(10);

/// Every configured toolbox, fixed at start-up.
pub(crate) struct Toolboxes {
    boxes: IndexMap<String, Arc<Toolbox>>,
    processes: Arc<ProcessRegistry>,
}

/// One toolbox and its servers' state.
pub(crate) struct Toolbox {
    pub spec: Arc<ToolboxSpec>,
    pub servers: Vec<ServerSlot>,
    open: AtomicBool,
    /// Serialises opens, so that concurrent opens share one start.
    open_lock: tokio::sync::Mutex<()>,
    /// Counts finished open attempts; an open that waited for another one reuses its outcome.
    attempts: AtomicU64,
}

/// One server of a toolbox.
pub(crate) struct ServerSlot {
    pub spec: Arc<ServerSpec>,
    state: RwLock<ServerState>,
}

/// Where a server is in its life.
#[derive(Clone)]
pub(crate) enum ServerState {
    NotStarted,
    Ready(Arc<Child>),
    Failed(Arc<str>),
}

impl ServerSlot {
    pub(crate) fn state(&self) -> ServerState {
        self.state
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    fn set(&self, state: ServerState) {
        *self
            .state
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = state;
    }

    /// Whether an open should (re)start this server: never started, failed, or its process died.
    fn needs_start(&self) -> bool {
        match self.state() {
            ServerState::NotStarted | ServerState::Failed(_) => true,
            ServerState::Ready(child) => child.is_gone(),
        }
    }
}

impl Toolboxes {
    pub(crate) fn new(config: &Config) -> Self {
        let boxes = config
            .toolboxes
            .iter()
            .map(|(name, spec)| {
                let servers = spec
                    .servers
                    .iter()
                    .map(|server| ServerSlot {
                        spec: server.clone(),
                        state: RwLock::new(ServerState::NotStarted),
                    })
                    .collect();
                let toolbox = Toolbox {
                    spec: spec.clone(),
                    servers,
                    open: AtomicBool::new(false),
                    open_lock: tokio::sync::Mutex::new(()),
                    attempts: AtomicU64::new(0),
                };
                (name.clone(), Arc::new(toolbox))
            })
            .collect();
        Self {
            boxes,
            processes: Arc::new(ProcessRegistry::default()),
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Toolbox>> {
        self.boxes.get(name)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.boxes.keys().map(String::as_str)
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<Toolbox>> {
        self.boxes.values()
    }

    /// Starts every server of `toolbox` that is not ready, concurrently. The toolbox counts as
    /// open once any of its servers is ready.
    pub(crate) async fn open(&self, toolbox: &Toolbox) {
        let seen = toolbox.attempts.load(Ordering::Acquire);
        let _guard = toolbox.open_lock.lock().await;
        if toolbox.attempts.load(Ordering::Acquire) != seen {
            return; // another open finished while we waited: its outcome is ours
        }
        let starts = toolbox
            .servers
            .iter()
            .filter(|slot| slot.needs_start())
            .map(|slot| async {
                if let ServerState::Ready(dead) = slot.state() {
                    dead.shutdown().await;
                }
                let state = match Child::start(&self.processes, &toolbox.spec.name, slot.spec.clone()).await {
                    Ok(child) => ServerState::Ready(Arc::new(child)),
                    Err(error) => {
                        tracing::warn!(toolbox = %toolbox.spec.name, server = %slot.spec.name, error = %error, "server failed to start");
                        ServerState::Failed(error.to_string().into())
                    }
                };
                slot.set(state);
            });
        join_all(starts).await;
        let any_ready = toolbox
            .servers
            .iter()
            .any(|slot| matches!(slot.state(), ServerState::Ready(_)));
        if any_ready {
            toolbox.open.store(true, Ordering::Release);
        }
        toolbox.attempts.fetch_add(1, Ordering::AcqRel);
    }

    /// Stops every child, concurrently, within `SHUTDOWN_LIMIT`; no process is started after
    /// this begins.
    pub(crate) async fn shutdown(&self) {
        self.processes.close();
        let children: Vec<Arc<Child>> = self
            .boxes
            .values()
            .flat_map(|toolbox| toolbox.servers.iter())
            .filter_map(|slot| match slot.state() {
                ServerState::Ready(child) => Some(child),
                _ => None,
            })
            .collect();
        let graceful = join_all(children.iter().map(|child| child.shutdown()));
        let _ = tokio::time::timeout(SHUTDOWN_LIMIT, graceful).await;
        let stragglers = self.processes.stop_all(Duration::from_secs(5)).await;
        if stragglers > 0 {
            tracing::error!(count = stragglers, "children still running after shutdown");
        }
    }

    pub(crate) fn live_processes(&self) -> usize {
        self.processes.live_count()
    }
}

impl Toolbox {
    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    pub(crate) fn server(&self, name: &str) -> Option<&ServerSlot> {
        self.servers.iter().find(|slot| slot.spec.name == name)
    }
}
