//! The carbon report: per-location data status and per-seed expected intensity, for the metrics
//! and the logs, and the status changes worth a warning.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};

use super::assess::{Assessment, Neutral};
use super::settings::CarbonSettings;
use crate::snapshot::Snapshot;

impl CarbonSettings {
    /// Per-location data status and per-seed expected intensity at `now`, for the metrics
    /// `gardener_scheduler_carbon_data_stale{location}` and
    /// `gardener_scheduler_seed_carbon_intensity{seed}`. Costs O(seeds + ConfigMaps).
    pub fn report(&self, snap: &Snapshot, now: DateTime<Utc>) -> CarbonReport {
        let sources = snap.carbon_sources();
        let mut cache: BTreeMap<(String, String), Assessment> = BTreeMap::new();
        let mut by_location: BTreeMap<String, Assessment> = BTreeMap::new();
        let mut seeds = Vec::with_capacity(snap.seeds().len());
        for seed in snap.seeds() {
            let location = self.location_of(seed).to_string();
            let a = cache
                .entry((location.clone(), seed.region.clone()))
                .or_insert_with(|| self.assess(&location, &seed.region, sources, now))
                .clone();
            seeds.push(SeedReport {
                seed: seed.name.to_string(),
                detail: a.detail(&location, self.horizon),
                expected: a.value(),
                location: location.clone(),
            });
            by_location.entry(location).or_insert(a);
        }
        for location in sources.locations() {
            if !by_location.contains_key(location) {
                let a = self.assess(location, location, sources, now);
                by_location.insert(location.clone(), a);
            }
        }
        let locations = by_location
            .into_iter()
            .map(|(location, a)| LocationReport {
                status: DataStatus::of(&a),
                age: match &a {
                    Assessment::Expected { origin, .. } => origin.age(),
                    Assessment::Neutral(Neutral::Stale { origin, .. })
                    | Assessment::Neutral(Neutral::NotCovered { origin, .. }) => origin.age(),
                    Assessment::Neutral(_) => None,
                },
                detail: a.detail(&location, self.horizon),
                location,
            })
            .collect();
        let unattributed = sources
            .iter()
            .filter(|s| s.locations.is_empty() && s.removed_at.is_none())
            .filter_map(|s| {
                s.data
                    .forecasts(&self.config_map_key)
                    .err()
                    .map(|e| SourceProblem {
                        config_map: s.data.name.clone(),
                        error: e.to_string(),
                    })
            })
            .collect();
        CarbonReport {
            locations,
            seeds,
            unattributed,
        }
    }
}

/// A location's data, as far as metrics and logs care.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DataStatus {
    /// A forecast or a static value is used.
    Usable,
    /// No source knows the location.
    Missing,
    Stale,
    Malformed,
    /// The forecast does not cover `now`.
    NotCovered,
}

impl DataStatus {
    fn of(a: &Assessment) -> DataStatus {
        match a {
            Assessment::Expected { .. } => DataStatus::Usable,
            Assessment::Neutral(Neutral::NoForecast { .. }) => DataStatus::Missing,
            Assessment::Neutral(Neutral::Stale { .. }) => DataStatus::Stale,
            Assessment::Neutral(Neutral::Malformed { .. }) => DataStatus::Malformed,
            Assessment::Neutral(Neutral::NotCovered { .. }) => DataStatus::NotCovered,
        }
    }

    /// The value of `gardener_scheduler_carbon_data_stale{location}`: every status that scores
    /// neutral counts.
    pub fn is_stale(self) -> bool {
        self != DataStatus::Usable
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LocationReport {
    pub location: String,
    pub status: DataStatus,
    /// `now` minus the exporter's heartbeat, when known.
    pub age: Option<TimeDelta>,
    /// The same text the explanation shows.
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SeedReport {
    pub seed: String,
    pub location: String,
    /// gCO2eq/kWh; `None` when the seed scores neutral.
    pub expected: Option<f64>,
    pub detail: String,
}

/// A malformed ConfigMap that never served a location, so no location can show it.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceProblem {
    pub config_map: String,
    pub error: String,
}

/// Everything the controller exports about carbon data at one instant; locations and seeds are
/// ordered by name.
#[derive(Clone, Debug, PartialEq)]
pub struct CarbonReport {
    pub locations: Vec<LocationReport>,
    pub seeds: Vec<SeedReport>,
    pub unattributed: Vec<SourceProblem>,
}

/// A location whose status changed since the previous report.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusChange {
    pub location: String,
    /// `None` the first time the location is seen.
    pub from: Option<DataStatus>,
    pub to: DataStatus,
    pub detail: String,
}

/// Remembers each location's last status so that a warning is logged once per change, not once
/// per decision. Ages are not part of the comparison; a different malformation is.
#[derive(Clone, Debug, Default)]
pub struct StatusChanges {
    last: BTreeMap<String, (DataStatus, Option<String>)>,
}

impl StatusChanges {
    /// The changes since the previous call. A location first seen as usable is no change.
    pub fn update(&mut self, report: &CarbonReport) -> Vec<StatusChange> {
        let mut changes = Vec::new();
        let mut next = BTreeMap::new();
        for l in &report.locations {
            let key = (
                l.status,
                (l.status == DataStatus::Malformed).then(|| l.detail.clone()),
            );
            let prev = self.last.get(&l.location);
            let changed = match prev {
                None => l.status != DataStatus::Usable,
                Some(p) => *p != key,
            };
            if changed {
                changes.push(StatusChange {
                    location: l.location.clone(),
                    from: prev.map(|p| p.0),
                    to: l.status,
                    detail: l.detail.clone(),
                });
            }
            next.insert(l.location.clone(), key);
        }
        self.last = next;
        changes
    }
}
