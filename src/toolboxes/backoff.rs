//! When a server that keeps failing may be started again. Starts happen only on demand (a call
//! or an open), never in a loop; after a failure the next start waits exponentially longer.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The wait after the second failure in a row; it doubles with each further one.
pub(crate) const FIRST_DELAY: Duration = Duration::from_secs(2);
/// The longest wait between two starts.
pub(crate) const MAX_DELAY: Duration = Duration::from_secs(300);
/// Failures further apart than this do not count as "in a row".
pub(crate) const WINDOW: Duration = Duration::from_secs(600);

/// Failures of one server and when it may start again.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    in_a_row: u32,
    last_failure: Option<Instant>,
    next_allowed: Option<Instant>,
    last_reason: String,
}

impl Backoff {
    /// A start failed or the child died: the first failure allows an immediate restart, each
    /// further one doubles the wait.
    pub(crate) fn failed(&mut self, now: Instant, reason: &str) {
        if self
            .last_failure
            .is_some_and(|last| now.duration_since(last) > WINDOW)
        {
            self.in_a_row = 0;
        }
        self.in_a_row += 1;
        self.last_failure = Some(now);
        self.last_reason = reason.to_owned();
        let delay = match self.in_a_row {
            0 | 1 => Duration::ZERO,
            n => FIRST_DELAY
                .saturating_mul(1 << (n - 2).min(16))
                .min(MAX_DELAY),
        };
        self.next_allowed = Some(now + delay);
    }

    /// The child answered a call: it works, so earlier failures no longer count.
    pub(crate) fn succeeded(&mut self) {
        self.in_a_row = 0;
        self.next_allowed = None;
    }

    /// Why a start is not allowed at `now`, if it is not.
    pub(crate) fn refusal(&self, now: Instant) -> Option<String> {
        let next_try = self.next_try(now)?;
        Some(format!(
            "the server failed {} times in a row and is marked failed; the last failure: {}\n{next_try}",
            self.in_a_row, self.last_reason,
        ))
    }

    /// How long from `now` until a start is allowed again.
    pub(crate) fn wait(&self, now: Instant) -> Duration {
        self.next_allowed
            .and_then(|next| next.checked_duration_since(now))
            .unwrap_or_default()
    }

    /// When the next start is allowed, if not at once.
    pub(crate) fn next_try(&self, now: Instant) -> Option<String> {
        let wait = self.next_allowed?.checked_duration_since(now)?;
        if wait.is_zero() {
            return None;
        }
        Some(format!(
            "toolshelf will start it again on the first call after {} UTC (in {:.0} s).",
            clock(SystemTime::now() + wait),
            wait.as_secs_f64().ceil(),
        ))
    }
}

/// `HH:MM:SS` of a wall-clock time, in UTC.
fn clock(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let day = seconds % 86_400;
    format!("{:02}:{:02}:{:02}", day / 3600, day % 3600 / 60, day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_failure_restarts_at_once_then_waits_double() {
        let start = Instant::now();
        let mut backoff = Backoff::default();
        backoff.failed(start, "crashed");
        assert_eq!(backoff.refusal(start), None);
        backoff.failed(start, "exit 1");
        let refusal = backoff.refusal(start).unwrap_or_default();
        assert!(refusal.contains("failed 2 times in a row"), "{refusal}");
        assert!(refusal.contains("the last failure: exit 1"), "{refusal}");
        assert!(refusal.contains("(in 2 s)"), "{refusal}");
        assert_eq!(backoff.refusal(start + FIRST_DELAY), None);
        backoff.failed(start + FIRST_DELAY, "exit 1");
        assert!(
            backoff
                .refusal(start + FIRST_DELAY)
                .unwrap_or_default()
                .contains("(in 4 s)")
        );
    }

    #[test]
    fn waits_are_capped_and_success_resets() {
        let now = Instant::now();
        let mut backoff = Backoff::default();
        for _ in 0..40 {
            backoff.failed(now, "x");
        }
        assert!(
            backoff
                .refusal(now)
                .unwrap_or_default()
                .contains("(in 300 s)")
        );
        backoff.succeeded();
        assert_eq!(backoff.refusal(now), None);
    }

    #[test]
    fn old_failures_do_not_count() {
        let now = Instant::now();
        let mut backoff = Backoff::default();
        backoff.failed(now, "x");
        backoff.failed(now + WINDOW + Duration::from_secs(1), "y");
        assert_eq!(backoff.refusal(now + WINDOW + Duration::from_secs(1)), None);
    }

    #[test]
    fn clock_is_utc_time_of_day() {
        assert_eq!(
            clock(UNIX_EPOCH + Duration::from_secs(86_400 + 3723)),
            "01:02:03"
        );
    }
}
