//! Progress of forwarded calls. rmcp stamps its own progress token on every request to a child,
//! so the agent's token cannot pass through: each call that the agent wants progress for gets a
//! route from the child-side token to the agent's peer and token. Only increasing progress is
//! forwarded, and nothing after the call has answered.

use std::sync::Arc;

use dashmap::DashMap;
use rmcp::{
    Peer, RoleServer,
    model::{ProgressNotificationParam, ProgressToken},
};

/// Where the agent wants progress for one call.
#[derive(Clone)]
pub(crate) struct ProgressTarget {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
}

struct Route {
    target: ProgressTarget,
    /// `None` once the call answered; otherwise the last progress forwarded.
    state: tokio::sync::Mutex<Option<f64>>,
}

/// Routes of the calls in flight to one child, by the token rmcp gave the forwarded request.
#[derive(Default, Clone)]
pub(crate) struct ProgressRoutes {
    routes: Arc<DashMap<ProgressToken, Arc<Route>>>,
}

impl ProgressRoutes {
    pub(crate) fn open(&self, child_token: ProgressToken, target: ProgressTarget) {
        let route = Route {
            target,
            state: tokio::sync::Mutex::new(Some(f64::NEG_INFINITY)),
        };
        self.routes.insert(child_token, Arc::new(route));
    }

    /// Closes the route; once this returns, no progress for it will be sent.
    pub(crate) async fn close(&self, child_token: &ProgressToken) {
        if let Some((_, route)) = self.routes.remove(child_token) {
            *route.state.lock().await = None;
        }
    }

    /// Forwards `progress` to the agent if its call is still open and it moved forward.
    pub(crate) async fn forward(&self, progress: ProgressNotificationParam) {
        let Some(route) = self
            .routes
            .get(&progress.progress_token)
            .map(|entry| entry.value().clone())
        else {
            return;
        };
        let mut state = route.state.lock().await;
        match *state {
            Some(last) if progress.progress > last => *state = Some(progress.progress),
            _ => return,
        }
        let mut notice =
            ProgressNotificationParam::new(route.target.token.clone(), progress.progress);
        notice.total = progress.total;
        notice.message = progress.message;
        if let Err(error) = route.target.peer.notify_progress(notice).await {
            tracing::debug!(%error, "progress could not be forwarded to the client");
        }
    }
}
