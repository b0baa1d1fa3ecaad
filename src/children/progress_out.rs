//! Where a call's progress goes: as lines on the agent's stream (the door on stdio), or through
//! the agent's rmcp peer, in the order the child sent it; under the agent's current token.

use std::sync::{Arc, Mutex};

use rmcp::{
    Peer, RoleServer,
    model::{ProgressNotificationParam, ProgressToken},
};
use tokio::sync::{mpsc, oneshot};

use crate::{jsonrpc::line_writer::LineWriter, locks};

/// Where the agent wants progress for one call: its output and its token.
#[derive(Clone)]
pub(crate) struct ProgressTarget {
    pub out: ProgressOut,
    pub token: CurrentToken,
}

/// How progress reaches the agent: as lines on its stream (the direct path on stdio), or
/// through its rmcp peer (whatever transport carries the session).
#[derive(Clone)]
pub(crate) enum ProgressOut {
    Lines(LineWriter),
    Peer(PeerProgress),
    /// Inside toolshelf: `toolshelf call` draws it on the terminal.
    Watch(mpsc::UnboundedSender<ProgressNotificationParam>),
}

/// Progress for one call through the agent's rmcp peer, in the order the child sent it: one
/// task hands each notification to rmcp in turn, and `flush` waits until all that came before
/// it are handed over, so that the call's answer follows its progress.
#[derive(Clone)]
pub(crate) struct PeerProgress {
    pub(super) queue: mpsc::UnboundedSender<PeerMessage>,
}

pub(super) enum PeerMessage {
    Progress(ProgressNotificationParam),
    Flush(oneshot::Sender<()>),
}

/// How long an answer waits for its progress to be handed to rmcp.
pub(super) const FLUSH_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

impl PeerProgress {
    pub(crate) fn start(peer: Peer<RoleServer>) -> PeerProgress {
        let (queue, mut queued) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(message) = queued.recv().await {
                match message {
                    PeerMessage::Progress(params) => {
                        if peer.notify_progress(params).await.is_err() {
                            tracing::debug!("progress dropped: the client's session ended");
                        }
                    }
                    PeerMessage::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        PeerProgress { queue }
    }

    /// Sends `params` after what was sent before (a `run_code` script's own progress: a notice
    /// per tool call).
    pub(crate) fn notify(&self, params: ProgressNotificationParam) {
        let _ = self.queue.send(PeerMessage::Progress(params));
    }

    /// Waits (briefly) until the progress sent so far is with rmcp.
    pub(crate) async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.queue.send(PeerMessage::Flush(done)).is_ok() {
            let _ = tokio::time::timeout(FLUSH_LIMIT, flushed).await;
        }
    }
}

/// The agent's progress token for a call. A call in input rounds (2026-07-28) is a new request
/// of the agent each round, with a token of its own, and has none while it waits for the
/// agent's retry: progress then has no request to go with and is dropped.
#[derive(Clone)]
pub(crate) struct CurrentToken(Arc<Mutex<Option<ProgressToken>>>);

impl CurrentToken {
    pub(crate) fn new(token: Option<ProgressToken>) -> Self {
        Self(Arc::new(Mutex::new(token)))
    }

    pub(crate) fn set(&self, token: Option<ProgressToken>) {
        *locks::lock(&self.0) = token;
    }

    pub(super) fn get(&self) -> Option<ProgressToken> {
        locks::lock(&self.0).clone()
    }
}
