//! Stops children that have had no call in flight for their `idleTimeout`. The toolbox stays
//! open and keeps the server's last tool list; the next call starts the child again.

use std::{sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use super::{ServerSlot, ServerState};

/// Bounds of the sweep period (a quarter of the shortest idle timeout).
const MIN_PERIOD: Duration = Duration::from_millis(50);
const MAX_PERIOD: Duration = Duration::from_secs(5);

/// Starts the sweeper if any server has an idle timeout; it ends when `stop` is cancelled.
pub(super) fn spawn_sweeper(slots: Vec<Arc<ServerSlot>>, stop: CancellationToken) {
    let shortest = slots.iter().filter_map(|slot| slot.spec.idle_timeout).min();
    let Some(shortest) = shortest else {
        return;
    };
    let period = (shortest / 4).clamp(MIN_PERIOD, MAX_PERIOD);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticks.tick() => sweep(&slots),
            }
        }
    });
}

fn sweep(slots: &[Arc<ServerSlot>]) {
    for slot in slots {
        let Some(limit) = slot.spec.idle_timeout else {
            continue;
        };
        let ServerState::Ready(child) = slot.state() else {
            continue;
        };
        if child.in_flight() > 0 || child.idle_for() < limit || !slot.retire_idle(&child) {
            continue;
        }
        tracing::info!(toolbox = %slot.toolbox, server = %slot.spec.name, idle_s = limit.as_secs_f64(), "stopping idle child");
        tokio::spawn(async move {
            // A call that took the child just before it was retired may still run: let it end.
            while child.in_flight() > 0 {
                tokio::time::sleep(MIN_PERIOD).await;
            }
            child.shutdown().await;
        });
    }
}
