use super::*;
use crate::compile::load_str;
use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use crate::predicates::{SetStep, Stage};
use crate::snapshot::SeedInfo;
use crate::strategies::{MinimalDistance, SameRegion, Scored};

fn snapshot(seeds: &[SeedBuilder], placed: &[(&str, usize)]) -> Snapshot {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    for s in seeds {
        snap.upsert_seed(&s.clone().build());
    }
    for (seed, n) in placed {
        for i in 0..*n {
            snap.upsert_shoot(
                &ShootBuilder::new("garden-x", &format!("{seed}-{i}"))
                    .seed(seed)
                    .build(),
            );
        }
    }
    snap
}

fn profile(strategy: &str) -> Profile {
    let cfg = load_str(&format!(
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: {strategy}\n"
    ))
    .unwrap();
    Profile::from_config("default", &cfg.config.schedulers.shoot).unwrap()
}

#[test]
fn the_seed_with_the_fewest_shoots_wins_as_upstream() {
    let snap = snapshot(
        &[
            SeedBuilder::new("a"),
            SeedBuilder::new("b"),
            SeedBuilder::new("c"),
        ],
        &[("a", 3), ("b", 1), ("c", 2)],
    );
    let d = schedule(
        &ShootBuilder::new("garden-p", "s").build(),
        &snap,
        &Profile::upstream_default(),
        Utc::now(),
    )
    .unwrap();
    assert_eq!(d.seed, "b");
    assert_eq!(
        d.ranking.iter().map(|s| &*s.seed).collect::<Vec<_>>(),
        ["b", "c", "a"]
    );
}

#[test]
fn ties_break_by_shoot_identity_not_list_order_and_spread_load() {
    let snap = snapshot(&[SeedBuilder::new("a"), SeedBuilder::new("b")], &[]);
    let p = Profile::upstream_default();
    let mut wins = std::collections::BTreeMap::new();
    for i in 0..200 {
        let shoot = ShootBuilder::new("garden-p", &format!("s{i}")).build();
        let first = schedule(&shoot, &snap, &p, Utc::now()).unwrap().seed;
        let again = schedule(&shoot, &snap, &p, Utc::now()).unwrap().seed;
        assert_eq!(first, again, "same input, same seed");
        *wins.entry(first).or_insert(0) += 1;
    }
    assert!(
        wins["a"] > 60 && wins["b"] > 60,
        "equal seeds share load: {wins:?}"
    );
}

#[test]
fn capacity_is_checked_before_the_region_strategy() {
    // Upstream filters capacity before minimal distance: a full nearest seed does not make
    // the shoot unschedulable while a farther seed has room.
    let snap = snapshot(
        &[
            SeedBuilder::new("near")
                .region("eu-west-1")
                .allocatable("shoots", "1"),
            SeedBuilder::new("far").region("eu-west-3"),
        ],
        &[("near", 1)],
    );
    let d = schedule(
        &ShootBuilder::new("garden-p", "s").build(),
        &snap,
        &profile(MinimalDistance.name()),
        Utc::now(),
    )
    .unwrap();
    assert_eq!(d.seed, "far");
    assert_eq!(d.rejected[0].stage, "SeedCapacity");
}

#[test]
fn failure_message_counts_first_rejecting_stage_per_seed() {
    let snap = snapshot(
        &[
            SeedBuilder::new("a").region("us-east-1"),
            SeedBuilder::new("b").taint("seed.gardener.cloud/protected", None),
            SeedBuilder::new("c").allocatable("shoots", "0"),
            SeedBuilder::new("d").region("us-east-1").taint("x", None),
        ],
        &[],
    );
    let err = schedule(
        &ShootBuilder::new("garden-p", "s").build(),
        &snap,
        &Profile::upstream_default(),
        Utc::now(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "0/4 seeds are available: 2 seed(s) had taints that the shoot does not tolerate, 1 seed(s) are in another region, 1 seed(s) have no capacity left."
    );
    assert!(
        err.hints().iter().any(|h| h.contains("add a toleration")),
        "{:?}",
        err.hints()
    );
}

#[test]
fn missing_cloud_profile_fails_only_that_shoot() {
    let snap = snapshot(&[SeedBuilder::new("a")], &[]);
    let shoot = ShootBuilder::new("garden-p", "s")
        .cloud_profile("nope")
        .build();
    let err = schedule(&shoot, &snap, &Profile::upstream_default(), Utc::now()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid shoot: spec.cloudProfile: CloudProfile \"nope\" not found"
    );
}

#[test]
fn unparsable_shoot_selector_is_a_clear_error() {
    let snap = snapshot(&[SeedBuilder::new("a")], &[]);
    let mut shoot = ShootBuilder::new("garden-p", "s").build();
    shoot.spec.seed_selector = Some(crate::api::SeedSelector {
        label_selector: crate::api::LabelSelector {
            match_expressions: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                    key: "env".into(),
                    operator: "Near".into(),
                    values: None,
                },
            ]),
            ..Default::default()
        },
        provider_types: vec![],
    });
    let err = schedule(&shoot, &snap, &Profile::upstream_default(), Utc::now())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("invalid shoot: spec.seedSelector: matchExpressions[0].operator: unsupported value \"Near\""), "{err}");
}

/// The filters that read a field which must parse refuse the shoot in their `prepare`, naming the
/// field, in both modes and before any seed is looked at.
#[test]
fn a_network_that_does_not_parse_refuses_the_shoot_naming_its_field_in_both_modes() {
    let snap = snapshot(&[SeedBuilder::new("a")], &[]);
    let shoot = ShootBuilder::new("garden-p", "s")
        .nodes("10.250.0.0/16")
        .pods("100.96.0.0/33")
        .build();
    let profile = Profile::upstream_default();
    let explained = schedule(&shoot, &snap, &profile, Utc::now())
        .unwrap_err()
        .to_string();
    assert!(
        explained.starts_with("invalid shoot: spec.networking.pods: "),
        "{explained}"
    );
    let fast = decide(&shoot, &snap, &profile, Utc::now())
        .unwrap_err()
        .to_string();
    assert_eq!(fast, explained);
}

#[test]
fn namespaced_cloud_profile_uses_its_computed_seed_selector() {
    let mut snap = snapshot(
        &[
            SeedBuilder::new("a").label("env", "dev"),
            SeedBuilder::new("b"),
        ],
        &[],
    );
    let shoot = namespaced_shoot(
        &mut snap,
        serde_json::json!({"cloudProfileSpec": {"type": "aws", "seedSelector": {"matchLabels": {"env": "dev"}}}}),
    );
    let d = schedule(&shoot, &snap, &Profile::upstream_default(), Utc::now()).unwrap();
    assert_eq!(d.seed, "a");
    assert_eq!(d.rejected[0].reason.name(), "cloudProfileSelector");
}

fn namespaced_shoot(snap: &mut Snapshot, status: serde_json::Value) -> Shoot {
    let ncp: crate::api::NamespacedCloudProfile = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "custom", "namespace": "garden-p"},
        "spec": {"parent": {"kind": "CloudProfile", "name": "aws"}},
        "status": status,
    }))
    .unwrap();
    snap.upsert_namespaced_cloud_profile(&ncp);
    let mut shoot = ShootBuilder::new("garden-p", "s").build();
    shoot.spec.cloud_profile = Some(crate::api::CloudProfileReference {
        kind: Some("NamespacedCloudProfile".into()),
        name: "custom".into(),
    });
    shoot
}

#[test]
fn an_unknown_cloud_profile_kind_fails_the_shoot_naming_the_field() {
    let snap = snapshot(&[SeedBuilder::new("a")], &[]);
    let mut shoot = ShootBuilder::new("garden-p", "s").build();
    shoot.spec.cloud_profile = Some(crate::api::CloudProfileReference {
        kind: Some("GlobalCloudProfile".into()),
        name: "aws".into(),
    });
    let err = schedule(&shoot, &snap, &Profile::upstream_default(), Utc::now())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "invalid shoot: spec.cloudProfile.kind: unsupported value \"GlobalCloudProfile\""
        ),
        "{err}"
    );
}

#[test]
fn namespaced_cloud_profile_without_computed_spec_keeps_the_parents_seed_selector() {
    // A deliberate difference: upstream would use an empty spec here and drop the
    // parent's selector, so seed b would be a candidate.
    let mut snap = snapshot(
        &[
            SeedBuilder::new("a").label("env", "dev"),
            SeedBuilder::new("b"),
        ],
        &[],
    );
    snap.upsert_cloud_profile(
        &CloudProfileBuilder::new("aws")
            .match_label("env", "dev")
            .build(),
    );
    let shoot = namespaced_shoot(&mut snap, serde_json::json!({}));
    let d = schedule(&shoot, &snap, &Profile::upstream_default(), Utc::now()).unwrap();
    assert_eq!(d.seed, "a");
    assert_eq!(d.rejected[0].reason.name(), "cloudProfileSelector");
}

#[test]
fn namespaced_cloud_profile_finds_region_configmaps_by_its_own_name() {
    let region_cm = |name: &str, profiles: &str, row: &str| -> crate::api::ConfigMap {
        serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name, "namespace": "garden",
                "labels": {"scheduling.gardener.cloud/purpose": "region-config"},
                "annotations": {"scheduling.gardener.cloud/cloudprofiles": profiles},
            },
            "data": {"eu-north-1": row},
        }))
        .unwrap()
    };
    let seeds = [
        SeedBuilder::new("central").region("eu-central-1"),
        SeedBuilder::new("west").region("eu-west-1"),
    ];
    let cases = [
        (
            "a ConfigMap listing the NamespacedCloudProfile's name decides",
            vec![region_cm(
                "own",
                "custom",
                "eu-west-1: 5\neu-central-1: 9\n",
            )],
            "west",
        ),
        (
            "a ConfigMap listing only the parent is not used",
            vec![region_cm(
                "parent",
                "aws",
                "eu-central-1: 1\neu-west-1: 9\n",
            )],
            // region-name distance: eu-central-1 and eu-west-1 tie at 2 from eu-north-1;
            // the parent's ConfigMap would have picked central alone.
            "tie",
        ),
        (
            "with both, the NamespacedCloudProfile's own ConfigMap decides",
            vec![
                region_cm("own", "custom", "eu-west-1: 5\neu-central-1: 9\n"),
                region_cm("parent", "aws", "eu-central-1: 1\neu-west-1: 9\n"),
            ],
            "west",
        ),
    ];
    for (name, cms, want) in cases {
        let mut snap = snapshot(&seeds, &[]);
        for cm in &cms {
            snap.upsert_config_map(cm);
        }
        let mut shoot = namespaced_shoot(
            &mut snap,
            serde_json::json!({"cloudProfileSpec": {"type": "aws"}}),
        );
        shoot.spec.region = Some("eu-north-1".into());
        let d = schedule(&shoot, &snap, &profile(MinimalDistance.name()), Utc::now()).unwrap();
        if want == "tie" {
            assert!(d.rejected.is_empty(), "{name}: {:?}", d.rejected);
        } else {
            assert_eq!(d.seed, want, "{name}");
            assert_eq!(d.rejected.len(), 1, "{name}");
        }
    }
}

#[test]
fn a_namespace_no_project_claims_belongs_to_the_project_its_name_implies() {
    // A deliberate difference: upstream fails such a shoot ("Project <unknown> not found"),
    // which in a garden happens only while its Project cache lags behind the shoot.
    let seeds = [
        SeedBuilder::new("a").default_domain("a.example.com"),
        SeedBuilder::new("b").default_domain("b.example.com"),
    ];
    let cases = [
        ("garden-dev", None, "web.dev.b.example.com", Some("b")),
        ("dev", None, "web.dev.a.example.com", Some("a")),
        // the Project object decides once it is known
        (
            "garden-machine-learning",
            Some("ml"),
            "web.ml.a.example.com",
            Some("a"),
        ),
        // a wrong guess can only reject seeds, never place the shoot elsewhere
        (
            "garden-machine-learning",
            None,
            "web.ml.a.example.com",
            None,
        ),
    ];
    for (namespace, project, domain, want) in cases {
        let mut snap = snapshot(&seeds, &[]);
        if let Some(name) = project {
            let p: crate::api::Project = serde_json::from_value(serde_json::json!({
                "metadata": {"name": name}, "spec": {"namespace": namespace},
            }))
            .unwrap();
            snap.upsert_project(&p);
        }
        let shoot = ShootBuilder::new(namespace, "web").domain(domain).build();
        let got = schedule(&shoot, &snap, &Profile::upstream_default(), Utc::now())
            .ok()
            .map(|d| d.seed.to_string());
        assert_eq!(got.as_deref(), want, "{namespace} {project:?} {domain}");
    }
}

#[test]
fn result_is_independent_of_seed_insertion_order() {
    let seeds = [
        SeedBuilder::new("a"),
        SeedBuilder::new("b"),
        SeedBuilder::new("c"),
        SeedBuilder::new("d"),
    ];
    let mut reversed = seeds.clone();
    reversed.reverse();
    let p = Profile::upstream_default();
    for i in 0..20 {
        let shoot = ShootBuilder::new("garden-p", &format!("s{i}")).build();
        let x = schedule(&shoot, &snapshot(&seeds, &[]), &p, Utc::now()).unwrap();
        let y = schedule(&shoot, &snapshot(&reversed, &[]), &p, Utc::now()).unwrap();
        assert_eq!(x, y);
    }
}

/// A filter that keeps per-shoot state: it counts its `prepare` calls and admits a seed
/// only when handed what it prepared for the shoot in question.
struct Prepares {
    calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

struct PreparedFor(String);

impl crate::predicates::Predicate for Prepares {
    fn name(&self) -> &'static str {
        "Prepares"
    }

    fn prepare(&self, cx: &ShootContext) -> Result<crate::predicates::Prepared, FitError> {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(crate::predicates::Prepared::new(PreparedFor(
            cx.key.clone(),
        )))
    }

    fn check(
        &self,
        cx: &ShootContext,
        state: &crate::predicates::Prepared,
        _: &SeedInfo,
        _: &Snapshot,
        why: crate::predicates::Why,
    ) -> crate::predicates::Verdict {
        match state.get::<PreparedFor>() {
            Some(PreparedFor(key)) if *key == cx.key => Ok(()),
            _ => why.reject(crate::reason::testing::elsewhere),
        }
    }
}

#[test]
fn a_filter_prepares_its_state_once_per_decision_and_reads_it_for_every_seed() {
    let snap = snapshot(
        &[
            SeedBuilder::new("a"),
            SeedBuilder::new("b"),
            SeedBuilder::new("c"),
        ],
        &[],
    );
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut profile = Profile::upstream_default();
    profile.stages.push(Stage::Filter(Box::new(Prepares {
        calls: std::sync::Arc::clone(&calls),
    })));
    let shoot = ShootBuilder::new("garden-p", "s").build();
    let reference = schedule(&shoot, &snap, &profile, Utc::now()).unwrap();
    assert_eq!(reference.ranking.len(), 3, "{reference:?}");
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1);
    let fast = decide(&shoot, &snap, &profile, Utc::now()).unwrap();
    assert_eq!(fast.seed, reference.seed);
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 2);
}

/// Fast mode tries the strategy's candidates before every seed; the filters are still prepared
/// once per decision, in either mode.
#[test]
fn a_filter_is_prepared_once_when_the_candidates_leave_nothing_and_every_seed_is_tried() {
    let snap = snapshot(
        &[
            SeedBuilder::new("a").region("eu-west-1"),
            SeedBuilder::new("b").region("eu-central-1"),
        ],
        &[],
    );
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for strategy in [SameRegion.name(), MinimalDistance.name()] {
        let mut profile = profile(strategy);
        let before_strategy = profile.stages.len() - 1;
        profile.stages.insert(
            before_strategy,
            Stage::Filter(Box::new(Prepares {
                calls: std::sync::Arc::clone(&calls),
            })),
        );
        let shoot = ShootBuilder::new("garden-p", "s")
            .region("ap-south-1")
            .build();
        calls.store(0, std::sync::atomic::Ordering::Relaxed);
        let fast = decide(&shoot, &snap, &profile, Utc::now());
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "{strategy}"
        );
        let explained = schedule(&shoot, &snap, &profile, Utc::now());
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::Relaxed),
            2,
            "{strategy}"
        );
        assert_eq!(
            fast.map(|d| d.seed),
            explained.map(|d| d.seed).map_err(FitError::counted_only),
            "{strategy}"
        );
    }
}

/// Access restrictions are checked from per-seed bits while the seeds offer at most 63
/// distinct ones, and by asking the predicate beyond that; both agree with the reference, and
/// a restriction no seed offers rejects every seed.
#[test]
fn access_restrictions_decide_as_the_reference_with_and_without_bits() {
    for distinct in [3usize, 70] {
        let seeds: Vec<SeedBuilder> = (0..distinct)
            .map(|k| {
                let seed = SeedBuilder::new(&format!("seed-{k:03}"))
                    .access_restriction(&format!("example.com/only-{k}"));
                if k.is_multiple_of(3) {
                    seed.access_restriction("eu-access-only")
                } else {
                    seed
                }
            })
            .collect();
        let snap = snapshot(&seeds, &[("seed-000", 2)]);
        for profile in [profile(Scored.name()), Profile::upstream_default()] {
            for wanted in [
                vec!["eu-access-only"],
                vec!["eu-access-only", "example.com/only-3"],
                vec!["eu-access-only", "example.com/only-4"],
                vec!["example.com/offered-nowhere"],
            ] {
                let shoot = wanted
                    .iter()
                    .fold(ShootBuilder::new("garden-p", "s"), |b, r| {
                        b.access_restriction(r)
                    })
                    .build();
                let fast = decide(&shoot, &snap, &profile, Utc::now());
                let reference = schedule(&shoot, &snap, &profile, Utc::now());
                match (&fast, &reference) {
                    (Ok(f), Ok(r)) => assert_eq!(f.seed, r.seed, "{distinct} {wanted:?}"),
                    (Err(f), Err(r)) => {
                        assert_eq!(f.to_string(), r.to_string(), "{distinct} {wanted:?}");
                    }
                    _ => panic!("{distinct} {wanted:?}: {fast:?} vs {reference:?}"),
                }
                let fits = (0..distinct).any(|k| {
                    wanted.iter().all(|r| {
                        *r == format!("example.com/only-{k}")
                            || (*r == "eu-access-only" && k.is_multiple_of(3))
                    })
                });
                assert_eq!(fast.is_ok(), fits, "{distinct} {wanted:?}: {fast:?}");
            }
        }
    }
}
