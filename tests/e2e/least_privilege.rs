//! Least privilege, enforced: the scheduler runs with exactly the roles the chart renders, and
//! each rule of them, removed in turn, breaks what it is for and nothing else, with the scheduler
//! saying which permission is missing and the refused requests counted.

use serde_json::{Value, json};

use crate::support::*;
use gardener_scheduler::api::Shoot;

/// What removing one rule of the chart's scheduler roles does.
struct Breaks {
    /// the rule, by its API group and first resource
    rule: (&'static str, &'static str),
    /// what the scheduler's log says (`None`: nothing is refused)
    says: Option<&'static str>,
    /// caches synced (`/readyz` answers 200)
    ready: bool,
    /// this process leads
    leads: bool,
    /// a schedulable shoot is bound
    binds: bool,
    /// an unschedulable shoot's reason is written to its status (`lastOperation`)
    reason_in_status: bool,
}

const RULES: &[Breaks] = &[
    Breaks {
        rule: ("core.gardener.cloud", "seeds"),
        says: Some(
            "the scheduler needs permission to list and watch seeds.core.gardener.cloud (the chart's roles grant it)",
        ),
        ready: false,
        leads: true,
        binds: false,
        reason_in_status: false,
    },
    Breaks {
        rule: ("core.gardener.cloud", "shoots"),
        says: Some(
            "the scheduler needs permission to list and watch shoots.core.gardener.cloud (the chart's roles grant it)",
        ),
        ready: false,
        leads: true,
        binds: false,
        reason_in_status: false,
    },
    Breaks {
        rule: ("core.gardener.cloud", "shoots/binding"),
        says: Some(
            "the scheduler needs permission to update shoots/binding in API group core.gardener.cloud (the chart's ClusterRole grants it)",
        ),
        ready: true,
        leads: true,
        binds: false,
        reason_in_status: true,
    },
    Breaks {
        rule: ("core.gardener.cloud", "shoots/status"),
        says: Some("cannot patch resource \"shoots/status\""),
        ready: true,
        leads: true,
        binds: true,
        reason_in_status: false,
    },
    Breaks {
        rule: ("events.k8s.io", "events"),
        says: Some("cannot create events.k8s.io events; publishing core/v1 events instead"),
        ready: true,
        leads: true,
        binds: true,
        reason_in_status: true,
    },
    // core/v1 events are the fallback for API servers without events.k8s.io/v1 (as upstream's
    // role grants both): on Gardener's API nothing needs them
    Breaks {
        rule: ("", "events"),
        says: None,
        ready: true,
        leads: true,
        binds: true,
        reason_in_status: true,
    },
    Breaks {
        rule: ("coordination.k8s.io", "leases"),
        says: Some("cannot create resource \"leases\""),
        ready: true,
        leads: false,
        binds: false,
        reason_in_status: false,
    },
    // the second leases rule: get and update of the scheduler's own Lease, by name
    Breaks {
        rule: ("coordination.k8s.io", "leases/by-name"),
        says: Some("cannot get resource \"leases\""),
        ready: true,
        leads: false,
        binds: false,
        reason_in_status: false,
    },
    // region ConfigMaps are optional: MinimalDistance then orders regions by name
    Breaks {
        rule: ("", "configmaps"),
        says: Some(
            "no permission to list and watch configmaps in namespace garden (the chart's roles grant it)",
        ),
        ready: true,
        leads: true,
        binds: true,
        reason_in_status: true,
    },
];

/// The rule's key in [`RULES`]: its API group and first resource (`leases/by-name` for a rule
/// restricted to resource names).
fn key_of(rule: &Value) -> (String, String) {
    let group = rule["apiGroups"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut resource = rule["resources"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if rule.get("resourceNames").is_some() {
        resource.push_str("/by-name");
    }
    (group, resource)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rule_of_the_chart_s_scheduler_roles_removed_in_turn_breaks_what_it_is_for_and_says_so()
 {
    let (api, client) = ApiServer::start_with_landscape("least", "dev").await;
    create_seed(&client, "seed-1", 100, &[]).await;
    let (full, _) = chart_rbac("full", &[], None);
    let rules: Vec<(usize, usize)> = full
        .iter()
        .enumerate()
        .flat_map(|(o, obj)| {
            let n = obj["rules"].as_array().map_or(0, Vec::len);
            (0..n).map(move |r| (o, r))
        })
        .collect();
    assert_eq!(
        rules.len(),
        RULES.len(),
        "every rule of the chart's roles has its row here"
    );
    let shoots = raw_ns::<Shoot>(&client, "garden-dev");
    for (i, (o, r)) in rules.into_iter().enumerate() {
        let name = format!("minus-{i}");
        let (mut objects, account) = chart_rbac(&name, &[], None);
        let removed = objects[o]["rules"].as_array_mut().unwrap().remove(r);
        let breaks = row(RULES, |b| b.rule, &removed);
        api.apply_objects(&name, &objects);
        let kubeconfig = api.kubeconfig_of(&name, &account);
        // each case starts without the Lease, as a first installation does
        api.kubectl(&[
            "delete",
            "lease",
            "-n",
            "garden",
            "gardener-scheduler-leader-election",
            "--ignore-not-found",
        ]);
        let mut scheduler = Scheduler::start(
            &api,
            &name,
            SchedulerOptions {
                leader_elect: true,
                kubeconfig: Some(kubeconfig),
                ..Default::default()
            },
        );
        let (ok, stuck) = (format!("ok-{i}"), format!("stuck-{i}"));
        create_shoot(&client, "dev", &ok).await;
        let mut m = shoot_manifest("dev", &stuck);
        m["spec"]["seedSelector"] = json!({"matchLabels": {"nowhere": "true"}});
        create(&shoots, m).await;
        let case = format!("without {removed}");

        if let Some(says) = breaks.says {
            eventually(&format!("{case}: the log to say {says:?}"), || async {
                scheduler.logs().contains(says).then_some(())
            })
            .await;
            let refused = scheduler.metric_sum("rest_client_requests_total", &[("code", "403")]);
            assert!(refused > 0.0, "{case}: the refused requests are counted");
        }
        if breaks.binds {
            eventually(&format!("{case}: {ok} bound"), || async {
                seed_of(&get_shoot(&client, "dev", &ok).await).map(str::to_string)
            })
            .await;
        }
        if breaks.reason_in_status {
            eventually(
                &format!("{case}: {stuck}'s reason in its status"),
                || async {
                    let shoot = get_shoot(&client, "dev", &stuck).await;
                    let last = shoot.status.as_ref()?.last_operation.as_ref()?;
                    let described = &last.description;
                    described
                        .contains("did not match the shoot's seed selector")
                        .then(|| described.clone())
                },
            )
            .await;
        }
        if breaks.binds || breaks.reason_in_status {
            // the events of both: through events.k8s.io, or core/v1 without it
            for shoot in [&ok, &stuck] {
                eventually(&format!("{case}: an event on {shoot}"), || async {
                    (!shoot_events(&client, "dev", shoot).await.is_empty()).then_some(())
                })
                .await;
            }
        }
        // what is granted comes in its own time: the log line may precede the lease and the sync
        if breaks.leads {
            eventually(&format!("{case}: leading"), || async {
                (scheduler.metric("gardener_scheduler_leader") == Some(1.0)).then_some(())
            })
            .await;
        }
        if breaks.ready {
            eventually(&format!("{case}: ready"), || async {
                matches!(scheduler.readyz(), Some((200, _))).then_some(())
            })
            .await;
        }
        let ready = scheduler.readyz().map(|(code, _)| code);
        assert_eq!(ready, Some(if breaks.ready { 200 } else { 503 }), "{case}");
        let leads = scheduler.metric("gardener_scheduler_leader");
        assert_eq!(leads, Some(if breaks.leads { 1.0 } else { 0.0 }), "{case}");
        if !breaks.binds {
            assert_eq!(
                seed_of(&get_shoot(&client, "dev", &ok).await),
                None,
                "{case}"
            );
        }
        if breaks.says.is_none() {
            scheduler.assert_nothing_refused(&format!("{case}: nothing refused"));
        }
        if breaks.rule.1 == "shoots/binding" {
            let errors =
                scheduler.metric_sum("gardener_scheduler_bind_errors_total", &[("code", "403")]);
            assert!(errors > 0.0, "{case}: counted as bind errors with code 403");
        }
        scheduler.terminate();
    }
}

/// The rules of `key`'s roles with one removed, each as (removed rule, kubeconfig).
fn without_each_rule(api: &ApiServer, key: &str, prefix: &str) -> Vec<(Value, std::path::PathBuf)> {
    let (full, _) = operator_rbac(prefix, key);
    let mut out = Vec::new();
    for (o, obj) in full.iter().enumerate() {
        for r in 0..obj["rules"].as_array().map_or(0, Vec::len) {
            let name = format!("{prefix}-{}", out.len());
            let (mut objects, account) = operator_rbac(&name, key);
            let removed = objects[o]["rules"].as_array_mut().unwrap().remove(r);
            api.apply_objects(&name, &objects);
            out.push((removed, api.kubeconfig_of(&name, &account)));
        }
    }
    out
}

/// What removing one rule of an operator role does to the command run with it: its exit status,
/// what it says on stderr, and whether the shoot moved.
struct CommandBreaks {
    rule: (&'static str, &'static str),
    exit: i32,
    says: &'static str,
    moves: bool,
}

const READER_RULES: &[CommandBreaks] = &[
    CommandBreaks {
        rule: ("core.gardener.cloud", "seeds"),
        exit: 1,
        says: "reading the landscape needs `list` on seeds.core.gardener.cloud",
        moves: false,
    },
    // region ConfigMaps are optional: the plan is made without them, with a warning
    CommandBreaks {
        rule: ("", "configmaps"),
        exit: 0,
        says: "warning: region ConfigMaps (namespace garden): no permission to list configmaps in namespace garden",
        moves: false,
    },
];

const APPLIER_RULES: &[CommandBreaks] = &[
    CommandBreaks {
        rule: ("core.gardener.cloud", "seeds"),
        exit: 1,
        says: "reading the landscape needs `list` on seeds.core.gardener.cloud",
        moves: false,
    },
    CommandBreaks {
        rule: ("core.gardener.cloud", "shoots"),
        exit: 1,
        says: "reading the landscape needs `list` on shoots.core.gardener.cloud",
        moves: false,
    },
    CommandBreaks {
        rule: ("core.gardener.cloud", "shoots/binding"),
        exit: 1,
        says: "the apply stopped before its plan was carried out: updating shoots/binding: forbidden",
        moves: false,
    },
    CommandBreaks {
        rule: ("events.k8s.io", "events"),
        exit: 0,
        says: "the event on the shoot was not published",
        moves: true,
    },
    CommandBreaks {
        rule: ("", "configmaps"),
        exit: 0,
        says: "no permission to list configmaps in namespace garden",
        moves: true,
    },
    CommandBreaks {
        rule: ("coordination.k8s.io", "leases"),
        exit: 1,
        says: "creating the lease: forbidden",
        moves: false,
    },
    CommandBreaks {
        rule: ("coordination.k8s.io", "leases/by-name"),
        exit: 1,
        says: "reading the lease: forbidden",
        moves: false,
    },
];

/// The row of `table` for the rule `removed` (by [`key_of`]); a rule without one fails the test.
fn row<'a, T>(
    table: &'a [T],
    rule: impl Fn(&T) -> (&'static str, &'static str),
    removed: &Value,
) -> &'a T {
    let (group, resource) = key_of(removed);
    table
        .iter()
        .find(|b| rule(b) == (group.as_str(), resource.as_str()))
        .unwrap_or_else(|| {
            panic!("the chart's rule {removed} has no row: say what its removal breaks")
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rule_of_the_what_if_reader_and_plan_applier_roles_removed_in_turn_is_named_by_the_command()
 {
    use crate::apply::{NS, apply_args, reconciled, shoot_on};
    use crate::plan::migratable_seed;
    use crate::support::gardenlet::FakeGardenlets;
    use crate::whatif::run_cli;

    let (api, client) = ApiServer::start_with_landscape("least-cli", "ap").await;
    migratable_seed(&client, "s1", 10).await;
    migratable_seed(&client, "s2", 10).await;
    shoot_on(&client, "a", "s1", 2, 2400).await;
    let _gardenlets = FakeGardenlets::start(
        client.clone(),
        NS,
        std::time::Duration::from_millis(400),
        &[],
    );
    reconciled(&client).await;
    // MinimalDistance reads the region ConfigMaps
    let config = api.state.join("minimal-distance.yaml");
    std::fs::write(
        &config,
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\nschedulers:\n  shoot:\n    strategy: MinimalDistance\n",
    )
    .unwrap();
    let drain = |kubeconfig: std::path::PathBuf, seed: String| {
        let config = config.display().to_string();
        async move {
            run_cli(
                [
                    "plan",
                    "drain",
                    &seed,
                    "-o",
                    "json",
                    "--now",
                    "2026-01-01T10:00:00Z",
                    "--move-duration",
                    "1s",
                    "--config",
                    &config,
                    "--kubeconfig",
                ]
                .iter()
                .map(|s| s.to_string())
                .chain([kubeconfig.display().to_string()])
                .collect(),
            )
            .await
        }
    };
    let reader = without_each_rule(&api, "whatIfReader", "reader");
    assert_eq!(reader.len(), READER_RULES.len(), "every rule has its row");
    for (removed, kubeconfig) in reader {
        let breaks = row(READER_RULES, |b| b.rule, &removed);
        let out = drain(kubeconfig, "s1".into()).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(breaks.exit),
            "without {removed}: {stderr}"
        );
        assert!(stderr.contains(breaks.says), "without {removed}: {stderr}");
    }

    let applier = without_each_rule(&api, "planApplier", "applier");
    assert_eq!(applier.len(), APPLIER_RULES.len(), "every rule has its row");
    for (removed, kubeconfig) in applier {
        let breaks = row(APPLIER_RULES, |b| b.rule, &removed);
        // the shoot goes back and forth: each apply drains the seed it is on
        let from = seed_of(&get_shoot(&client, "ap", "a").await)
            .unwrap()
            .to_string();
        let out = drain(api.what_if_identity(), from.clone()).await;
        assert_success(&out);
        let plan = api.state.join(format!("plan-from-{from}.json"));
        std::fs::write(&plan, &out.stdout).unwrap();
        let out = run_cli(apply_args(&kubeconfig, &plan, &[])).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(breaks.exit),
            "without {removed}: {stderr}"
        );
        assert!(stderr.contains(breaks.says), "without {removed}: {stderr}");
        let now = get_shoot(&client, "ap", "a").await;
        assert_eq!(
            seed_of(&now) != Some(from.as_str()),
            breaks.moves,
            "without {removed}: {stderr}"
        );
    }
}
