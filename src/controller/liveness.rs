//! Whether the watch feeds are live. A feed whose watch delivers nothing — no event, no
//! bookmark, not even the clean end a healthy server sends every `WATCH_TIMEOUT` — for
//! [`FEED_SILENCE`] is listed again from scratch (a list answers where a half-open watch
//! connection does not); one silent for [`FEED_STALE`] makes `/readyz` fail; and one that got
//! nothing at all, neither list nor watch, for [`FEED_STALE`] makes the leader give up its
//! lease (and a standby not campaign), so that a replica that can see the landscape binds.

use std::time::Duration;

use super::stack::WATCH_TIMEOUT;
use super::{Shared, WatchedKind};

/// A feed's watch silent this long is dropped and the kind listed again.
pub const FEED_SILENCE: Duration = Duration::from_secs(WATCH_TIMEOUT.as_secs() + 10);

/// A feed silent this long is stale: `/readyz` fails; with nothing at all arriving, the
/// process gives up leadership.
pub const FEED_STALE: Duration = Duration::from_secs(60);

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
    /// [`FEED_STALE`].
    pub(super) fn stale_feeds(&self) -> Vec<String> {
        self.feed_ages()
            .into_iter()
            .filter(|(_, a)| a.watch > FEED_STALE)
            .map(|(k, a)| format!("{} (watch silent for {}s)", k.as_str(), a.watch.as_secs()))
            .collect()
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
