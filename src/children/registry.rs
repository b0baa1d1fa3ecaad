//! Every child process toolshelf has started and not yet reaped. Spawning goes through here so
//! that shutdown can close the door first and then stop everything that got in: no process is
//! started after shutdown begins, and none is forgotten.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use process_wrap::tokio::ChildWrapper;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{
    exit::{Exit, SpawnError},
    process_tree,
};
use crate::locks;

#[derive(Debug, Default)]
pub(crate) struct ProcessRegistry {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    closed: bool,
    next_id: u64,
    live: HashMap<u64, Registered>,
}

#[derive(Debug)]
struct Registered {
    stop: CancellationToken,
    exit: watch::Receiver<Option<Exit>>,
}

/// A spawned child and the guard that unregisters it once it has been reaped.
pub(crate) struct Registration {
    pub child: Box<dyn ChildWrapper>,
    pub guard: Unregister,
}

/// Removes its process from the registry (and its group from the guard) when dropped, which
/// happens once the process is reaped and its group killed.
pub(crate) struct Unregister {
    registry: Arc<ProcessRegistry>,
    id: u64,
    group: Option<u32>,
}

impl Drop for Unregister {
    fn drop(&mut self) {
        self.registry.lock().live.remove(&self.id);
        if let Some(group) = self.group {
            process_tree::release(group);
        }
    }
}

impl ProcessRegistry {
    fn lock(&self) -> MutexGuard<'_, State> {
        locks::lock(&self.state)
    }

    /// Runs `spawn` (a synchronous fork/exec) while holding the registry, unless it is closed.
    pub(crate) fn register(
        self: &Arc<Self>,
        stop: &CancellationToken,
        exit: &watch::Receiver<Option<Exit>>,
        spawn: impl FnOnce() -> Result<Box<dyn ChildWrapper>, SpawnError>,
    ) -> Result<Registration, SpawnError> {
        let mut state = self.lock();
        if state.closed {
            return Err(SpawnError::ShuttingDown);
        }
        let child = spawn()?;
        // Each child leads its own process group, so its pid is the group's id.
        let group = child.id();
        if let Some(group) = group {
            process_tree::watch(group);
        }
        let id = state.next_id;
        state.next_id += 1;
        state.live.insert(
            id,
            Registered {
                stop: stop.clone(),
                exit: exit.clone(),
            },
        );
        Ok(Registration {
            child,
            guard: Unregister {
                registry: self.clone(),
                id,
                group,
            },
        })
    }

    /// Closes the registry, stops every live process and waits up to `limit` for all of them.
    /// Returns how many were still alive when the limit passed.
    pub(crate) async fn stop_all(&self, limit: Duration) -> usize {
        let entries: Vec<Registered> = {
            let mut state = self.lock();
            state.closed = true;
            state
                .live
                .values()
                .map(|entry| Registered {
                    stop: entry.stop.clone(),
                    exit: entry.exit.clone(),
                })
                .collect()
        };
        for entry in &entries {
            entry.stop.cancel();
        }
        let waits = entries
            .into_iter()
            .map(|mut entry| async move { entry.exit.wait_for(Option::is_some).await.is_ok() });
        match tokio::time::timeout(limit, futures::future::join_all(waits)).await {
            Ok(ended) => ended.iter().filter(|ok| !**ok).count(),
            Err(_) => self.lock().live.len(),
        }
    }

    /// True once shutdown began: nothing may start, remote connections included.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Refuses every spawn from now on.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
    }
}
