//! `LatencyDistance`: prefer seeds whose region is close to the shoot's region in expected
//! network latency, so that a shoot from a region without seeds lands on the nearest region
//! rather than on the one with the most similar name.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::region_distance::region_distance;
use crate::snapshot::Snapshot;
use crate::snapshot::estimate::{LatencySources, round_ms};
use crate::snapshot::latency::LatencyTable;

use super::framework::{Detail, Details, MAX_SCORE, Priority};
use crate::plugin::{
    DEFAULT_FALLBACK_FACTOR, DEFAULT_MAX_LATENCY_MS, LatencyArgs, NoOwnArgs, parse_args,
};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "LatencyDistance";

/// Arguments that build it, for the generated profiles of the tests.
pub const EXAMPLE: &str = "{maxLatencyMs: 300, fallbackFactor: 10}";

/// Looks latencies up in the configured matrix, then in the region ConfigMap of the shoot's
/// CloudProfile (distances read as milliseconds), then estimates them from the region
/// catalogue's great-circle distance, and only then falls back to the region-name distance
/// times `fallbackFactor`. Scores on an absolute scale: 0 ms scores 100, `maxLatencyMs` or more
/// scores 0, linear in between, so that scores mean the same for every shoot.
pub struct LatencyDistance {
    sources: LatencySources,
    max_latency_ms: f64,
    fallback_factor: f64,
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    let a: LatencyArgs<NoOwnArgs> = parse_args(args, path)?;
    let mut errors = Vec::new();
    let max_latency_ms = a.max_latency_ms(path, &mut errors);
    let fallback_factor = a.fallback_factor(path, &mut errors);
    let sources = a.sources(path, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Box::new(LatencyDistance {
        sources,
        max_latency_ms,
        fallback_factor,
    }))
}

impl LatencyDistance {
    /// A priority with only the given matrix as a source (tests, benchmarks).
    pub fn with_matrix(
        known: &BTreeMap<String, BTreeMap<String, f64>>,
        use_region_config_maps: bool,
    ) -> Self {
        Self {
            sources: LatencySources {
                matrix: Some(LatencyTable::new(known)),
                use_region_config_maps,
            },
            max_latency_ms: DEFAULT_MAX_LATENCY_MS,
            fallback_factor: DEFAULT_FALLBACK_FACTOR,
        }
    }
}

impl Priority for LatencyDistance {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The latency depends only on the seed's provider type and region: worked out (and
    /// explained) once per (provider type, region) among the seeds.
    fn raw(
        &self,
        cx: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        mut details: Details<'_>,
    ) -> Vec<f64> {
        // The shoot's row of each source, once per decision; each group is then an O(1) lookup.
        let rows = self.sources.for_shoot(
            &cx.region,
            &cx.provider,
            &cx.cloud_profile.region_config_name,
            snap,
        );
        let cols = snap.columns();
        let recording = details.on();
        let groups = cols.groups().len();
        let mut per_group: Vec<Option<f64>> = vec![None; groups];
        // When recording: the detail of each group, made with its value.
        let mut explained: Vec<Detail> = if recording {
            vec![Detail::default(); groups]
        } else {
            Vec::new()
        };
        let values = positions
            .iter()
            .map(|&i| {
                let g = cols.group(i) as usize;
                *per_group[g].get_or_insert_with(|| {
                    let s = cols.info(i);
                    let estimate = rows.to(s);
                    if let Some(value) = estimate.ms() {
                        if recording {
                            explained[g] = Detail::lazy(move |f| write!(f, "{estimate}"));
                        }
                        return value;
                    }
                    let d = region_distance(&s.region, &cx.region);
                    let value = d as f64 * self.fallback_factor;
                    if recording {
                        let (factor, from, to, ignored) = (
                            self.fallback_factor,
                            Arc::<str>::from(cx.region.as_str()),
                            s.region.clone(),
                            Arc::clone(&rows.ignored_row),
                        );
                        explained[g] = Detail::lazy(move |f| {
                            write!(
                                f,
                                "{} ms, fallback: region-name distance {d} × {factor} ms (no latency known for {from} → {to}){ignored}",
                                round_ms(value)
                            )
                        });
                    }
                    value
                })
            })
            .collect();
        if recording {
            for &i in positions {
                details.put(|| explained[cols.group(i) as usize].clone());
            }
        }
        values
    }

    fn raw_is_latency_ms(&self) -> bool {
        true
    }

    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        normalize_ms(values, self.max_latency_ms)
    }
}

/// Milliseconds onto 0..=100: 0 ms scores 100, `max_ms` and more score 0, linear in between.
pub(super) fn normalize_ms(values: &[f64], max_ms: f64) -> Vec<f64> {
    values
        .iter()
        .map(|v| MAX_SCORE * (1.0 - v.clamp(0.0, max_ms) / max_ms))
        .collect()
}

#[cfg(test)]
mod tests;
