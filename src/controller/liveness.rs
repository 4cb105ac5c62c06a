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

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::stack::WATCH_TIMEOUT;
use super::{Shared, WatchedKind};

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

impl Shared {
    /// Starts tracking `kind`'s feed at `path` (its collection's URL path), once it has listed.
    pub(super) fn track_feed(&self, kind: WatchedKind, path: &str) {
        let mut feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        if let std::collections::hash_map::Entry::Vacant(e) = feeds.entry(kind) {
            self.activity.register(path);
            self.metrics.watch_tracked(kind.as_str());
            e.insert(path.to_string());
        }
    }

    /// The ages of every tracked feed, in the order of [`WatchedKind::ALL`].
    pub(super) fn feed_ages(&self) -> Vec<(WatchedKind, FeedAges)> {
        WatchedKind::ALL
            .iter()
            .filter_map(|k| Some((*k, self.feed_age(*k)?)))
            .collect()
    }

    /// `kind`'s ages, if tracked.
    pub(super) fn feed_age(&self, kind: WatchedKind) -> Option<FeedAges> {
        let feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        let (any, watch) = self.activity.ages(feeds.get(&kind)?)?;
        Some(FeedAges { any, watch })
    }

    /// What makes this process not ready: feeds whose watch has been silent for
    /// [`FEED_STALE`]. A feed listing again after its server ended a healthy watch (410 Gone)
    /// is not stale while its pages keep arriving (each within [`FEED_SILENCE`]): at landscape
    /// scale such a list takes longer than [`FEED_STALE`], and its watch counts as live again
    /// from the list's end. A list that replaces a silent watch gets no such grace.
    pub(super) fn stale_feeds(&self) -> Vec<String> {
        let relisting = self
            .relisting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        self.feed_ages()
            .into_iter()
            .filter(|(k, a)| {
                a.watch > FEED_STALE && !(relisting.contains(k) && a.any <= FEED_SILENCE)
            })
            .map(|(k, a)| format!("{} (watch silent for {}s)", k.as_str(), a.watch.as_secs()))
            .collect()
    }

    /// Notes that `kind` lists again after a healthy watch (`true`), or that its list ended
    /// (`false`); returns whether it was so listing.
    pub(super) fn note_relisting(&self, kind: WatchedKind, listing: bool) -> bool {
        let mut relisting = self.relisting.lock().unwrap_or_else(|e| e.into_inner());
        if listing {
            !relisting.insert(kind)
        } else {
            relisting.remove(&kind)
        }
    }

    /// Why this process should not lead, if it should not: a feed that has received nothing
    /// at all, neither a list nor a watch, for [`FEED_STALE`].
    pub(super) fn unfit_to_lead(&self) -> Option<String> {
        let dead: Vec<String> = self
            .feed_ages()
            .into_iter()
            .filter(|(_, a)| a.any > FEED_STALE)
            .map(|(k, a)| format!("{} ({}s)", k.as_str(), a.any.as_secs()))
            .collect();
        (!dead.is_empty()).then(|| {
            format!(
                "no list or watch answer for these kinds: {}",
                dead.join(", ")
            )
        })
    }

    /// Sets the per-feed gauges (before each scrape).
    pub(super) fn refresh_feed_metrics(&self) {
        for (kind, ages) in self.feed_ages() {
            self.metrics
                .feed_last_activity
                .get_or_create(&super::metrics::KindLabels {
                    kind: kind.as_str().into(),
                })
                .set(ages.watch.as_secs_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
