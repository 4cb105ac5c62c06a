//! How long since each feed got anything, and since its watch did: what `/readyz`, the
//! leader election and `gardener_scheduler_feed_last_activity_seconds` read (the limits are in
//! [`crate::controller::liveness`]).

use crate::controller::cache::WatchedKind;
use crate::controller::liveness::{FEED_SILENCE, FEED_STALE, FeedAges};
use crate::controller::shared::Shared;

impl Shared {
    /// Starts tracking `kind`'s feed at `path` (its collection's URL path), once it has listed.
    pub(in crate::controller) fn track_feed(&self, kind: WatchedKind, path: &str) {
        let mut feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        if let std::collections::hash_map::Entry::Vacant(e) = feeds.entry(kind) {
            self.activity.register(path);
            self.metrics.watch_tracked(kind.as_str());
            e.insert(path.to_string());
        }
    }

    /// The ages of every tracked feed, in the order of [`WatchedKind::ALL`].
    pub(in crate::controller) fn feed_ages(&self) -> Vec<(WatchedKind, FeedAges)> {
        WatchedKind::ALL
            .iter()
            .filter_map(|k| Some((*k, self.feed_age(*k)?)))
            .collect()
    }

    /// `kind`'s ages, if tracked.
    pub(in crate::controller) fn feed_age(&self, kind: WatchedKind) -> Option<FeedAges> {
        let feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        let (any, watch) = self.activity.ages(feeds.get(&kind)?)?;
        Some(FeedAges { any, watch })
    }

    /// What makes this process not ready: feeds whose watch has been silent for
    /// [`FEED_STALE`]. A feed listing again after its server ended a healthy watch (410 Gone)
    /// is not stale while its pages keep arriving (each within [`FEED_SILENCE`]): at landscape
    /// scale such a list takes longer than [`FEED_STALE`], and its watch counts as live again
    /// from the list's end. A list that replaces a silent watch gets no such grace.
    pub(in crate::controller) fn stale_feeds(&self) -> Vec<String> {
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
    pub(in crate::controller) fn note_relisting(&self, kind: WatchedKind, listing: bool) -> bool {
        let mut relisting = self.relisting.lock().unwrap_or_else(|e| e.into_inner());
        if listing {
            !relisting.insert(kind)
        } else {
            relisting.remove(&kind)
        }
    }

    /// Why this process should not lead, if it should not: a feed that has received nothing
    /// at all, neither a list nor a watch, for [`FEED_STALE`].
    pub(in crate::controller) fn unfit_to_lead(&self) -> Option<String> {
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
    pub(in crate::controller) fn refresh_feed_metrics(&self) {
        for (kind, ages) in self.feed_ages() {
            self.metrics
                .feed_last_activity
                .get_or_create(&crate::controller::metrics::KindLabels {
                    kind: kind.as_str().into(),
                })
                .set(ages.watch.as_secs_f64());
        }
    }
}
