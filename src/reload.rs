//! Reloading the config while toolshelf serves: on SIGHUP (`signals`; Windows has none), and with
//! `serve --watch` whenever
//! the file's content changes (read once a second: no watcher to set up, and a file replaced by
//! an editor's rename is seen like one written in place). A config with problems is refused,
//! every problem logged, and the running one stays; a good one goes to the transport, which
//! swaps it in (`SessionState::reload`, `Sessions::reload`).

use std::{path::PathBuf, sync::Arc, time::Duration};

use tokio::sync::mpsc;

use crate::{
    config::Config,
    flat::FlatSpec,
    signals::{RELOAD_AGAIN, RELOAD_REQUEST, ReloadRequests},
};

/// How often `--watch` reads the file.
const WATCH_PERIOD: Duration = Duration::from_secs(1);

/// The configs to serve from now on, each already checked.
pub type Reloads = mpsc::Receiver<Config>;

/// What a reload reads: the config file, checked; `Err` holds each of its problems.
pub type Load = Box<dyn Fn() -> Result<Config, Vec<String>> + Send>;

/// Starts listening for SIGHUP (and with `watch`, for changes of `path`); each good config
/// `load` reads then is sent on.
pub fn start(path: PathBuf, watch: bool, load: Load) -> Reloads {
    let (send, reloads) = mpsc::channel(1);
    tokio::spawn(async move {
        let mut requests = ReloadRequests::listen();
        let mut seen = std::fs::read(&path).ok();
        let mut ticks = tokio::time::interval(WATCH_PERIOD);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let why = tokio::select! {
                Some(()) = async { requests.as_mut()?.next().await } => RELOAD_REQUEST,
                _ = ticks.tick(), if watch => {
                    let now = std::fs::read(&path).ok();
                    if now == seen {
                        continue;
                    }
                    seen = now;
                    "the file changed"
                }
                () = send.closed() => return,
            };
            match load() {
                Ok(config) => {
                    tracing::info!(file = %path.display(), reason = why, "reloading the config");
                    if send.send(config).await.is_err() {
                        return;
                    }
                }
                Err(problems) => {
                    for problem in &problems {
                        tracing::error!(file = %path.display(), %problem, "the config was not reloaded");
                    }
                    tracing::error!(file = %path.display(), count = problems.len(), "the config has problems, so the running one stays: {RELOAD_AGAIN}");
                }
            }
        }
    });
    reloads
}

/// Flat mode's spec of a reloaded `config`, made as `flat` was; `Err` says why the config
/// cannot be served flat.
pub fn flat_of(flat: Option<&FlatSpec>, config: &Config) -> Result<Option<Arc<FlatSpec>>, String> {
    flat.map(|flat| flat.rebuilt(config).map(Arc::new))
        .transpose()
}
