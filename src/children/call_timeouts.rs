//! The timeouts of one child's calls, kept by one task instead of a timer per call. tokio wakes
//! its own event loop (a write to an eventfd, then an extra `epoll_wait`) whenever a timer is
//! set that ends before every other: with a timer per call, that was every call on an idle
//! toolshelf. The watch keeps a single timer, set for the first call to run out: calls that come
//! later end later, so most calls set no timer at all.

use std::{
    sync::{Arc, Mutex, Weak},
    time::{Duration, Instant},
};

use tokio::sync::{Notify, oneshot};

use crate::locks;

/// One call's limit, as the watch sees it.
pub(super) struct Limit {
    /// How long the call may go without an answer or progress (`None`: no limit).
    pub limit: Option<Duration>,
    /// Told when the call ran out of time; dropped unsent when it did not.
    pub expired: Option<oneshot::Sender<()>>,
}

impl Limit {
    /// When the call runs out of time if nothing happens before, counting from `activity`.
    fn deadline(&self, activity: Instant) -> Option<Instant> {
        self.expired.as_ref()?;
        activity.checked_add(self.limit?)
    }
}

/// What the calls' state tells the watch.
pub(super) trait Watched: Send + 'static {
    /// Each waiting call's limit and last activity (now, while timeouts are paused), and
    /// whether no call will come any more.
    fn limits(&mut self) -> (Vec<(&mut Limit, Instant)>, bool);
    /// Where the watch keeps the time it will next look (`None`: it sleeps until told).
    fn next_look(&mut self) -> &mut Option<Instant>;
}

/// The watch of one child's calls: started with its first call with a limit.
#[derive(Default)]
pub(super) struct CallWatch {
    started: bool,
    wake: Arc<Notify>,
}

impl CallWatch {
    /// A call was registered that runs out at `deadline`: the watch starts, or looks again if
    /// that comes before the time it will look anyway. Progress and pauses only move deadlines
    /// later, which the watch finds when it looks. Called under the state's lock.
    pub(super) fn deadline_set<S: Watched>(
        &mut self,
        state: &Weak<Mutex<S>>,
        next_look: Option<Instant>,
        deadline: Option<Instant>,
    ) {
        let Some(deadline) = deadline else {
            return;
        };
        if !self.started {
            self.started = true;
            tokio::spawn(watch(state.clone(), self.wake.clone()));
        } else if next_look.is_none_or(|next| deadline < next) {
            self.wake.notify_one();
        }
    }

    /// No call will come any more: the watch ends.
    pub(super) fn end(&self) {
        self.wake.notify_one();
    }
}

/// Tells each call whose time ran out, then sleeps until the next deadline or until told.
async fn watch<S: Watched>(state: Weak<Mutex<S>>, wake: Arc<Notify>) {
    loop {
        let next = {
            let Some(state) = state.upgrade() else {
                return;
            };
            let mut state = locks::lock(&state);
            let now = Instant::now();
            let (limits, closed) = state.limits();
            if closed {
                return;
            }
            let mut next: Option<Instant> = None;
            for (limit, activity) in limits {
                match limit.deadline(activity) {
                    Some(deadline) if deadline <= now => {
                        if let Some(expired) = limit.expired.take() {
                            let _ = expired.send(());
                        }
                    }
                    Some(deadline) => next = Some(next.map_or(deadline, |n| n.min(deadline))),
                    None => {}
                }
            }
            *state.next_look() = next;
            next
        };
        match next {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at.into()) => {}
                    () = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }
}
