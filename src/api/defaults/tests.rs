use super::*;

fn shoot_yaml(yaml: &str) -> Shoot {
    serde_yaml_ng::from_str(yaml).unwrap()
}

fn seed_yaml(yaml: &str) -> Seed {
    serde_yaml_ng::from_str(yaml).unwrap()
}

fn tolerations(s: &Shoot) -> Vec<(String, Option<String>)> {
    s.spec
        .tolerations
        .iter()
        .map(|t| (t.key.clone(), t.value.clone()))
        .collect()
}

#[test]
fn a_bare_shoot_gets_purpose_networking_ip_families_and_scheduler_name() {
    let mut s = shoot_yaml("metadata: {name: a, namespace: garden-dev}\nspec: {region: r}");
    let applied = shoot(&mut s);
    assert_eq!(
        applied,
        [
            Applied::Purpose,
            Applied::Networking { status: false },
            Applied::IpFamilies,
            Applied::SchedulerName
        ]
    );
    assert_eq!(s.spec.purpose.as_deref(), Some("evaluation"));
    assert_eq!(s.spec.scheduler_name.as_deref(), Some("default-scheduler"));
    let n = s.spec.networking.as_ref().unwrap();
    assert_eq!(n.ip_families, ["IPv4"]);
    assert_eq!((n.nodes.as_ref(), n.pods.as_ref()), (None, None));
    assert!(s.spec.tolerations.is_empty(), "not in the garden namespace");
}

#[test]
fn fields_that_are_set_are_kept() {
    let mut s = shoot_yaml(
        "metadata: {name: a, namespace: garden-dev}
spec:
  purpose: production
  schedulerName: other
  networking: {pods: 10.1.0.0/16, ipFamilies: [IPv6]}",
    );
    let before = s.clone();
    assert_eq!(shoot(&mut s), []);
    assert_eq!(s, before);
}

#[test]
fn networking_without_ip_families_gets_ipv4_and_keeps_its_cidrs() {
    let mut s = shoot_yaml(
        "metadata: {name: a, namespace: ns}\nspec: {purpose: testing, schedulerName: x, networking: {services: 10.2.0.0/16}}",
    );
    assert_eq!(shoot(&mut s), [Applied::IpFamilies]);
    let n = s.spec.networking.unwrap();
    assert_eq!(n.services.as_deref(), Some("10.2.0.0/16"));
    assert_eq!(n.ip_families, ["IPv4"]);
}

#[test]
fn protected_toleration_is_added_only_in_the_garden_namespace_and_only_once() {
    /// name, shoot, tolerations after defaulting, the toleration default applied
    type Case<'a> = (
        &'a str,
        &'a str,
        Vec<(&'a str, Option<&'a str>)>,
        Option<Applied>,
    );
    let cases: &[Case] = &[
        (
            "garden without tolerations gets one without a value",
            "metadata: {name: a, namespace: garden}",
            vec![(TAINT_PROTECTED, None)],
            Some(Applied::ProtectedToleration { shadowed: None }),
        ),
        (
            "another namespace gets none",
            "metadata: {name: a, namespace: garden-x}",
            vec![],
            None,
        ),
        (
            "garden with the toleration already (no value) is left alone",
            "metadata: {name: a, namespace: garden}\nspec: {tolerations: [{key: seed.gardener.cloud/protected}]}",
            vec![(TAINT_PROTECTED, None)],
            None,
        ),
        (
            "garden with a valued toleration gets one without a value after it, which wins",
            "metadata: {name: a, namespace: garden}\nspec: {tolerations: [{key: seed.gardener.cloud/protected, value: x}, {key: other}]}",
            vec![
                (TAINT_PROTECTED, Some("x")),
                ("other", None),
                (TAINT_PROTECTED, None),
            ],
            Some(Applied::ProtectedToleration {
                shadowed: Some("x".into()),
            }),
        ),
        (
            "garden with a valued and a plain toleration keeps both and adds nothing",
            "metadata: {name: a, namespace: garden}\nspec: {tolerations: [{key: seed.gardener.cloud/protected, value: x}, {key: seed.gardener.cloud/protected}]}",
            vec![(TAINT_PROTECTED, Some("x")), (TAINT_PROTECTED, None)],
            None,
        ),
    ];
    for (name, yaml, want, applied) in cases {
        let mut s = shoot_yaml(yaml);
        let got = shoot(&mut s);
        let want: Vec<(String, Option<String>)> = want
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect();
        assert_eq!(tolerations(&s), want, "{name}");
        let toleration_applied: Vec<&Applied> = got
            .iter()
            .filter(|a| matches!(a, Applied::ProtectedToleration { .. }))
            .collect();
        assert_eq!(
            toleration_applied,
            applied.iter().collect::<Vec<_>>(),
            "{name}"
        );
    }
}

#[test]
fn seed_visibility_as_stored() {
    /// name, seed, `visible` after defaulting, defaults applied, read as visible
    type Case<'a> = (&'a str, &'a str, Option<bool>, Vec<Applied>, bool);
    let cases: &[Case] = &[
        (
            "without settings the seed is visible",
            "metadata: {name: s}",
            Some(true),
            vec![Applied::SeedScheduling],
            true,
        ),
        (
            "settings without scheduling: visible",
            "metadata: {name: s}\nspec: {settings: {zoneSelection: {mode: prefer}}}",
            Some(true),
            vec![Applied::SeedScheduling],
            true,
        ),
        (
            "scheduling without visible is stored as invisible",
            "metadata: {name: s}\nspec: {settings: {scheduling: {}}}",
            Some(false),
            vec![Applied::SeedInvisible],
            false,
        ),
        (
            "visible: false is kept",
            "metadata: {name: s}\nspec: {settings: {scheduling: {visible: false}}}",
            Some(false),
            vec![],
            false,
        ),
        (
            "visible: true is kept",
            "metadata: {name: s}\nspec: {settings: {scheduling: {visible: true}}}",
            Some(true),
            vec![],
            true,
        ),
    ];
    for (name, yaml, visible, applied, reads_visible) in cases {
        let mut s = seed_yaml(yaml);
        assert_eq!(seed(&mut s), *applied, "{name}");
        assert_eq!(
            s.spec.settings.scheduling.as_ref().and_then(|s| s.visible),
            *visible,
            "{name}"
        );
        assert_eq!(s.spec.settings.visible(), *reads_visible, "{name}");
    }
}

#[test]
fn as_written_a_seed_with_scheduling_but_no_visible_reads_as_visible() {
    let s = seed_yaml("metadata: {name: s}\nspec: {settings: {scheduling: {}}}");
    assert!(s.spec.settings.visible());
}

/// Defaulting twice gives what defaulting once gives, and applies nothing the second time.
#[test]
fn defaulting_is_idempotent() {
    let shoots = [
        "metadata: {name: a, namespace: garden}",
        "metadata: {name: a, namespace: garden}\nspec: {tolerations: [{key: seed.gardener.cloud/protected, value: x}]}",
        "metadata: {name: a, namespace: dev}\nspec: {networking: {nodes: 10.0.0.0/16}}",
        "metadata: {name: a, namespace: dev}\nspec: {purpose: testing, networking: {ipFamilies: [IPv6, IPv4]}}",
    ];
    for yaml in shoots {
        defaulted_twice(yaml, shoot_yaml(yaml), shoot);
    }
    let seeds = [
        "metadata: {name: s}",
        "metadata: {name: s}\nspec: {settings: {scheduling: {}}}",
        "metadata: {name: s}\nspec: {settings: {scheduling: {visible: true}}}",
    ];
    for yaml in seeds {
        defaulted_twice(yaml, seed_yaml(yaml), seed);
    }
}

/// Defaults `original`, read from `yaml`: a default is applied exactly when the object changes,
/// and defaulting it a second time applies nothing and changes nothing. The object defaulted.
fn defaulted_twice<T: Clone + PartialEq + fmt::Debug>(
    yaml: &str,
    original: T,
    default: fn(&mut T) -> Vec<Applied>,
) -> T {
    let mut once = original.clone();
    let applied = default(&mut once);
    assert_eq!(applied.is_empty(), once == original, "{yaml}");
    let mut twice = once.clone();
    assert_eq!(default(&mut twice), [], "{yaml}");
    assert_eq!(twice, once, "{yaml}");
    once
}

/// Objects as gardener-apiserver returns them (its defaults applied when they were stored) are
/// left exactly as they are: what `--live` reads never changes.
#[test]
fn stored_objects_are_left_unchanged() {
    let stored_shoot = "metadata: {name: ops, namespace: garden}
spec:
  purpose: evaluation
  schedulerName: default-scheduler
  region: eu-west-1
  provider: {type: aws, workers: [{name: w, zones: [a]}]}
  networking: {type: calico, nodes: 10.250.0.0/16, ipFamilies: [IPv4]}
  tolerations: [{key: seed.gardener.cloud/protected}]
status:
  networking: {nodes: [10.250.0.0/16], pods: [100.96.0.0/11], services: [100.64.0.0/13]}";
    let mut s = shoot_yaml(stored_shoot);
    let before = s.clone();
    assert_eq!(shoot(&mut s), []);
    assert_eq!(s, before);
    let stored_seed = "metadata: {name: s}
spec:
  provider: {type: aws, region: eu-west-1}
  networks: {pods: 10.1.0.0/16, services: 10.2.0.0/16, ipFamilies: [IPv4]}
  settings: {scheduling: {visible: true}, zoneSelection: {mode: prefer}}";
    let mut s = seed_yaml(stored_seed);
    let before = s.clone();
    assert_eq!(seed(&mut s), []);
    assert_eq!(s, before);
}

#[test]
fn only_defaults_the_decision_reads_differently_are_decisive() {
    let decisive: Vec<bool> = [
        Applied::Purpose,
        Applied::SchedulerName,
        Applied::Networking { status: false },
        Applied::IpFamilies,
        Applied::ProtectedToleration { shadowed: None },
        Applied::SeedScheduling,
        Applied::SeedInvisible,
    ]
    .iter()
    .map(Applied::decides)
    .collect();
    assert_eq!(decisive, [false, false, true, false, true, false, true]);
}

#[test]
fn messages_name_the_reason() {
    assert_eq!(
        Applied::ProtectedToleration { shadowed: None }.to_string(),
        "toleration for seed.gardener.cloud/protected added: the shoot is in namespace garden"
    );
    assert!(
        Applied::ProtectedToleration {
            shadowed: Some("x".into())
        }
        .to_string()
        .contains("seed.gardener.cloud/protected=x is no longer tolerated")
    );
    assert_eq!(Applied::SeedInvisible.source(), SEED_SOURCE);
    assert_eq!(Applied::Networking { status: true }.source(), SHOOT_SOURCE);
}

/// Every combination of the fields the defaults look at: defaulting a defaulted object applies
/// nothing and changes nothing, and a default is reported exactly when the object changed.
#[test]
fn defaulting_is_idempotent_for_every_combination_of_the_fields_it_reads() {
    let namespaces = ["garden", "garden-dev"];
    let tolerations = [
        "[]",
        "[{key: seed.gardener.cloud/protected}]",
        "[{key: seed.gardener.cloud/protected, value: x}]",
        "[{key: seed.gardener.cloud/protected, value: \"\"}]",
        "[{key: seed.gardener.cloud/protected, value: x}, {key: seed.gardener.cloud/protected}]",
        "[{key: other}]",
    ];
    let networking = [
        "",
        "networking: {}",
        "networking: {ipFamilies: [IPv6]}",
        "networking: {pods: 10.0.0.0/16}",
    ];
    let purposes = ["", "purpose: testing"];
    let scheduler_names = ["", "schedulerName: other"];
    let statuses = ["", "status: {networking: {services: [10.1.0.0/16]}}"];
    let mut n = 0;
    for ns in namespaces {
        for t in tolerations {
            for net in networking {
                for p in purposes {
                    for sn in scheduler_names {
                        for st in statuses {
                            let yaml = format!(
                                "metadata: {{name: a, namespace: {ns}}}\nspec:\n  tolerations: {t}\n  {net}\n  {p}\n  {sn}\n{st}\n"
                            );
                            let once = defaulted_twice(&yaml, shoot_yaml(&yaml), shoot);
                            assert!(once.spec.networking.is_some(), "{yaml}");
                            n += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(n, 2 * 6 * 4 * 2 * 2 * 2);
    for settings in [
        "",
        "settings: {}",
        "settings: {scheduling: {}}",
        "settings: {scheduling: {visible: true}}",
        "settings: {scheduling: {visible: false}}",
    ] {
        let yaml = format!("metadata: {{name: s}}\nspec:\n  {settings}\n");
        defaulted_twice(&yaml, seed_yaml(&yaml), seed);
    }
}

#[test]
fn an_applied_set_gives_back_the_defaults_it_was_made_of() {
    let lists = [
        vec![],
        vec![
            Applied::Purpose,
            Applied::ProtectedToleration {
                shadowed: Some("x".into()),
            },
            Applied::Networking { status: true },
            Applied::IpFamilies,
            Applied::SchedulerName,
        ],
        vec![
            Applied::ProtectedToleration { shadowed: None },
            Applied::Networking { status: false },
        ],
        vec![Applied::SeedScheduling],
        vec![Applied::SeedInvisible],
    ];
    for list in lists {
        let set = AppliedSet::of(&list);
        assert_eq!(set.is_empty(), list.is_empty());
        assert_eq!(set.applied(), list);
    }
    let mut s = shoot_yaml("metadata: {name: a, namespace: garden}");
    let applied = shoot(&mut s);
    assert_eq!(
        AppliedSet::of(&applied).applied(),
        applied,
        "upstream's order"
    );
}
