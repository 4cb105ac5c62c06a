use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::predicates::SetStep;
use crate::reason::Reason;
use crate::snapshot::{SeedGroup, SeedInfo, Snapshot};

use super::framework::keep_minimal;
use crate::region_distance::region_distance;

/// The largest region-name distance upstream accepts: its search for the minimum starts there.
const MAX_NAME_DISTANCE: i64 = 1000;

/// Upstream's `MinimalDistance`: keep the seeds at minimal distance according to the region
/// ConfigMap of the shoot's CloudProfile (negative distances included); when it has no row for
/// the shoot's region or lists no remaining seed's region within 2^31 - 1, fall back to the
/// region-name distance (+2 for another provider).
pub struct MinimalDistance;

/// A group of seeds (one provider type, one region) with its distance.
pub(super) type Keyed<'a> = (i64, &'a SeedGroup);

/// The seed groups this strategy can keep, by distance: first those listed in the region
/// ConfigMap row of the shoot's region (it decides whenever one of them is left), then all
/// groups by region-name distance up to the largest distance upstream accepts. `None` when the
/// row does not parse: that error is the full pipeline's to report.
pub(super) fn tiers<'a>(cx: &ShootContext, snap: &'a Snapshot) -> Option<Vec<Vec<Keyed<'a>>>> {
    let mut lists = Vec::with_capacity(2);
    if let Some(rc) = snap.region_config_for(&cx.cloud_profile.region_config_name)
        && let Some(row) = rc.distances_from(&cx.region)
    {
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
        "MinimalDistance"
    }

    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        snap: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError> {
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
                    Some(distance) => Reason::FartherRegion {
                        distance,
                        minimum,
                        source: source.clone(),
                    },
                    None => Reason::FartherRegion {
                        distance: i64::MAX,
                        minimum,
                        source: format!("not listed in {source}"),
                    },
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
                    Some(Reason::FartherRegion {
                        distance: *d,
                        minimum: MAX_NAME_DISTANCE,
                        source: format!("region-name distance, at most {MAX_NAME_DISTANCE}"),
                    })
                })
                .collect());
        }
        let keys: Vec<Option<i64>> = distances.into_iter().map(Some).collect();
        Ok(keep_minimal(&keys, |d, minimum| Reason::FartherRegion {
            distance: d.unwrap_or(i64::MAX),
            minimum,
            source: "region-name distance".into(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::api::{ConfigMap, ObjectMeta};
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::strategies::testing::kept;

    fn region_cm(profiles: &str, rows: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("regions".into()),
                namespace: Some("garden".into()),
                labels: Some(BTreeMap::from([(
                    "scheduling.gardener.cloud/purpose".to_string(),
                    "region-config".to_string(),
                )])),
                annotations: Some(BTreeMap::from([(
                    "scheduling.gardener.cloud/cloudprofiles".to_string(),
                    profiles.to_string(),
                )])),
                ..Default::default()
            },
            data: Some(
                rows.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        }
    }

    fn seeds() -> Vec<SeedBuilder> {
        vec![
            SeedBuilder::new("central").region("eu-central-1"),
            SeedBuilder::new("west").region("eu-west-1"),
            SeedBuilder::new("us").region("us-east-1"),
        ]
    }

    #[test]
    fn region_config_distances_pick_the_nearest_listed_seed() {
        let shoot = ShootBuilder::new("garden-a", "s")
            .region("eu-north-1")
            .build();
        let cm = region_cm(
            "aws",
            &[(
                "eu-north-1",
                "eu-west-1: 10\neu-central-1: 20\nus-east-1: 90\n",
            )],
        );
        assert_eq!(
            kept(&MinimalDistance, &shoot, &seeds(), |s| s
                .upsert_config_map(&cm)),
            vec!["west"]
        );
    }

    #[test]
    fn own_region_is_at_distance_zero_unless_listed() {
        let shoot = ShootBuilder::new("garden-a", "s")
            .region("eu-west-1")
            .build();
        let cm = region_cm("aws", &[("eu-west-1", "eu-central-1: 5\n")]);
        assert_eq!(
            kept(&MinimalDistance, &shoot, &seeds(), |s| s
                .upsert_config_map(&cm)),
            vec!["west"]
        );
        let cm = region_cm("aws", &[("eu-west-1", "eu-central-1: 5\neu-west-1: 7\n")]);
        assert_eq!(
            kept(&MinimalDistance, &shoot, &seeds(), |s| s
                .upsert_config_map(&cm)),
            vec!["central"]
        );
    }

    #[test]
    fn region_config_rows_are_read_as_upstream_reads_them() {
        let shoot = ShootBuilder::new("garden-a", "s")
            .region("eu-north-1")
            .build();
        let cases = [
            (
                "a negative distance is nearer than zero",
                "eu-west-1: -3\neu-central-1: 0\n",
                vec!["west"],
            ),
            (
                "null counts as distance 0",
                "eu-west-1: null\neu-central-1: 4\n",
                vec!["west"],
            ),
            (
                "a distance of 2^31 - 1 is still a distance",
                "us-east-1: 2147483647\n",
                vec!["us"],
            ),
            (
                "a distance beyond 2^31 - 1 is as if not listed",
                "eu-west-1: 2147483648\nus-east-1: 50\n",
                vec!["us"],
            ),
            (
                "only distances beyond 2^31 - 1 fall back to the region-name distance",
                "us-east-1: 2147483648\n",
                vec!["central", "west"],
            ),
        ];
        for (name, row, want) in cases {
            let cm = region_cm("aws", &[("eu-north-1", row)]);
            assert_eq!(
                kept(&MinimalDistance, &shoot, &seeds(), |s| s
                    .upsert_config_map(&cm)),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn region_config_of_another_cloud_profile_is_ignored_and_levenshtein_applies() {
        let shoot = ShootBuilder::new("garden-a", "s")
            .region("eu-north-1")
            .build();
        let cm = region_cm("gcp", &[("eu-north-1", "us-east-1: 1\n")]);
        // eu-north-1 vs eu-central-1 and eu-west-1: both distance 2 by region name.
        assert_eq!(
            kept(&MinimalDistance, &shoot, &seeds(), |s| s
                .upsert_config_map(&cm)),
            vec!["central", "west"]
        );
    }

    #[test]
    fn levenshtein_adds_two_for_another_provider() {
        let shoot = ShootBuilder::new("garden-a", "s")
            .provider("aws")
            .region("eu-west-1")
            .build();
        let seeds = vec![
            SeedBuilder::new("gcp-same-region")
                .provider("gcp")
                .region("eu-west-1"),
            SeedBuilder::new("aws-west-2")
                .provider("aws")
                .region("eu-west-2"),
        ];
        // gcp: 0 + 2 = 2; aws eu-west-2: 2. Both kept.
        assert_eq!(
            kept(&MinimalDistance, &shoot, &seeds, |_| {}),
            vec!["aws-west-2", "gcp-same-region"]
        );
    }

    #[test]
    fn region_names_farther_apart_than_1000_leave_no_candidate() {
        // twice the Levenshtein distance: "a" x 500 to "b" x 500 is exactly 1000
        let shoot = ShootBuilder::new("garden-a", "s")
            .region(&"a".repeat(500))
            .build();
        let seeds = vec![
            SeedBuilder::new("far").region(&"b".repeat(501)),
            SeedBuilder::new("farther").region(&"b".repeat(502)),
        ];
        assert_eq!(
            kept(&MinimalDistance, &shoot, &seeds, |_| {}),
            Vec::<String>::new()
        );
        let seeds = vec![
            SeedBuilder::new("at-1000").region(&"b".repeat(500)),
            SeedBuilder::new("far").region(&"b".repeat(501)),
        ];
        assert_eq!(
            kept(&MinimalDistance, &shoot, &seeds, |_| {}),
            vec!["at-1000"]
        );
    }

    #[test]
    fn malformed_row_fails_the_shoot_naming_configmap_and_region() {
        use crate::context::ShootContext;
        let shoot = ShootBuilder::new("garden-a", "s")
            .region("eu-north-1")
            .build();
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&crate::fixtures::CloudProfileBuilder::new("aws").build());
        snap.upsert_config_map(&region_cm("aws", &[("eu-north-1", "eu-west-1: near\n")]));
        let seed = SeedInfo::from_seed(&SeedBuilder::new("west").region("eu-west-1").build());
        let cx = ShootContext::new(&shoot, &snap, chrono::Utc::now()).unwrap();
        let err = MinimalDistance
            .narrow(&cx, &[&seed], &snap)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("garden/regions") && err.contains("eu-north-1") && err.contains("near"),
            "{err}"
        );
    }
}
