//! How many calls of children's tools a session may have in flight. A transport that serves many
//! sessions gives each one a budget (`serve --http`: `http.maxCallsPerSession`, and one shared
//! by every client without a session); stdio's one session has none. The session checks it
//! wherever a call enters, on rmcp's path and on the direct one alike.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use rmcp::{ErrorData as McpError, model::ErrorCode};

/// The JSON-RPC code of a request refused for a limit of `serve --http`.
pub(crate) const LIMIT_REACHED: ErrorCode = ErrorCode(-32000);

/// A count of calls in flight and the most it may reach.
#[derive(Clone)]
pub(crate) struct CallBudget {
    count: Arc<AtomicUsize>,
    limit: usize,
    /// Whose budget, for the refusal: "this session has".
    whose: &'static str,
    /// The config key that sets the limit.
    key: &'static str,
}

impl CallBudget {
    pub(crate) fn new(limit: usize, whose: &'static str, key: &'static str) -> Self {
        Self {
            count: Arc::default(),
            limit,
            whose,
            key,
        }
    }

    /// Counts one more call, or says which limit refuses it.
    pub(crate) fn enter(&self) -> Result<InFlight, McpError> {
        let Self {
            count,
            limit,
            whose,
            key,
        } = self;
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now < *limit).then_some(now + 1)
            })
            .map(|_| InFlight(count.clone()))
            .map_err(|_| {
                McpError::new(
                    LIMIT_REACHED,
                    format!(
                        "{whose} as many use_tool calls in flight as toolshelf runs at once ({limit}, {key} in the config): wait for one to answer, then call again"
                    ),
                    None,
                )
            })
    }
}

/// Counts a call in flight until it drops.
pub(crate) struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
