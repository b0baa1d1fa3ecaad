//! What a script may spend inside the interpreter: Monty's own tracker (its heap's bytes, its
//! running time, its call depth), which also stops at once when the run is cancelled.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use monty_types::{LimitedTracker, ResourceError, ResourceLimits, ResourceTracker};

/// Monty's `LimitedTracker`, plus the run's stop flag, read where Monty checks its time: at
/// every statement and loop turn, so even `while True: pass` ends when the agent cancels.
#[derive(Debug)]
pub(super) struct ScriptTracker {
    limits: LimitedTracker,
    stopped: Arc<AtomicBool>,
}

impl ScriptTracker {
    pub(super) fn new(limits: ResourceLimits, stopped: Arc<AtomicBool>) -> Self {
        Self {
            limits: LimitedTracker::new(limits),
            stopped,
        }
    }
}

impl ResourceTracker for ScriptTracker {
    fn on_free(&self, get_size: impl FnOnce() -> usize) {
        self.limits.on_free(get_size);
    }

    fn check_time(&self) -> Result<(), ResourceError> {
        if self.stopped.load(Ordering::Relaxed) {
            // The host knows why it stopped the run and says so; the kind only ends it.
            return Err(ResourceError::Time {
                limit: Default::default(),
                elapsed: self.limits.elapsed(),
            });
        }
        self.limits.check_time()
    }

    fn check_recursion_depth(&self, current_depth: usize) -> Result<(), ResourceError> {
        self.limits.check_recursion_depth(current_depth)
    }

    fn check_large_result(&self, estimated_bytes: usize) -> Result<(), ResourceError> {
        self.limits.check_large_result(estimated_bytes)
    }

    fn on_grow(&self, get_additional: impl FnOnce() -> usize) -> Result<(), ResourceError> {
        self.limits.on_grow(get_additional)
    }

    fn gc_interval(&self) -> Option<usize> {
        self.limits.gc_interval()
    }

    fn on_execution_start(&self) {
        self.limits.on_execution_start();
    }

    fn on_execution_stop(&self) {
        self.limits.on_execution_stop();
    }
}
