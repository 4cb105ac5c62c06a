use super::*;
use crate::context::ShootContext;
use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use crate::snapshot::{SeedInfo, Snapshot};

fn narrow(shoot: ShootBuilder, seeds: &[SeedBuilder]) -> Vec<bool> {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    let shoot = shoot.build();
    let cx = ShootContext::new(&shoot, &snap, chrono::Utc::now()).unwrap();
    let infos: Vec<SeedInfo> = seeds
        .iter()
        .map(|s| SeedInfo::from_seed(&s.clone().build()))
        .collect();
    let refs: Vec<&SeedInfo> = infos.iter().collect();
    ZonePreference
        .narrow(&cx, &refs, &snap)
        .unwrap()
        .iter()
        .map(Option::is_none)
        .collect()
}

#[test]
fn prefer_seeds_without_overlap_drop_out_when_others_remain() {
    let kept = narrow(
        ShootBuilder::new("garden-a", "s").worker_zones(&["a"]),
        &[
            SeedBuilder::new("p").zones(&["x"]).zone_mode("Prefer"),
            SeedBuilder::new("n").zones(&["y"]),
        ],
    );
    assert_eq!(kept, vec![false, true]);
}

#[test]
fn prefer_seed_with_overlap_stays() {
    let kept = narrow(
        ShootBuilder::new("garden-a", "s").worker_zones(&["a"]),
        &[
            SeedBuilder::new("p").zones(&["a"]).zone_mode("Prefer"),
            SeedBuilder::new("q").zones(&["b"]).zone_mode("Prefer"),
        ],
    );
    assert_eq!(kept, vec![true, false]);
}

#[test]
fn preference_falls_back_when_it_would_leave_nothing() {
    let kept = narrow(
        ShootBuilder::new("garden-a", "s").worker_zones(&["a"]),
        &[
            SeedBuilder::new("p").zones(&["x"]).zone_mode("Prefer"),
            SeedBuilder::new("q").zones(&["y"]).zone_mode("Prefer"),
        ],
    );
    assert_eq!(kept, vec![true, true]);
}

#[test]
fn workers_without_zones_keep_everything() {
    let kept = narrow(
        ShootBuilder::new("garden-a", "s"),
        &[
            SeedBuilder::new("p").zones(&["x"]).zone_mode("Prefer"),
            SeedBuilder::new("n").zones(&["y"]),
        ],
    );
    assert_eq!(kept, vec![true, true]);
}
