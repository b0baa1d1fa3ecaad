//! One server of a toolbox: its state, its catalog, and the one place it is (re)started. Calls
//! read the state without waiting; a start holds the slot's start lock, so concurrent callers
//! share one start and never spawn two processes.

use std::{
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Instant,
};

use super::backoff::Backoff;
use crate::{
    catalog::cache::Offer,
    catalog::{ServerCatalog, Source},
    children::{Child, Launch},
    config::ServerSpec,
    locks,
};

/// Where a server is in its life.
#[derive(Clone)]
pub(crate) enum ServerState {
    NotStarted,
    Ready(Arc<Child>),
    Failed(Arc<str>),
    /// Stopped after `idleTimeout` without calls; the next call starts it again.
    Idle,
}

/// How long a background start waits for the answer it is behind to be written.
const BEHIND_THE_ANSWER: std::time::Duration = std::time::Duration::from_millis(10);

pub(crate) struct ServerSlot {
    pub spec: Arc<ServerSpec>,
    pub catalog: Arc<ServerCatalog>,
    pub toolbox: String,
    /// How its child starts: the registry and agent side of the session that owns it, or of
    /// the shared servers.
    launch: Arc<Launch>,
    /// Every session uses it (`serve --http`); else one session owns it.
    pub shared: bool,
    state: RwLock<ServerState>,
    start_lock: tokio::sync::Mutex<()>,
    /// Finished starts; a caller that waited for someone else's start takes its outcome.
    starts: AtomicU64,
    /// A start is under way (or about to be, in the background).
    starting: AtomicBool,
    /// A config reload changed or removed the server: it never starts again.
    retired: AtomicBool,
    backoff: Mutex<Backoff>,
}

impl ServerSlot {
    pub(crate) fn new(
        toolbox: &str,
        spec: Arc<ServerSpec>,
        launch: Arc<Launch>,
        shared: bool,
    ) -> Self {
        Self {
            catalog: Arc::new(ServerCatalog::new(
                toolbox,
                &spec,
                launch.catalogs.as_deref(),
            )),
            spec,
            toolbox: toolbox.to_owned(),
            launch,
            shared,
            state: RwLock::new(ServerState::NotStarted),
            start_lock: tokio::sync::Mutex::new(()),
            starts: AtomicU64::new(0),
            starting: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            backoff: Mutex::new(Backoff::default()),
        }
    }

    pub(crate) fn state(&self) -> ServerState {
        locks::read(&self.state).clone()
    }

    fn set(&self, state: ServerState) {
        *locks::write(&self.state) = state;
    }

    fn backoff(&self) -> std::sync::MutexGuard<'_, Backoff> {
        locks::lock(&self.backoff)
    }

    /// The running child, if there is one and it is alive.
    pub(crate) fn live(&self) -> Option<Arc<Child>> {
        match self.state() {
            ServerState::Ready(child) if !child.is_gone() => Some(child),
            _ => None,
        }
    }

    /// True while `child` is the slot's current child.
    pub(crate) fn is_current(&self, child: &Arc<Child>) -> bool {
        matches!(self.state(), ServerState::Ready(current) if Arc::ptr_eq(&current, child))
    }

    /// The live child, starting (or restarting) it if needed. `Err` says why there is none.
    pub(crate) async fn ensure(&self) -> Result<Arc<Child>, Arc<str>> {
        if let Some(child) = self.live() {
            return Ok(child);
        }
        // The start path holds a whole MCP handshake; boxed, its size is not carried (and
        // copied) by every call's future, which the profile showed to cost more than the call.
        Box::pin(self.start()).await
    }

    /// True while a start of the server is under way.
    pub(crate) fn is_starting(&self) -> bool {
        self.starting.load(Ordering::Acquire)
    }

    /// True when the agent can be shown the server's tools: it runs, it was stopped for
    /// idleness, or it has not started but its tools are known (the persisted catalog).
    pub(crate) fn lists_tools(&self) -> bool {
        self.lists_tools_in(&self.state())
    }

    /// As `lists_tools`, with the slot in `state`.
    pub(crate) fn lists_tools_in(&self, state: &ServerState) -> bool {
        match state {
            ServerState::Ready(_) | ServerState::Idle => true,
            ServerState::NotStarted => self.catalog.source() != Source::None,
            ServerState::Failed(_) => false,
        }
    }

    /// For a server that has not started: takes its tools from the persisted catalog, if they
    /// are there.
    pub(crate) fn recall(&self) -> bool {
        self.spec.unavailable.is_none()
            && matches!(self.state(), ServerState::NotStarted)
            && self
                .catalog
                .recall(Offer::of(&self.launch.agent.child_capabilities()))
    }

    /// Starts the server behind the caller's back, once the answer at hand has gone out, unless
    /// `stop` (the session ended) comes first; a call meanwhile waits for this start.
    pub(crate) fn start_in_background(self: &Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        if self.live().is_some() {
            return;
        }
        self.starting.store(true, Ordering::Release);
        let slot = self.clone();
        tokio::spawn(async move {
            // Spawning a process blocks toolshelf's one thread for about a millisecond: started
            // at once, sixteen of them held up the answer they were meant to hide behind (the
            // benchmark's warm open of 16 children).
            tokio::select! {
                () = stop.cancelled() => {
                    slot.starting.store(false, Ordering::Release);
                    return;
                }
                () = tokio::time::sleep(BEHIND_THE_ANSWER) => {}
            }
            // A failure is logged by the start and met again by the next call.
            let _ = slot.ensure().await;
        });
    }

    /// The slow half of `ensure`: start the child under the start lock, or share a start.
    async fn start(&self) -> Result<Arc<Child>, Arc<str>> {
        let seen = self.starts.load(Ordering::Acquire);
        let _starting = self.start_lock.lock().await;
        self.starting.store(true, Ordering::Release);
        // Cleared however the start ends, a caller that gave up on it included.
        let _started = Cleared(&self.starting);
        self.start_locked(seen).await
    }

    async fn start_locked(&self, seen: u64) -> Result<Arc<Child>, Arc<str>> {
        if self.retired.load(Ordering::Acquire) {
            return Err("the config was reloaded while this call was on its way, and the server changed or is gone: call again".into());
        }
        // Nothing to try: the config says why (logged once, when it was loaded).
        if let Some(reason) = &self.spec.unavailable {
            self.set(ServerState::Failed(reason.as_str().into()));
            return Err(format!("it cannot start: {reason}").into());
        }
        if self.starts.load(Ordering::Acquire) != seen {
            // Someone else's start finished while we waited: its outcome is ours.
            return match self.state() {
                ServerState::Ready(child) => Ok(child),
                ServerState::Failed(reason) => Err(format!("it failed to start: {reason}").into()),
                _ => Err("the server is not running".into()),
            };
        }
        let now = Instant::now();
        if let ServerState::Ready(dead) = self.state() {
            let reason = dead.describe_end();
            tracing::warn!(toolbox = %self.toolbox, server = %self.spec.name, %reason, "child died; restarting");
            if let Some(metrics) = &self.launch.metrics {
                metrics.crashed(&self.toolbox, &self.spec.name);
            }
            self.backoff().failed(now, &reason);
            tokio::spawn(async move { dead.shutdown().await });
        }
        let refusal = self.backoff().refusal(now);
        if let Some(refusal) = refusal {
            return Err(refusal.into());
        }
        let source = self.catalog.source();
        let known = (source != Source::None).then(|| self.catalog.tools());
        let started = Child::start(
            &self.launch,
            &self.toolbox,
            self.spec.clone(),
            self.catalog.clone(),
        )
        .await;
        let outcome = match started {
            Ok(child) => {
                if let Some(metrics) = &self.launch.metrics {
                    metrics.started(&self.toolbox, &self.spec.name);
                }
                let child = Arc::new(child);
                self.set(ServerState::Ready(child.clone()));
                // The agent may hold the list as it was (remembered, or before a restart).
                let changed =
                    known.and_then(|known| crate::catalog::changes(&known, &self.catalog.tools()));
                if let Some(changed) = changed {
                    if crate::catalog::drift(changed, source).is_some() {
                        tracing::info!(toolbox = %self.toolbox, server = %self.spec.name, "the server's tools changed since they were last listed");
                    }
                    // Tools the agent's kind of client gets beyond the nearest list are no
                    // drift, but a flat client still has to hear of them.
                    self.launch.agent.tool_list_changed().await;
                }
                Ok(child)
            }
            Err(error) => {
                let reason = error.to_string();
                tracing::warn!(toolbox = %self.toolbox, server = %self.spec.name, error = %reason, "server failed to start");
                let now = Instant::now();
                let next_try = {
                    let mut backoff = self.backoff();
                    backoff.failed(now, &reason);
                    backoff.next_try(now)
                };
                self.set(ServerState::Failed(reason.clone().into()));
                let mut text = format!("it failed to start: {reason}");
                if let Some(next_try) = next_try {
                    text.push('\n');
                    text.push_str(&next_try);
                }
                Err(text.into())
            }
        };
        self.starts.fetch_add(1, Ordering::AcqRel);
        outcome
    }

    /// How long until the backoff lets the server start again (zero: now).
    pub(crate) fn start_wait(&self) -> std::time::Duration {
        self.backoff().wait(Instant::now())
    }

    /// The child answered a call: earlier failures stop counting against it.
    pub(crate) fn answered(&self) {
        self.backoff().succeeded();
    }

    /// Stops the child, if any, and forgets it (the next start is a fresh one).
    pub(crate) async fn stop(&self) {
        let _starting = self.start_lock.lock().await;
        let previous = std::mem::replace(&mut *locks::write(&self.state), ServerState::NotStarted);
        if let ServerState::Ready(child) = previous {
            child.shutdown().await;
        }
    }

    /// A reload changed or removed the server: it never starts again, and its child stops once
    /// the calls it has in flight end.
    pub(crate) fn retire(self: Arc<Self>) {
        self.retired.store(true, Ordering::Release);
        tokio::spawn(async move {
            let previous = {
                let _starting = self.start_lock.lock().await;
                std::mem::replace(&mut *locks::write(&self.state), ServerState::NotStarted)
            };
            if let ServerState::Ready(child) = previous {
                tracing::info!(toolbox = %self.toolbox, server = %self.spec.name, "stopping a child the reloaded config changed or removed, once its calls end");
                while child.in_flight() > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                child.shutdown().await;
            }
        });
    }

    /// Stops `child` for idleness if it is still current, unused and nobody is starting it.
    pub(crate) fn retire_idle(&self, child: &Arc<Child>) -> bool {
        let Ok(_starting) = self.start_lock.try_lock() else {
            return false;
        };
        if !self.is_current(child) || child.in_flight() > 0 {
            return false;
        }
        self.set(ServerState::Idle);
        true
    }
}

/// Clears its flag when dropped.
struct Cleared<'a>(&'a AtomicBool);

impl Drop for Cleared<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}
