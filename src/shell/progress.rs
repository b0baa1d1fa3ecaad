//! Progress for people at a terminal: `call` draws the child's progress notifications as a bar,
//! `check` a spinner per server while it starts. Drawn on stderr, and only when stderr is a
//! terminal: a pipe, a file or a CI log gets nothing.

use std::{io::IsTerminal, sync::Arc, time::Duration};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};
use tokio::{sync::mpsc, task::JoinHandle};

use crate::{
    children::{CurrentToken, ProgressOut, ProgressTarget},
    toolboxes::{ServerSlot, ServerState},
};

const TICK: Duration = Duration::from_millis(100);
/// The scale of a bar's length: progress values are fractional.
const STEPS: f64 = 1000.0;

fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A call's progress bar; nothing when stderr is not a terminal.
pub(crate) struct CallProgress {
    bar: ProgressBar,
    drawing: JoinHandle<()>,
}

impl CallProgress {
    /// The bar for a call of `label`, and where the call's progress goes.
    pub(crate) fn start(label: &str) -> Option<(CallProgress, ProgressTarget)> {
        if !on_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(spinner_style());
        bar.set_prefix(label.to_owned());
        bar.enable_steady_tick(TICK);
        let (sender, mut received) = mpsc::unbounded_channel::<ProgressNotificationParam>();
        let drawn = bar.clone();
        let drawing = tokio::spawn(async move {
            while let Some(progress) = received.recv().await {
                if let Some(total) = progress.total.filter(|total| *total > 0.0) {
                    if drawn.length().is_none() {
                        drawn.set_style(bar_style());
                    }
                    drawn.set_length((total * STEPS) as u64);
                }
                drawn.set_position((progress.progress * STEPS) as u64);
                drawn.set_message(progress.message.unwrap_or_default());
            }
        });
        let target = ProgressTarget {
            out: ProgressOut::Watch(sender),
            token: CurrentToken::new(Some(ProgressToken(NumberOrString::Number(0)))),
        };
        Some((CallProgress { bar, drawing }, target))
    }

    /// Takes the bar off the terminal before the result is printed.
    pub(crate) fn finish(self) {
        self.drawing.abort();
        self.bar.finish_and_clear();
    }
}

/// A spinner per server while `check` starts them, each ending with its start-up time.
pub(crate) struct StartsShown {
    lines: MultiProgress,
    watching: JoinHandle<()>,
}

impl StartsShown {
    /// Shows `servers` (label, slot) until `finish`; nothing when stderr is not a terminal.
    pub(crate) fn start(servers: Vec<(String, Arc<ServerSlot>)>) -> Option<StartsShown> {
        if !on_terminal() {
            return None;
        }
        let lines = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let shown: Vec<(ProgressBar, Arc<ServerSlot>)> = servers
            .into_iter()
            .map(|(label, slot)| {
                let spinner = lines.add(ProgressBar::new_spinner());
                spinner.set_style(spinner_style());
                spinner.set_prefix(label);
                spinner.set_message("starting");
                spinner.enable_steady_tick(TICK);
                (spinner, slot)
            })
            .collect();
        let watching = tokio::spawn(async move {
            loop {
                for (spinner, slot) in &shown {
                    if spinner.is_finished() {
                        continue;
                    }
                    let done = match slot.state() {
                        ServerState::Ready(child) => {
                            format!("ready in {} ms", child.startup.as_millis())
                        }
                        ServerState::Failed(_) => "failed".to_owned(),
                        _ => continue,
                    };
                    spinner.set_style(done_style());
                    spinner.finish_with_message(done);
                }
                tokio::time::sleep(TICK).await;
            }
        });
        Some(StartsShown { lines, watching })
    }

    /// Clears the spinners: the table that follows has every server's outcome.
    pub(crate) fn finish(self) {
        self.watching.abort();
        let _ = self.lines.clear();
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix} {msg} {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn done_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {percent}% {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}
