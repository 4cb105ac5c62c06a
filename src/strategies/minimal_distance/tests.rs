use std::collections::BTreeMap;

use super::*;
use crate::api::{ConfigMap, ObjectMeta};
use crate::fixtures::SeedBuilder;
use crate::strategies::testing::{kept, shoot_in};

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

/// The seeds of [`seeds`] that [`MinimalDistance`] keeps for `shoot` with the region ConfigMap
/// `cm`.
fn kept_with(shoot: &crate::api::Shoot, cm: &ConfigMap) -> Vec<String> {
    kept(&MinimalDistance, shoot, &seeds(), |s| {
        s.upsert_config_map(cm)
    })
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
    let shoot = shoot_in("eu-north-1").build();
    let cm = region_cm(
        "aws",
        &[(
            "eu-north-1",
            "eu-west-1: 10\neu-central-1: 20\nus-east-1: 90\n",
        )],
    );
    assert_eq!(kept_with(&shoot, &cm), vec!["west"]);
}

#[test]
fn own_region_is_at_distance_zero_unless_listed() {
    let shoot = shoot_in("eu-west-1").build();
    let cm = region_cm("aws", &[("eu-west-1", "eu-central-1: 5\n")]);
    assert_eq!(kept_with(&shoot, &cm), vec!["west"]);
    let cm = region_cm("aws", &[("eu-west-1", "eu-central-1: 5\neu-west-1: 7\n")]);
    assert_eq!(kept_with(&shoot, &cm), vec!["central"]);
}

#[test]
fn region_config_rows_are_read_as_upstream_reads_them() {
    let shoot = shoot_in("eu-north-1").build();
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
        assert_eq!(kept_with(&shoot, &cm), want, "{name}");
    }
}

#[test]
fn region_config_of_another_cloud_profile_is_ignored_and_levenshtein_applies() {
    let shoot = shoot_in("eu-north-1").build();
    let cm = region_cm("gcp", &[("eu-north-1", "us-east-1: 1\n")]);
    // eu-north-1 vs eu-central-1 and eu-west-1: both distance 2 by region name.
    assert_eq!(kept_with(&shoot, &cm), vec!["central", "west"]);
}

#[test]
fn levenshtein_adds_two_for_another_provider() {
    let shoot = shoot_in("eu-west-1").provider("aws").build();
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
    let shoot = shoot_in(&"a".repeat(500)).build();
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
    let shoot = shoot_in("eu-north-1").build();
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
