//! Carbon-data metrics and logs. A broken exporter must be visible without reading decisions:
//! its seeds silently score neutral (50) otherwise.
//!
//! The report ([`CarbonSettings::report`]) is recomputed every housekeeping tick and whenever a
//! carbon-intensity ConfigMap changes, because staleness is a matter of time as much as of
//! events. Warnings are logged once per change of a location's status, not once per decision.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64};

use crate::carbon::{CarbonReport, DataStatus, StatusChanges};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tracing::{info, warn};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LocationLabels {
    pub location: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CarbonSeedLabels {
    pub seed: String,
}

/// `gardener_scheduler_carbon_data_stale{location}` and
/// `gardener_scheduler_seed_carbon_intensity{seed}`.
pub struct CarbonMetrics {
    pub data_stale: Family<LocationLabels, Gauge<i64, AtomicI64>>,
    pub seed_intensity: Family<CarbonSeedLabels, Gauge<f64, AtomicU64>>,
    last: Mutex<Last>,
}

/// What the previous report showed, to remove vanished series and to log changes once.
#[derive(Default)]
struct Last {
    statuses: StatusChanges,
    locations: BTreeSet<String>,
    seeds: BTreeSet<String>,
    /// malformed ConfigMaps that serve no location: (namespace/name, error)
    problems: BTreeSet<(String, String)>,
}

impl CarbonMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let data_stale = Family::<LocationLabels, Gauge<i64, AtomicI64>>::default();
        registry.register(
            "carbon_data_stale",
            "1 while a location's carbon-intensity data is missing, stale, malformed or does not cover now (its seeds score neutral), else 0",
            data_stale.clone(),
        );
        let seed_intensity = Family::<CarbonSeedLabels, Gauge<f64, AtomicU64>>::default();
        registry.register(
            "seed_carbon_intensity",
            "Expected carbon intensity of each seed's grid in gCO2eq/kWh, as CarbonIntensity scores it; absent while the seed scores neutral",
            seed_intensity.clone(),
        );
        CarbonMetrics {
            data_stale,
            seed_intensity,
            last: Mutex::default(),
        }
    }

    /// Sets the gauges from `report`, drops series of locations and seeds no longer reported,
    /// and logs what changed since the previous report.
    pub fn update(&self, report: &CarbonReport) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());

        let locations: BTreeSet<String> = report
            .locations
            .iter()
            .map(|l| l.location.clone())
            .collect();
        for l in &report.locations {
            self.data_stale
                .get_or_create(&LocationLabels {
                    location: l.location.clone(),
                })
                .set(l.status.is_stale() as i64);
        }
        for gone in last.locations.difference(&locations) {
            self.data_stale.remove(&LocationLabels {
                location: gone.clone(),
            });
        }
        last.locations = locations;

        let seeds: BTreeSet<String> = report
            .seeds
            .iter()
            .filter(|s| s.expected.is_some())
            .map(|s| s.seed.clone())
            .collect();
        for s in &report.seeds {
            if let Some(v) = s.expected {
                self.seed_intensity
                    .get_or_create(&CarbonSeedLabels {
                        seed: s.seed.clone(),
                    })
                    .set(v);
            }
        }
        for gone in last.seeds.difference(&seeds) {
            self.seed_intensity
                .remove(&CarbonSeedLabels { seed: gone.clone() });
        }
        last.seeds = seeds;

        for c in last.statuses.update(report) {
            if c.to == DataStatus::Usable {
                info!(location = %c.location, detail = %c.detail, "carbon-intensity data usable again");
            } else {
                warn!(location = %c.location, status = ?c.to, detail = %c.detail,
                      "carbon-intensity data not usable; seeds in this location score neutral");
            }
        }
        let problems: BTreeSet<(String, String)> = report
            .unattributed
            .iter()
            .map(|p| (p.config_map.clone(), p.error.clone()))
            .collect();
        for (config_map, error) in problems.difference(&last.problems) {
            warn!(config_map = %config_map, error = %error,
                  "carbon-intensity ConfigMap is malformed and serves no location");
        }
        last.problems = problems;
    }
}

#[cfg(test)]
mod tests {
    use crate::carbon::CarbonSettings;
    use crate::controller::metrics::carbon::*;
    use crate::fixtures::{CarbonConfigMapBuilder, SeedBuilder};
    use crate::snapshot::Snapshot;
    use chrono::{DateTime, TimeDelta, Utc};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn encode(registry: &Registry) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
        out
    }

    fn has(text: &str, line: &str) -> bool {
        text.lines().any(|l| l == line)
    }

    #[test]
    fn usable_stale_and_unknown_locations_are_exported_and_neutral_seeds_have_no_intensity() {
        let mut snap = Snapshot::new();
        for (seed, location) in [("clean", "SE"), ("old", "DE"), ("unknown", "XX")] {
            snap.upsert_seed(
                &SeedBuilder::new(seed)
                    .label("carbon.gardener.cloud/location", location)
                    .build(),
            );
        }
        snap.upsert_config_map(
            &CarbonConfigMapBuilder::new("carbon-se")
                .points("SE", "2026-12-01T00:00:00Z", 60, 48, 35.0)
                .build(),
        );
        snap.upsert_config_map(
            &CarbonConfigMapBuilder::new("carbon-de")
                .points("DE", "2026-11-20T00:00:00Z", 60, 2, 400.0)
                .build(),
        );
        let report = CarbonSettings::default().report(&snap, t("2026-12-01T06:00:00Z"));
        let mut registry = Registry::with_prefix("gardener_scheduler");
        let m = CarbonMetrics::register(&mut registry);
        m.update(&report);
        let text = encode(&registry);
        for line in [
            "gardener_scheduler_carbon_data_stale{location=\"SE\"} 0",
            "gardener_scheduler_carbon_data_stale{location=\"DE\"} 1",
            "gardener_scheduler_carbon_data_stale{location=\"XX\"} 1",
            "gardener_scheduler_seed_carbon_intensity{seed=\"clean\"} 35.0",
        ] {
            assert!(has(&text, line), "missing {line:?} in:\n{text}");
        }
        for seed in ["old", "unknown"] {
            assert!(
                !text.contains(&format!("seed_carbon_intensity{{seed=\"{seed}\"}}")),
                "{seed} scores neutral:\n{text}"
            );
        }
    }

    #[test]
    fn series_of_seeds_that_turn_neutral_or_vanish_are_removed() {
        let mut snap = Snapshot::new();
        for seed in ["a", "b"] {
            snap.upsert_seed(
                &SeedBuilder::new(seed)
                    .label("carbon.gardener.cloud/location", "SE")
                    .build(),
            );
        }
        snap.upsert_config_map(
            &CarbonConfigMapBuilder::new("carbon-se")
                .points("SE", "2026-12-01T00:00:00Z", 60, 48, 35.0)
                .build(),
        );
        let settings = CarbonSettings::default();
        let now = t("2026-12-01T06:00:00Z");
        let mut registry = Registry::with_prefix("gardener_scheduler");
        let m = CarbonMetrics::register(&mut registry);
        m.update(&settings.report(&snap, now));
        assert!(has(
            &encode(&registry),
            "gardener_scheduler_seed_carbon_intensity{seed=\"b\"} 35.0"
        ));

        snap.remove_seed("b");
        snap.remove_carbon_config_map("kube-system", "carbon-se", now);
        // within the grace period the deleted ConfigMap still counts
        m.update(&settings.report(&snap, now + TimeDelta::minutes(1)));
        let text = encode(&registry);
        assert!(!text.contains("seed=\"b\""), "{text}");
        assert!(has(
            &text,
            "gardener_scheduler_seed_carbon_intensity{seed=\"a\"} 35.0"
        ));
        // after it, the location has no data: stale, and the seed is neutral
        m.update(&settings.report(&snap, now + TimeDelta::minutes(6)));
        let text = encode(&registry);
        assert!(!text.contains("seed_carbon_intensity{"), "{text}");
        assert!(
            has(
                &text,
                "gardener_scheduler_carbon_data_stale{location=\"SE\"} 1"
            ),
            "{text}"
        );
    }
}
