//! The table of HTTP sessions (`serve --http`) and its limits. A 2025-era client's session (it
//! starts with `initialize`) is a `SessionState` of its own: its open toolboxes, its relays and
//! its `"sharing": "session"` children, which stop when the session ends (DELETE or expiry);
//! every other child is one of the `SharedServers`. Each caller sees the config through its own
//! view (`caller_view`: what the policy lets it use), and its clients without a session
//! (2026-07-28) are served by one `SessionState` of that view, whose `use_tool` calls open the
//! toolbox they name.

use std::sync::{
    Arc, RwLock,
    atomic::{AtomicU64, Ordering},
};

use dashmap::DashMap;
use rmcp::{ErrorData as McpError, RoleServer, service::NotificationContext};

use super::{
    caller_view::{CallerTable, CallerView, REQUEST_CALLER},
    callers::{Caller, ViewKey},
};
use crate::{
    config::{Config, HttpLimits},
    flat::FlatSpec,
    locks,
    metrics::Metrics,
    revision::SESSION_ID_HEADER,
    session::{CallBudget, LIMIT_REACHED, Session, SessionState, Setup, SharedChildren, Who},
};

/// Every session of one serving process.
pub(super) struct Sessions {
    /// The config as last (re)loaded, and flat mode's spec of it.
    config: RwLock<(Arc<Config>, Option<Arc<FlatSpec>>)>,
    /// How many reloads began: a view made from the config of an older one is not kept.
    generation: AtomicU64,
    /// The limits read at start (a reload does not change them).
    limits: HttpLimits,
    /// The servers sessions share (all but those marked `"sharing": "session"`).
    shared: Arc<SharedChildren>,
    /// What every session's calls and starts count in.
    metrics: Arc<Metrics>,
    /// Each caller's view, made at its first request: one per token's name, and one per
    /// subject of access tokens (with its groups and scopes).
    views: DashMap<Option<ViewKey>, Arc<CallerView>>,
    /// The sessions begun, with their caller, to count them, to reload them and to stop them
    /// at shutdown.
    open: DashMap<usize, (Arc<SessionState>, Option<Caller>)>,
    /// The same, by rmcp's session id once the agent said `notifications/initialized`: what
    /// the gate's direct path serves. The ids are rmcp's random ones, looked up at every
    /// request: foldhash (seeded per process) rather than SipHash.
    by_id: DashMap<Box<str>, Arc<SessionState>, foldhash::fast::RandomState>,
    /// The caller each session of `by_id` belongs to, where tokens name callers.
    owners: DashMap<Box<str>, Caller, foldhash::fast::RandomState>,
}

impl Sessions {
    pub(super) fn new(config: Arc<Config>, flat: Option<Arc<FlatSpec>>) -> Arc<Sessions> {
        let metrics = Arc::new(Metrics::default());
        let shared = Arc::new(SharedChildren::new(&config, metrics.clone()));
        Arc::new(Sessions {
            limits: config.http,
            config: RwLock::new((config, flat)),
            generation: AtomicU64::new(0),
            shared,
            metrics,
            views: DashMap::new(),
            open: DashMap::new(),
            by_id: DashMap::default(),
            owners: DashMap::default(),
        })
    }

    /// A handler for rmcp, for the caller of the request being handled: a new session's, or a
    /// sessionless request's.
    pub(super) fn handler(self: &Arc<Self>) -> Session {
        let caller = REQUEST_CALLER.try_with(Clone::clone).ok().flatten();
        let view = self.view(caller);
        Session::in_table(Arc::new(CallerTable {
            sessions: self.clone(),
            view,
        }))
    }

    /// `caller`'s view, made now if this is its first request.
    pub(super) fn view(&self, caller: Option<Caller>) -> Arc<CallerView> {
        let key = caller.as_ref().map(Caller::view_key);
        loop {
            if let Some(view) = self.views.get(&key) {
                return view.clone();
            }
            let ((config, flat), generation) = {
                let current = locks::read(&self.config);
                (current.clone(), self.generation.load(Ordering::SeqCst))
            };
            let made = CallerView::new(
                &config,
                flat.as_deref(),
                caller.clone(),
                self.shared.clone(),
            );
            let view = self
                .views
                .entry(key.clone())
                .or_insert(Arc::new(made))
                .clone();
            if self.generation.load(Ordering::SeqCst) == generation {
                return view;
            }
            // A reload began while it was made, and may have missed it: make it anew.
            self.views
                .remove_if(&key, |_, kept| Arc::ptr_eq(kept, &view));
        }
    }

    /// The servers every session shares.
    pub(super) fn shared_servers(&self) -> Arc<crate::toolboxes::SharedServers> {
        self.shared.servers.clone()
    }

    /// The session rmcp knows by `id`, once it is initialized.
    pub(super) fn by_id(&self, id: &str) -> Option<Arc<SessionState>> {
        self.by_id.get(id).map(|entry| entry.value().clone())
    }

    pub(super) fn limits(&self) -> &HttpLimits {
        &self.limits
    }

    /// Serves `config` from now on (`flat`: flat mode's spec of it): shared servers defined as
    /// before keep their children, the others stop once idle; each caller's view is made anew
    /// and every session, the sessionless ones included, swaps to its caller's new view.
    pub(super) async fn reload(&self, config: Arc<Config>, flat: Option<Arc<FlatSpec>>) {
        if config.http != self.limits {
            tracing::warn!(
                "the reloaded config changes the http limits, which apply from the next start"
            );
        }
        {
            let mut current = locks::write(&self.config);
            *current = (config.clone(), flat.clone());
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        self.shared.servers.reload(&config);
        let views: Vec<(Option<ViewKey>, Arc<CallerView>)> = self
            .views
            .iter()
            .map(|entry| (entry.key().clone(), entry.value().clone()))
            .collect();
        for (key, before) in views {
            let view = Arc::new(
                before
                    .reloaded(&config, flat.as_deref(), &self.shared)
                    .await,
            );
            self.views.insert(key, view);
        }
        let open: Vec<(Arc<SessionState>, Option<Caller>)> = self
            .open
            .iter()
            .map(|entry| entry.value().clone())
            .collect();
        for (state, caller) in open {
            let view = self.view(caller);
            let shared = Some(self.shared.servers.clone());
            state.reload(&view.config, &view.surface, shared).await;
        }
    }

    /// Stops every child of every session and of the sessionless one.
    pub(super) async fn shutdown(&self) {
        let open: Vec<Arc<SessionState>> = self
            .open
            .iter()
            .map(|entry| entry.value().0.clone())
            .collect();
        self.open.clear();
        self.by_id.clear();
        futures::future::join_all(open.iter().map(|state| state.shutdown())).await;
        let views: Vec<Arc<CallerView>> = self.views.iter().map(|view| view.clone()).collect();
        futures::future::join_all(views.iter().map(|view| view.sessionless.shutdown())).await;
        self.shared.servers.shutdown().await;
    }

    pub(super) fn open_sessions(&self) -> usize {
        self.open.len()
    }

    /// True when the session `id` belongs to a caller other than `caller`.
    pub(super) fn is_foreign(&self, id: &str, caller: &Caller) -> bool {
        self.owners.get(id).is_some_and(|owner| *owner != *caller)
    }

    /// The text of `/metrics`, its gauges read now (with `connections` open).
    pub(super) fn metrics(&self, connections: usize) -> String {
        let own: usize = self
            .open
            .iter()
            .map(|entry| entry.value().0.own_children_running())
            .sum();
        let sessionless: usize = self
            .views
            .iter()
            .map(|view| view.sessionless.own_children_running())
            .sum();
        let running = self.shared.servers.running() + own + sessionless;
        self.metrics
            .scrape(running, self.open_sessions(), connections)
    }
}

/// A session's key in `open`: the address of its state, unique while it is there.
fn key(state: &Arc<SessionState>) -> usize {
    Arc::as_ptr(state) as usize
}

impl Sessions {
    /// A new session of `view`, or why none may begin (a limit).
    pub(super) fn begin(&self, view: &CallerView) -> Result<Arc<SessionState>, McpError> {
        let limit = self.limits.max_sessions;
        if self.open.len() >= limit {
            return Err(McpError::new(
                LIMIT_REACHED,
                format!(
                    "toolshelf holds as many agent sessions as it may ({limit}, http.maxSessions in the config): end sessions you no longer use (DELETE), wait for idle ones to expire, or raise the limit"
                ),
                None,
            ));
        }
        let setup = Setup {
            shared: Some(self.shared.clone()),
            budget: Some(CallBudget::new(
                self.limits.max_calls_per_session,
                "this session has",
                "http.maxCallsPerSession",
            )),
            sessionless: false,
        };
        let state = SessionState::new(&view.config, &view.surface, setup);
        self.open
            .insert(key(&state), (state.clone(), view.caller.clone()));
        Ok(state)
    }

    pub(super) fn initialized(
        &self,
        state: &Arc<SessionState>,
        context: &NotificationContext<RoleServer>,
    ) -> Option<Box<str>> {
        let request = context.extensions.get::<http::request::Parts>()?;
        let id: Box<str> = request
            .headers
            .get(SESSION_ID_HEADER)
            .and_then(|id| id.to_str().ok())?
            .into();
        let caller = request.extensions.get::<Caller>();
        if let Some(caller) = caller {
            self.owners.insert(id.clone(), caller.clone());
        }
        // As the access log shows it: enough to tell sessions apart, not to take one over.
        let session = id.chars().take(8).collect();
        state.identify(match caller {
            Some(caller) => caller.who(session),
            None => Who {
                caller: None,
                session,
                counted: false,
            },
        });
        self.by_id.insert(id.clone(), state.clone());
        Some(id)
    }

    pub(super) fn ended(&self, state: Arc<SessionState>, id: Option<Box<str>>) {
        if let Some(id) = id {
            self.by_id.remove(&id);
            self.owners.remove(&id);
        }
        self.open.remove(&key(&state));
        // Outside a runtime (the process is ending) the process guard stops the children.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { state.shutdown().await });
        }
    }
}
