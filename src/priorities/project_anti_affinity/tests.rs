use super::*;
use crate::api::Project;
use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use crate::profile::{Profile, WeightedPriority};

/// `(seed, region, [(namespace, shoots placed there)])`.
type SeedSpec<'a> = (&'a str, &'a str, &'a [(&'a str, usize)]);

/// Scores for a new shoot in `namespace` over the given seeds.
fn run(
    topology: Topology,
    namespace: &str,
    seeds: &[SeedSpec],
    projects: &[(&str, &str)],
) -> Vec<(f64, String)> {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    for (name, ns) in projects {
        let mut p = Project::default();
        p.metadata.name = Some(name.to_string());
        p.spec.namespace = Some(ns.to_string());
        snap.upsert_project(&p);
    }
    for (name, region, placed) in seeds {
        snap.upsert_seed(&SeedBuilder::new(name).region(region).build());
        for (ns, n) in placed.iter() {
            for i in 0..*n {
                snap.upsert_shoot(
                    &ShootBuilder::new(ns, &format!("{name}-{i}"))
                        .seed(name)
                        .build(),
                );
            }
        }
    }
    let shoot = ShootBuilder::new(namespace, "new").build();
    let p = ProjectAntiAffinity::new(topology);
    crate::priorities::testing::evaluate(&p, &shoot, &snap)
}

fn scores(got: &[(f64, String)]) -> Vec<f64> {
    got.iter().map(|g| g.0).collect()
}

#[test]
fn fewer_shoots_of_the_same_project_score_higher_and_other_projects_do_not_count() {
    let got = run(
        Topology::Seed,
        "garden-a",
        &[
            ("s1", "r", &[("garden-a", 2), ("garden-b", 9)]),
            ("s2", "r", &[("garden-a", 1)]),
            ("s3", "r", &[]),
        ],
        &[],
    );
    assert_eq!(scores(&got), vec![0.0, 50.0, 100.0]);
    assert_eq!(got[0].1, "2 shoot(s) of project a on this seed");
}

#[test]
fn all_seeds_equal_and_one_seed_score_100() {
    let got = run(
        Topology::Seed,
        "garden-a",
        &[
            ("s1", "r", &[("garden-a", 1)]),
            ("s2", "r", &[("garden-a", 1)]),
        ],
        &[],
    );
    assert_eq!(scores(&got), vec![100.0, 100.0]);
    let got = run(
        Topology::Seed,
        "garden-a",
        &[("s1", "r", &[("garden-a", 3)])],
        &[],
    );
    assert_eq!(scores(&got), vec![100.0]);
}

#[test]
fn seeds_without_any_shoots_count_zero_under_both_topologies() {
    for topology in [Topology::Seed, Topology::Region] {
        let got = run(
            topology,
            "garden-a",
            &[("s1", "r1", &[]), ("s2", "r2", &[])],
            &[],
        );
        assert_eq!(scores(&got), vec![100.0, 100.0], "{topology:?}");
        assert!(
            got[0].1.starts_with("0 shoot(s) of project a"),
            "{}",
            got[0].1
        );
    }
}

#[test]
fn a_project_object_maps_its_namespace_to_the_project() {
    // Project "shop" owns namespace "team-shop"; garden-shop (no Project claims it) is also shop's.
    let got = run(
        Topology::Seed,
        "team-shop",
        &[
            ("s1", "r", &[("team-shop", 1), ("garden-shop", 1)]),
            ("s2", "r", &[("garden-other", 5)]),
        ],
        &[("shop", "team-shop")],
    );
    assert_eq!(scores(&got), vec![0.0, 100.0]);
    assert_eq!(got[0].1, "2 shoot(s) of project shop on this seed");
}

#[test]
fn region_topology_counts_every_seed_of_the_region() {
    let got = run(
        Topology::Region,
        "garden-a",
        &[
            ("s1", "eu", &[("garden-a", 1)]),
            ("s2", "eu", &[("garden-a", 1)]),
            ("s3", "us", &[("garden-a", 1)]),
        ],
        &[],
    );
    assert_eq!(scores(&got), vec![0.0, 0.0, 100.0]);
    assert_eq!(got[2].1, "1 shoot(s) of project a in region us");
}

#[test]
fn topology_accepts_seed_and_region_only() {
    assert!(build(&serde_json::json!({"topology": "region"}), "p.args").is_ok());
    let errs = build(&serde_json::json!({"topology": "zone"}), "p.args")
        .err()
        .unwrap();
    assert_eq!(errs[0].path, "p.args.topology");
    assert!(
        errs[0].message.contains("unknown variant `zone`"),
        "{errs:?}"
    );
}

#[test]
fn a_dominating_anti_affinity_places_at_most_ceil_k_over_m_per_seed() {
    for (k, m) in [(7usize, 3usize), (6, 3), (5, 4), (1, 2), (10, 1)] {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        for j in 0..m {
            snap.upsert_seed(&SeedBuilder::new(&format!("s{j}")).build());
            // Other projects' shoots make ShootCount disagree with the spread.
            for i in 0..j * 3 {
                snap.upsert_shoot(
                    &ShootBuilder::new("garden-other", &format!("o{j}-{i}"))
                        .seed(&format!("s{j}"))
                        .build(),
                );
            }
        }
        let mut profile = Profile::upstream_default();
        profile.priorities.insert(
            0,
            WeightedPriority {
                weight: 10.0,
                priority: Box::new(ProjectAntiAffinity::new(Topology::Seed)),
            },
        );
        let mut per_seed: HashMap<String, usize> = HashMap::new();
        for i in 0..k {
            let shoot = ShootBuilder::new("garden-a", &format!("p{i}")).build();
            let d = crate::schedule::schedule(&shoot, &snap, &profile, chrono::Utc::now()).unwrap();
            *per_seed.entry(d.seed.clone()).or_default() += 1;
            let mut placed = shoot.clone();
            placed.spec.seed_name = Some(d.seed);
            snap.upsert_shoot(&placed);
        }
        let max = per_seed.values().copied().max().unwrap();
        assert!(max <= k.div_ceil(m), "k={k} m={m}: {per_seed:?}");
    }
}
