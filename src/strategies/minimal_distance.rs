use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::region_distance::region_distance;
use crate::snapshot::{SeedGroup, SeedInfo, Snapshot};

use super::framework::{Candidates, Narrowed, SetStep, keep_minimal, tiers};

pub const NAME: &str = "MinimalDistance";

/// The largest region-name distance upstream accepts: its search for the minimum starts there.
const MAX_NAME_DISTANCE: i64 = 1000;

/// Upstream's `MinimalDistance`: keep the seeds at minimal distance according to the region
/// ConfigMap of the shoot's CloudProfile (negative distances included); when it has no row for
/// the shoot's region or lists no remaining seed's region within 2^31 - 1, fall back to the
/// region-name distance (+2 for another provider).
pub struct MinimalDistance;

/// A group of seeds (one provider type, one region) with its distance.
type Keyed<'a> = (i64, &'a SeedGroup);

/// The seed groups this strategy can keep, by distance: first those listed in the region
/// ConfigMap row of the shoot's region (it decides whenever one of them is left), then all
/// groups by region-name distance up to the largest distance upstream accepts. `None` when the
/// row does not parse: that error is the full pipeline's to report.
fn lists<'a>(cx: &ShootContext, snap: &'a Snapshot) -> Option<Vec<Vec<Keyed<'a>>>> {
    let mut lists = Vec::with_capacity(2);
    if let Some((_, row)) = snap.region_row_for(&cx.cloud_profile.region_config_name, &cx.region) {
        let row = row.ok()?;
        lists.push(
            snap.seed_groups()
                .filter_map(|(_, region, names)| {
                    row.get(region)
                        .copied()
                        .filter(|d| *d <= i64::from(i32::MAX))
                        .map(|d| (d, names))
                })
                .collect(),
        );
    }
    lists.push(
        snap.seed_groups()
            .map(|(provider, region, names)| (name_distance(cx, provider, region), names))
            .filter(|(d, _)| *d <= MAX_NAME_DISTANCE)
            .collect(),
    );
    Some(lists)
}

/// Region-name distance, +2 for a seed of another provider type.
fn name_distance(cx: &ShootContext, provider: &str, region: &str) -> i64 {
    let d = region_distance(region, &cx.region);
    if provider != cx.provider { d + 2 } else { d }
}

impl SetStep for MinimalDistance {
    fn name(&self) -> &'static str {
        NAME
    }

    fn narrow(&self, cx: &ShootContext, seeds: &[&SeedInfo], snap: &Snapshot) -> Narrowed {
        if let Some((rc, row)) =
            snap.region_row_for(&cx.cloud_profile.region_config_name, &cx.region)
        {
            let row = row.map_err(|message| FitError::InvalidRegionConfig {
                config_map: rc.name.clone(),
                region: cx.region.clone(),
                message,
            })?;
            // Upstream starts its minimum at the largest 32-bit integer: a seed listed farther
            // away than that is never a candidate, as if it were not listed.
            let keys: Vec<Option<i64>> = seeds
                .iter()
                .map(|s| {
                    row.get(&s.region)
                        .copied()
                        .filter(|d| *d <= i64::from(i32::MAX))
                })
                .collect();
            if keys.iter().any(Option::is_some) {
                let source = format!("region ConfigMap {}", rc.name);
                return Ok(keep_minimal(&keys, |d, minimum| match d {
                    Some(distance) => Reason::new(Farther {
                        distance,
                        minimum,
                        source: source.clone(),
                    }),
                    None => Reason::new(Farther {
                        distance: i64::MAX,
                        minimum,
                        source: format!("not listed in {source}"),
                    }),
                }));
            }
        }
        let distances: Vec<i64> = seeds
            .iter()
            .map(|s| name_distance(cx, &s.provider, &s.region))
            .collect();
        // Upstream starts this minimum at 1000: a seed farther away is never a candidate.
        if distances.iter().all(|d| *d > MAX_NAME_DISTANCE) {
            return Ok(distances
                .iter()
                .map(|d| {
                    Some(Reason::new(Farther {
                        distance: *d,
                        minimum: MAX_NAME_DISTANCE,
                        source: format!("region-name distance, at most {MAX_NAME_DISTANCE}"),
                    }))
                })
                .collect());
        }
        let keys: Vec<Option<i64>> = distances.into_iter().map(Some).collect();
        Ok(keep_minimal(&keys, |d, minimum| {
            Reason::new(Farther {
                distance: d.unwrap_or(i64::MAX),
                minimum,
                source: "region-name distance".into(),
            })
        }))
    }

    /// The groups in order of distance: those of the region ConfigMap row first, then by
    /// region-name distance; unknown when the row does not parse.
    fn candidates(&self, cx: &ShootContext, snap: &Snapshot) -> Option<Candidates> {
        let cols = snap.columns();
        Some(match lists(cx, snap) {
            Some(lists) => Candidates::Tiers(
                lists
                    .into_iter()
                    .flat_map(|list| tiers(cols, list.into_iter()))
                    .collect(),
            ),
            None => Candidates::Unknown,
        })
    }
}

/// The seed is farther from the shoot's region than the nearest seeds.
#[derive(Debug)]
struct Farther {
    distance: i64,
    minimum: i64,
    source: String,
}

declared!(Farther {
    name: "fartherRegion",
    summary: "are farther away than the nearest seeds",
    message(self, f): write!(
        f,
        "distance {} > minimum {} ({})",
        self.distance, self.minimum, self.source
    ),
});

#[cfg(test)]
mod tests;
