use std::collections::BTreeMap;

use super::*;
use crate::api::{Gardener, SeedDnsDefault};
use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

fn seed(name: &str, provider: &str, region: &str, gardenlet: Option<&str>) -> Seed {
    let mut s = SeedBuilder::new(name)
        .provider(provider)
        .region(region)
        .backup()
        .build();
    s.status.gardener = gardenlet.map(|v| Gardener { version: v.into() });
    s
}

fn ha_shoot() -> Shoot {
    ShootBuilder::new("garden-dev", "api")
        .failure_tolerance("zone")
        .build()
}

fn region_config(threshold: Option<&str>) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("regions".into());
    cm.metadata.namespace = Some("garden".into());
    cm.metadata.labels = Some(BTreeMap::from([(
        crate::api::LABEL_SCHEDULING_PURPOSE.into(),
        crate::api::PURPOSE_REGION_CONFIG.into(),
    )]));
    let mut annotations = BTreeMap::from([(
        crate::api::ANNOTATION_CLOUDPROFILES.to_string(),
        "aws".to_string(),
    )]);
    if let Some(t) = threshold {
        annotations.insert(ANNOTATION_DISTANCE_THRESHOLD.into(), t.into());
    }
    cm.metadata.annotations = Some(annotations);
    cm.data = Some(BTreeMap::from([(
        "eu-west-1".into(),
        "eu-central-1: 150\nus-east-1: 900\n".into(),
    )]));
    cm
}

fn snapshot(cms: &[ConfigMap]) -> Snapshot {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    for cm in cms {
        snap.upsert_config_map(cm);
    }
    snap
}

#[test]
fn an_ha_shoot_between_seeds_of_one_provider_and_gardenlet_moves_live() {
    let (from, to) = (
        seed("a", "aws", "eu-west-1", Some("v1.130.0")),
        seed("b", "aws", "eu-west-1", Some("v1.130.0")),
    );
    let m = kind(&ha_shoot(), &from, &to, &snapshot(&[]), &[], true);
    assert_eq!(
        m,
        Migration {
            kind: Kind::Live,
            not_live: vec![]
        }
    );
}

#[test]
fn every_unmet_prerequisite_is_named() {
    let (from, to) = (
        seed("a", "aws", "eu-west-1", Some("v1.130.0")),
        seed("b", "gcp", "eu-west-1", Some("v1.131.0")),
    );
    let mut shoot = ShootBuilder::new("garden-dev", "api").build();
    shoot.spec.hibernation = Some(crate::api::Hibernation {
        enabled: Some(true),
    });
    let m = kind(&shoot, &from, &to, &snapshot(&[]), &[], false);
    assert_eq!(m.kind, Kind::Classic);
    assert_eq!(
        m.not_live,
        [
            "live migration is not enabled (--live-migration: gardener-apiserver's \
             LiveControlPlaneMigration feature gate)",
            "the control plane is not highly available",
            "the shoot is hibernated or waking up",
            "the provider type changes (aws -> gcp)",
            "the gardenlets differ (a: v1.130.0, b: v1.131.0)",
        ]
    );
    let unreported = kind(
        &ha_shoot(),
        &seed("a", "aws", "eu-west-1", None),
        &seed("b", "aws", "eu-west-1", Some("v1")),
        &snapshot(&[]),
        &[],
        true,
    );
    assert_eq!(
        unreported.not_live,
        ["seed a reports no gardenlet version (status.gardener.version)"]
    );
}

#[test]
fn a_woken_shoot_still_hibernated_in_status_is_not_moved_live() {
    let (from, to) = (
        seed("a", "aws", "eu-west-1", Some("v1")),
        seed("b", "aws", "eu-west-1", Some("v1")),
    );
    let mut shoot = ha_shoot();
    shoot.spec.hibernation = Some(crate::api::Hibernation {
        enabled: Some(false),
    });
    shoot
        .status
        .get_or_insert_with(Default::default)
        .is_hibernated = true;
    let m = kind(&shoot, &from, &to, &snapshot(&[]), &[], true);
    assert_eq!(m.not_live, ["the shoot is hibernated or waking up"]);
}

#[test]
fn another_region_is_live_only_within_the_region_config_map_threshold() {
    let from = seed("a", "aws", "eu-west-1", Some("v1"));
    let near = seed("b", "aws", "eu-central-1", Some("v1"));
    let far = seed("c", "aws", "us-east-1", Some("v1"));
    let unknown = seed("d", "aws", "ap-south-1", Some("v1"));
    let cms = [region_config(None)];
    let snap = snapshot(&cms);
    let live = |to: &Seed, shoot: &Shoot, cms: &[ConfigMap], snap: &Snapshot| {
        kind(shoot, &from, to, snap, cms, true)
    };
    assert!(
        live(&near, &ha_shoot(), &cms, &snap).is_live(),
        "150 <= 180"
    );
    assert_eq!(
        live(&far, &ha_shoot(), &cms, &snap).not_live,
        [
            "eu-west-1 -> us-east-1 is 900 apart, more than the threshold 180 of region ConfigMap garden/regions"
        ]
    );
    assert_eq!(
        live(&unknown, &ha_shoot(), &cms, &snap).not_live,
        ["region ConfigMap garden/regions gives no distance from eu-west-1 to ap-south-1"]
    );
    // the ConfigMap's own threshold
    let strict = [region_config(Some("100"))];
    let strict_snap = snapshot(&strict);
    assert!(!live(&near, &ha_shoot(), &strict, &strict_snap).is_live());
    let broken = [region_config(Some("far"))];
    let broken_snap = snapshot(&broken);
    assert_eq!(
        live(&near, &ha_shoot(), &broken, &broken_snap).not_live,
        [
            "region ConfigMap garden/regions: annotation migration.gardener.cloud/inter-region-distance-threshold: \"far\" is not a non-negative integer"
        ]
    );
    // without a region ConfigMap, another region is never live
    assert_eq!(
        live(&near, &ha_shoot(), &[], &snapshot(&[])).not_live,
        ["no region ConfigMap lists CloudProfile aws (regions eu-west-1 -> eu-central-1)"]
    );
    // the shoot may allow distant regions
    let mut distant = ha_shoot();
    distant.metadata.annotations = Some(BTreeMap::from([(
        ANNOTATION_ALLOW_DISTANT.into(),
        "true".into(),
    )]));
    assert!(live(&far, &distant, &cms, &snap).is_live());
}

#[test]
fn a_seed_change_gardener_apiserver_refuses_is_named() {
    let shoot = ShootBuilder::new("garden-dev", "api")
        .domain("api.dev.example.com")
        .build();
    let with_dns = |name: &str, internal: &str, defaults: &[&str]| {
        let mut s = seed(name, "aws", "eu-west-1", Some("v1"));
        let dns = s.spec.dns.get_or_insert_with(Default::default);
        dns.internal = Some(SeedDnsDefault {
            domain: internal.into(),
        });
        dns.defaults = defaults
            .iter()
            .map(|d| SeedDnsDefault {
                domain: (*d).into(),
            })
            .collect();
        s
    };
    let from = with_dns("a", "internal.example.com", &["example.com"]);
    assert_eq!(
        refusal(
            domain_of(&shoot),
            Some(&from),
            &with_dns("b", "internal.example.com", &["example.com"])
        ),
        None
    );
    assert_eq!(
        refusal(
            domain_of(&shoot),
            Some(&from),
            &with_dns("b", "other.example.com", &["example.com"])
        ),
        Some(
            "the internal domain would change from \"internal.example.com\" (a) to \
             \"other.example.com\" (b): gardener-apiserver refuses such a seed change"
                .into()
        )
    );
    assert_eq!(
        refusal(
            domain_of(&shoot),
            Some(&from),
            &with_dns("b", "internal.example.com", &["example.org"])
        ),
        Some(
            "the shoot's domain api.dev.example.com is under a's default domain example.com, \
             which b does not offer: gardener-apiserver refuses such a seed change"
                .into()
        )
    );
    let mut no_backup = with_dns("b", "internal.example.com", &["example.com"]);
    no_backup.spec.backup = None;
    assert_eq!(
        refusal(domain_of(&shoot), Some(&from), &no_backup),
        Some("seed b has no spec.backup: a migration destination needs one".into())
    );
    // a domain of its own is not tied to the seed
    let own = ShootBuilder::new("garden-dev", "api")
        .domain("api.shop.io")
        .build();
    assert_eq!(
        refusal(
            domain_of(&own),
            Some(&from),
            &with_dns("b", "internal.example.com", &[])
        ),
        None
    );
}
