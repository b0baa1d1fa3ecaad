//! What the system asks of toolshelf, the one place that knows each system's signals: to stop
//! (Unix: SIGINT, SIGTERM; Windows: Ctrl-C, Ctrl-Break, the console closing) and to read its
//! config again (Unix: SIGHUP; Windows has no such signal: `serve --watch` reloads there).

/// Resolves when the system asks toolshelf to stop.
pub async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut interrupt), Ok(mut terminate)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            tracing::warn!("cannot listen for signals; stop toolshelf by closing its stdin");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = interrupt.recv() => tracing::info!("SIGINT received"),
            _ = terminate.recv() => tracing::info!("SIGTERM received"),
        }
    }
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
        let (Ok(mut interrupt), Ok(mut break_), Ok(mut close)) =
            (ctrl_c(), ctrl_break(), ctrl_close())
        else {
            tracing::warn!("cannot listen for Ctrl-C; stop toolshelf by closing its stdin");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = interrupt.recv() => tracing::info!("Ctrl-C received"),
            _ = break_.recv() => tracing::info!("Ctrl-Break received"),
            _ = close.recv() => tracing::info!("the console is closing"),
        }
    }
}

/// The system's requests to read the config again, where it has them.
pub(crate) struct ReloadRequests {
    #[cfg(unix)]
    hangups: tokio::signal::unix::Signal,
}

impl ReloadRequests {
    /// Listens for them; `None` where the system has none or they cannot be listened for (said
    /// in the log).
    pub(crate) fn listen() -> Option<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::hangup()) {
                Ok(hangups) => Some(Self { hangups }),
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGHUP; the config is not reloaded on it");
                    None
                }
            }
        }
        #[cfg(not(unix))]
        None
    }

    /// The next request; `None` once no more can come.
    pub(crate) async fn next(&mut self) -> Option<()> {
        #[cfg(unix)]
        return self.hangups.recv().await;
        #[cfg(not(unix))]
        None
    }
}

/// The name of a reload request in the log: what the user sends.
pub(crate) const RELOAD_REQUEST: &str = "SIGHUP";

/// What to do when a reload found problems: the ways this system has to ask for another.
#[cfg(unix)]
pub(crate) const RELOAD_AGAIN: &str =
    "fix them, then save the file again (with --watch) or send SIGHUP";
#[cfg(not(unix))]
pub(crate) const RELOAD_AGAIN: &str =
    "fix them, then save the file again (serve --watch reloads on each save)";
