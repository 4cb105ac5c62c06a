//! Whether the watch feeds are live. A feed whose watch delivers nothing — no event, no
//! bookmark, not even the clean end a healthy server sends every `WATCH_TIMEOUT` — for
//! [`FEED_SILENCE`] is listed again from scratch (a list answers where a half-open watch
//! connection does not); one silent for [`FEED_STALE`] makes `/readyz` fail; and one that got
//! nothing at all, neither list nor watch, for [`FEED_STALE`] makes the leader give up its
//! lease (and a standby not campaign), so that a replica that can see the landscape binds.
//!
//! The scheduling runtime beats a [`Heartbeat`] every [`HEARTBEAT`]; `/healthz`, served on the
//! control thread, fails once it has not beaten for [`HEARTBEAT_STALE`] (or longer, with a
//! long `decisionBudget`): a runtime that runs no task any more is restarted.

use crate::controller::client::stack::WATCH_TIMEOUT;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A feed's watch silent this long is dropped and the kind listed again.
pub const FEED_SILENCE: Duration = Duration::from_secs(WATCH_TIMEOUT.as_secs() + 10);

/// A feed silent this long is stale: `/readyz` fails; with nothing at all arriving, the
/// process gives up leadership.
pub const FEED_STALE: Duration = Duration::from_secs(60);

/// How often the scheduling runtime beats.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// The least time without a beat after which `/healthz` fails.
pub const HEARTBEAT_STALE: Duration = Duration::from_secs(60);

/// When the scheduling runtime last ran its heartbeat task (on the real clock).
#[derive(Debug)]
pub struct Heartbeat {
    start: std::time::Instant,
    /// milliseconds after `start`
    last: AtomicU64,
    stale_after: Duration,
}

impl Heartbeat {
    /// Stale after [`HEARTBEAT_STALE`], or half a minute more than a decision may take.
    pub fn new(decision_budget: Duration) -> Heartbeat {
        Heartbeat {
            start: std::time::Instant::now(),
            last: AtomicU64::new(0),
            stale_after: HEARTBEAT_STALE.max(decision_budget + Duration::from_secs(30)),
        }
    }

    pub fn beat(&self) {
        let now = self.start.elapsed().as_millis() as u64;
        self.last.store(now, Ordering::Relaxed);
    }

    /// How long the runtime has not beaten, when that is longer than it may be.
    pub fn stale(&self) -> Option<Duration> {
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        let age = self.start.elapsed().saturating_sub(last);
        (age > self.stale_after).then_some(age)
    }
}

/// How long since a feed got anything, and since its watch did.
#[derive(Clone, Copy, Debug)]
pub struct FeedAges {
    pub any: Duration,
    pub watch: Duration,
}

#[cfg(test)]
mod tests {
    use crate::controller::liveness::*;

    #[test]
    fn a_heartbeat_goes_stale_without_beats_and_fresh_with_one() {
        let heartbeat = Heartbeat {
            stale_after: Duration::from_millis(30),
            ..Heartbeat::new(Duration::ZERO)
        };
        assert_eq!(heartbeat.stale(), None);
        std::thread::sleep(Duration::from_millis(60));
        assert!(
            heartbeat
                .stale()
                .is_some_and(|age| age >= Duration::from_millis(60))
        );
        heartbeat.beat();
        assert_eq!(heartbeat.stale(), None);
    }

    #[test]
    fn a_long_decision_budget_lengthens_what_counts_as_stale() {
        assert_eq!(
            Heartbeat::new(Duration::from_secs(5)).stale_after,
            HEARTBEAT_STALE
        );
        assert_eq!(
            Heartbeat::new(Duration::from_secs(120)).stale_after,
            Duration::from_secs(150)
        );
    }
}
