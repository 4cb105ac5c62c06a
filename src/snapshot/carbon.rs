//! Carbon-intensity ConfigMaps as the decision sees them.
//!
//! The exporter deletes and recreates its immutable ConfigMap on every refresh. A removal is
//! therefore only recorded (`removed_at`); whether the data still counts is decided per decision
//! from `now` and the priority's grace period, so a few seconds without the object do not
//! change any score.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, TimeDelta, Utc};

use crate::api::{ConfigMap, LABEL_SCHEDULING_PURPOSE, PURPOSE_CARBON_INTENSITY};
use crate::forecast::ExporterData;

/// Removed ConfigMaps are forgotten after this long, whatever grace a priority configures
/// (the priority's `removalGracePeriod` may not exceed it).
pub const MAX_REMOVED_RETENTION: TimeDelta = TimeDelta::hours(24);

/// One exporter ConfigMap.
#[derive(Clone, Debug, PartialEq)]
pub struct CarbonSource {
    pub data: ExporterData,
    /// Locations of the latest version that had a parsable payload, so that a malformed update
    /// still neutralises the locations it used to serve instead of leaving them unattributed.
    pub locations: BTreeSet<String>,
    /// When the ConfigMap was deleted; its data counts during the grace period.
    pub removed_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, Default)]
pub struct CarbonSources {
    sources: BTreeMap<(String, String), CarbonSource>,
    by_location: BTreeMap<String, BTreeSet<(String, String)>>,
}

/// Is this ConfigMap a carbon-intensity forecast (label
/// `scheduling.gardener.cloud/purpose: carbon-intensity`, any namespace)?
pub fn is_carbon_config_map(cm: &ConfigMap) -> bool {
    cm.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(LABEL_SCHEDULING_PURPOSE))
        .is_some_and(|v| v == PURPOSE_CARBON_INTENSITY)
}

fn key_of(cm: &ConfigMap) -> (String, String) {
    (
        cm.metadata.namespace.clone().unwrap_or_default(),
        cm.metadata.name.clone().unwrap_or_default(),
    )
}

impl CarbonSources {
    /// Parses and stores a ConfigMap; a recreated ConfigMap replaces its removed predecessor.
    pub fn upsert(&mut self, cm: &ConfigMap) {
        let data = ExporterData::from_config_map(cm);
        let locations = data.locations().cloned().collect();
        self.upsert_parsed(key_of(cm), data, locations);
    }

    /// Stores a ConfigMap's parsed payload and the locations it serves under
    /// `(namespace, name)`; a recreated ConfigMap replaces its removed predecessor. A payload
    /// that serves no location (malformed) keeps the locations of the version before.
    pub fn upsert_parsed(
        &mut self,
        key: (String, String),
        data: ExporterData,
        mut locations: BTreeSet<String>,
    ) {
        if locations.is_empty()
            && let Some(old) = self.sources.get_mut(&key)
        {
            locations = std::mem::take(&mut old.locations);
        }
        self.sources.insert(
            key,
            CarbonSource {
                data,
                locations,
                removed_at: None,
            },
        );
        self.reindex();
    }

    /// Records a deletion at `now`; the data is kept for the grace period. Also forgets
    /// ConfigMaps removed more than [`MAX_REMOVED_RETENTION`] before `now`.
    pub fn remove(&mut self, namespace: &str, name: &str, now: DateTime<Utc>) {
        if let Some(s) = self
            .sources
            .get_mut(&(namespace.to_string(), name.to_string()))
            && s.removed_at.is_none()
        {
            s.removed_at = Some(now);
        }
        self.sources.retain(|_, s| {
            s.removed_at
                .is_none_or(|at| now - at <= MAX_REMOVED_RETENTION)
        });
        self.reindex();
    }

    /// Drops a ConfigMap at once (it lost its label: no longer a forecast).
    pub fn forget(&mut self, namespace: &str, name: &str) {
        if self
            .sources
            .remove(&(namespace.to_string(), name.to_string()))
            .is_some()
        {
            self.reindex();
        }
    }

    fn reindex(&mut self) {
        self.by_location.clear();
        for (key, s) in &self.sources {
            for loc in &s.locations {
                self.by_location
                    .entry(loc.clone())
                    .or_default()
                    .insert(key.clone());
            }
        }
    }

    /// The ConfigMaps that serve (or last served) a location, ordered by namespace/name.
    pub fn for_location<'a>(&'a self, location: &str) -> impl Iterator<Item = &'a CarbonSource> {
        self.by_location
            .get(location)
            .into_iter()
            .flatten()
            .filter_map(|k| self.sources.get(k))
    }

    /// Every stored ConfigMap, ordered by namespace/name.
    pub fn iter(&self) -> impl Iterator<Item = &CarbonSource> {
        self.sources.values()
    }

    /// Every location some ConfigMap serves or last served.
    pub fn locations(&self) -> impl Iterator<Item = &String> {
        self.by_location.keys()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::CarbonConfigMapBuilder;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn a_removal_is_recorded_not_applied() {
        let mut c = CarbonSources::default();
        c.upsert(
            &CarbonConfigMapBuilder::new("carbon-a")
                .point("a", "2026-12-01T00:00:00Z", 60, 100.0)
                .build(),
        );
        c.remove("kube-system", "carbon-a", t("2026-12-01T00:10:00Z"));
        let s: Vec<_> = c.for_location("a").collect();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].removed_at, Some(t("2026-12-01T00:10:00Z")));
        // A second delete event does not move the removal time.
        c.remove("kube-system", "carbon-a", t("2026-12-01T00:20:00Z"));
        assert_eq!(
            c.for_location("a").next().unwrap().removed_at,
            Some(t("2026-12-01T00:10:00Z"))
        );
    }

    #[test]
    fn recreating_a_removed_configmap_replaces_it() {
        let mut c = CarbonSources::default();
        let b =
            CarbonConfigMapBuilder::new("carbon-a").point("a", "2026-12-01T00:00:00Z", 60, 100.0);
        c.upsert(&b.clone().build());
        c.remove("kube-system", "carbon-a", t("2026-12-01T00:10:00Z"));
        c.upsert(&b.build());
        let s: Vec<_> = c.for_location("a").collect();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].removed_at, None);
    }

    #[test]
    fn removed_configmaps_are_forgotten_after_the_retention() {
        let mut c = CarbonSources::default();
        for name in ["old", "new"] {
            c.upsert(
                &CarbonConfigMapBuilder::new(name)
                    .point(name, "2026-12-01T00:00:00Z", 60, 100.0)
                    .build(),
            );
        }
        c.remove("kube-system", "old", t("2026-12-01T00:00:00Z"));
        c.remove("kube-system", "new", t("2026-12-02T00:00:00Z"));
        assert_eq!(c.for_location("old").count(), 1, "exactly 24h: kept");
        c.remove("kube-system", "new", t("2026-12-02T00:00:01Z"));
        assert_eq!(c.for_location("old").count(), 0);
        assert_eq!(c.for_location("new").count(), 1);
    }

    #[test]
    fn a_malformed_update_keeps_the_locations_it_served() {
        let mut c = CarbonSources::default();
        c.upsert(
            &CarbonConfigMapBuilder::new("carbon-a")
                .point("a", "2026-12-01T00:00:00Z", 60, 100.0)
                .build(),
        );
        c.upsert(
            &CarbonConfigMapBuilder::new("carbon-a")
                .raw("data", "[oops")
                .build(),
        );
        let s: Vec<_> = c.for_location("a").collect();
        assert_eq!(s.len(), 1);
        assert!(s[0].data.forecasts("data").is_err());
    }

    #[test]
    fn a_configmap_moving_to_another_location_leaves_the_old_one() {
        let mut c = CarbonSources::default();
        c.upsert(
            &CarbonConfigMapBuilder::new("carbon")
                .point("a", "2026-12-01T00:00:00Z", 60, 100.0)
                .build(),
        );
        c.upsert(
            &CarbonConfigMapBuilder::new("carbon")
                .point("b", "2026-12-01T00:00:00Z", 60, 100.0)
                .build(),
        );
        assert_eq!(c.for_location("a").count(), 0);
        assert_eq!(c.locations().collect::<Vec<_>>(), ["b"]);
    }
}
