//! Upstream's scheduler integration test, `test/integration/scheduler/shoot/shoot_test.go`, end to
//! end: its 30 cases, carried as data in `tests/upstream/integration/` (and decided offline by
//! `tests/upstream.rs`), are created on a garden cluster's API as a user creates them for Gardener
//! (`for_gardener` in `upstream_integration/cases.rs`), the scheduler binary binds them (on
//! gardener-apiserver with the chart's roles), and each outcome is read back from the API, as the
//! case's `expect` says it:
//! - a seed (or one of the `candidates`): `spec.seedName`, and the decision record that came with
//!   the bind counts the case's `rejected` seeds per stage;
//! - a failure: the shoot keeps no seed, `status.lastOperation` (Create, Pending) and a
//!   `SchedulingFailed` event carry the case's message; a `noFit` counts exactly the case's seeds;
//! - a shoot the scheduler leaves alone: no seed, no `lastOperation`, no event.
//!
//! The reason texts per seed (`reasons`) exist only in explain mode; `tests/upstream.rs` checks
//! them.
//!
//! Both binding modes: `Binding` on gardener-apiserver, and `Patch` on the CRD cluster, since
//! gardener-apiserver refuses to set `spec.seedName` by any write but `shoots/binding` (the Binding
//! test shows that refusal too).
//!
//! Seeds are cluster-scoped and each is a candidate for every shoot, so the cases run in phases:
//! one per landscape of seeds, for every case that has exactly those seeds (the phases come from
//! the data). A phase creates its seeds and its shoots, then starts a scheduler process, so that
//! its first lists hold exactly the phase's landscape; it ends with the process stopped and the
//! phase's shoots and seeds deleted. Projects, CloudProfiles and region ConfigMaps are per case.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use gardener_scheduler::api::{CloudProfile, Project, Seed, Shoot};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Client;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::support::*;

mod cases;
use cases::{Prepared, cases, phases};

fn api_resource(kind: &str) -> ApiResource {
    match kind {
        "Project" => ApiResource::erase::<Project>(&()),
        "CloudProfile" => ApiResource::erase::<CloudProfile>(&()),
        "Seed" => ApiResource::erase::<Seed>(&()),
        "Shoot" => ApiResource::erase::<Shoot>(&()),
        "Secret" => ApiResource::erase::<Secret>(&()),
        "ConfigMap" => ApiResource::erase::<ConfigMap>(&()),
        "CredentialsBinding" => ApiResource {
            group: "security.gardener.cloud".into(),
            version: "v1alpha1".into(),
            api_version: "security.gardener.cloud/v1alpha1".into(),
            kind: "CredentialsBinding".into(),
            plural: "credentialsbindings".into(),
        },
        other => panic!("no resource for kind {other}"),
    }
}

fn api_for(client: &Client, object: &Value) -> Api<DynamicObject> {
    let ar = api_resource(object["kind"].as_str().unwrap());
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

/// Creates every case's namespace, Project, credentials, CloudProfile and region ConfigMaps (a
/// CRD cluster serves no CredentialsBinding, and asks for none).
async fn set_up(client: &Client, cases: &[Prepared]) {
    ensure_namespace(client, "garden").await;
    let bindings = serves(client, "security.gardener.cloud/v1alpha1").await;
    for object in cases.iter().flat_map(|c| &c.setup) {
        match object["kind"].as_str().unwrap() {
            "Namespace" => {
                ensure_namespace(client, object["metadata"]["name"].as_str().unwrap()).await
            }
            "CredentialsBinding" if !bindings => {}
            _ => {
                create(&api_for(client, object), object.clone()).await;
            }
        }
    }
}

/// Creates the phase's seeds (each status through `/status`) and shoots.
async fn create_phase(client: &Client, phase: &[&Prepared]) {
    for (seed, status) in &phase[0].seeds {
        create(&raw::<Seed>(client), seed.clone()).await;
        raw::<Seed>(client)
            .patch_status(
                seed["metadata"]["name"].as_str().unwrap(),
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": status})),
            )
            .await
            .unwrap();
    }
    for case in phase {
        create(&api_for(client, &case.shoot), case.shoot.clone()).await;
    }
}

/// Deletes the phase's shoots and seeds and waits until they are gone.
async fn clear_phase(client: &Client, phase: &[&Prepared]) {
    for case in phase {
        let shoots = raw_ns::<Shoot>(client, &case.namespace());
        shoots
            .delete("shoot", &DeleteParams::default())
            .await
            .unwrap();
    }
    for (seed, _) in &phase[0].seeds {
        let name = seed["metadata"]["name"].as_str().unwrap();
        raw::<Seed>(client)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    eventually("the phase's shoots and seeds to be gone", || async {
        let seeds = raw::<Seed>(client).list(&Default::default()).await.ok()?;
        let mut shoots = 0;
        for case in phase {
            let list = raw_ns::<Shoot>(client, &case.namespace())
                .list(&Default::default())
                .await
                .ok()?;
            shoots += list.items.len();
        }
        (seeds.items.is_empty() && shoots == 0).then_some(())
    })
    .await;
}

type Event = k8s_openapi::api::events::v1::Event;

/// The shoot of a case and the events about it, as the API shows them.
async fn seen(client: &Client, case: &Prepared) -> (Shoot, Vec<Event>) {
    let shoot = get_shoot(client, &case.id, "shoot").await;
    let events = shoot_events(client, &case.id, "shoot").await;
    (shoot, events)
}

fn failure_notes(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("SchedulingFailed"))
        .filter_map(|e| e.note.as_deref())
        .collect()
}

/// Whether the scheduler has shown its outcome for the case: a seed, or a failure in
/// `lastOperation` and an event. A shoot left alone has settled once the other shoots of its
/// phase, listed with it, have, and the scheduler has run for `quiet` besides.
fn settled(case: &Prepared, (shoot, events): &(Shoot, Vec<Event>), quiet: bool) -> bool {
    if case.expect.considered == Some(false) {
        return quiet;
    }
    let failed = shoot
        .status
        .as_ref()
        .is_some_and(|s| s.last_operation.is_some());
    seed_of(shoot).is_some() || (failed && !failure_notes(events).is_empty())
}

/// The outcome in a line: the seed, the failure, or that the shoot was left alone.
fn summary(shoot: &Shoot) -> String {
    let operation = shoot
        .status
        .as_ref()
        .and_then(|s| s.last_operation.as_ref());
    match (seed_of(shoot), operation) {
        (Some(seed), _) => format!("bound to {seed}"),
        (None, Some(op)) => op.description.clone(),
        (None, None) => "left alone".into(),
    }
}

/// What is wrong with a case's outcome, measured against its `expect`.
fn check(case: &Prepared, (shoot, events): &(Shoot, Vec<Event>)) -> Vec<String> {
    let expect = &case.expect;
    let mut problems = Vec::new();
    let seed = seed_of(shoot);
    let operation = shoot
        .status
        .as_ref()
        .and_then(|s| s.last_operation.as_ref());
    if expect.considered == Some(false) {
        if seed.is_some() || operation.is_some() || !events.is_empty() {
            problems.push(format!(
                "left alone expected; seed {seed:?}, lastOperation {operation:?}, {} event(s)",
                events.len()
            ));
        }
    } else if let Some(fails) = &expect.fails {
        let description = operation
            .map(|o| o.description.as_str())
            .unwrap_or_default();
        if seed.is_some() {
            problems.push(format!("bound to {seed:?}, expected to fail"));
        }
        if !operation.is_some_and(|o| o.type_ == "Create" && o.state == "Pending") {
            problems.push(format!(
                "lastOperation {operation:?}, expected Create Pending"
            ));
        }
        let mut texts = vec!["Failed to schedule Shoot: ".to_string()];
        texts.extend(fails.message.as_deref().map(|m| case.text(m)));
        if fails.kind == "noFit" {
            let n = case.seeds.len();
            texts.push(format!("0/{n} seeds are available"));
        }
        for text in &texts {
            if !description.contains(text.as_str()) {
                problems.push(format!("lastOperation says {description:?}, not {text:?}"));
            }
            let notes = failure_notes(events);
            if !notes.iter().any(|n| n.contains(text.as_str())) {
                problems.push(format!(
                    "no SchedulingFailed event says {text:?}: {notes:?}"
                ));
            }
        }
    } else {
        let want: Vec<&String> = expect
            .seed
            .iter()
            .chain(expect.candidates.iter().flatten())
            .collect();
        if !seed.is_some_and(|s| want.iter().any(|w| w.as_str() == s)) {
            problems.push(format!(
                "bound to {seed:?} (lastOperation {operation:?}), expected one of {want:?}"
            ));
        }
        let record = shoot
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("scheduling.gardener.cloud/decision"))
            .and_then(|r| serde_json::from_str::<Value>(r).ok());
        match (&record, &expect.rejected) {
            (None, _) if seed.is_some() => problems.push("bound without a decision record".into()),
            (Some(record), Some(rejected)) => {
                let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
                for stage in rejected.values() {
                    *counts.entry(stage.as_str()).or_default() += 1;
                }
                let got: BTreeMap<&str, u64> = record["rejected"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.as_str(), v.as_u64().unwrap_or_default()))
                    .collect();
                if got != counts {
                    problems.push(format!("the record rejects {got:?}, expected {counts:?}"));
                }
            }
            _ => {}
        }
    }
    problems
}

/// Runs every case in its phase with a scheduler in `mode`; returns each case's problems.
async fn run(api: &ApiServer, mode: &'static str) -> Vec<String> {
    let client = api.client().await;
    let cases = cases();
    set_up(&client, &cases).await;
    // the chart's roles for a scheduler of this binding mode (the strategy asks for none)
    let config = api.state.join("upstream-integration-rbac.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n\
             leaderElection: {{leaderElect: false}}\nschedulers: {{shoot: {{bindingMode: {mode}}}}}\n"
        ),
    )
    .unwrap();
    let kubeconfig = api.scheduler_kubeconfig(&config);
    let mut problems = Vec::new();
    for (n, phase) in phases(&cases).iter().enumerate() {
        let started = Instant::now();
        if n == 0 && mode == "Binding" {
            problems.extend(refused_as_written(&client, phase[0]).await);
        }
        create_phase(&client, phase).await;
        if n == 0 && mode == "Binding" {
            problems.extend(seed_name_refused_but_by_binding(&client, phase[0]).await);
        }
        let shoot_config = format!(
            "candidateDeterminationStrategy: {}\ndecisionRecord: true\n",
            phase[0].strategy
        );
        let mut scheduler = Scheduler::start(
            api,
            &format!("upstream-{n:02}"),
            SchedulerOptions {
                binding_mode: mode,
                kubeconfig: Some(kubeconfig.clone()),
                shoot_config: Box::leak(shoot_config.into_boxed_str()),
                ..Default::default()
            },
        );
        scheduler.wait_ready().await;
        let ready = Instant::now();
        let outcomes = loop {
            let mut outcomes = Vec::new();
            for case in phase {
                outcomes.push(seen(&client, case).await);
            }
            let quiet = ready.elapsed() > Duration::from_secs(2);
            if phase
                .iter()
                .zip(&outcomes)
                .all(|(c, o)| settled(c, o, quiet))
                || ready.elapsed() > DEADLINE
            {
                break outcomes;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        // read again once the scheduler has retried (backoff 1 s): a failed shoot stays without
        // a seed, a shoot left alone stays so
        let unbound =
            |c: &&Prepared| c.expect.fails.is_some() || c.expect.considered == Some(false);
        let retried = Duration::from_millis(1500);
        if let Some(rest) = retried.checked_sub(ready.elapsed())
            && phase.iter().any(unbound)
        {
            tokio::time::sleep(rest).await;
        }
        for (case, first) in phase.iter().zip(outcomes) {
            eprintln!("{mode} {}: {}", case.file, summary(&first.0));
            let mut wrong = check(case, &first);
            let again = check(case, &seen(&client, case).await);
            let later: Vec<String> = again
                .into_iter()
                .filter(|p| !wrong.contains(p))
                .map(|p| format!("read again: {p}"))
                .collect();
            wrong.extend(later);
            if !wrong.is_empty() {
                problems.push(format!("{} ({}): {}", case.file, case.id, wrong.join("; ")));
            }
        }
        drop(scheduler);
        clear_phase(&client, phase).await;
        eprintln!(
            "phase {n} ({} case(s), {} seed(s), {}): {:.1} s",
            phase.len(),
            phase[0].seeds.len(),
            phase[0].strategy,
            started.elapsed().as_secs_f64()
        );
    }
    problems
}

/// gardener-apiserver sets `spec.seedName` through `shoots/binding` alone: even the
/// administrator's patch of the shoot is refused (403, naming the subresource). So `bindingMode:
/// Patch` cannot bind there.
async fn seed_name_refused_but_by_binding(client: &Client, case: &Prepared) -> Vec<String> {
    let seed = case.seeds[0].0["metadata"]["name"].as_str().unwrap();
    let patch = json!({"spec": {"seedName": seed}});
    let answer = raw_ns::<Shoot>(client, &case.namespace())
        .patch("shoot", &PatchParams::default(), &Patch::Merge(&patch))
        .await;
    match answer {
        Err(kube::Error::Api(s)) if s.code == 403 && s.message.contains("shoots/binding") => {
            Vec::new()
        }
        other => vec![format!(
            "a patch of spec.seedName on gardener-apiserver answered {:?}, expected 403 naming shoots/binding",
            other.map(|o| o.data["spec"]["seedName"].clone())
        )],
    }
}

/// What gardener-apiserver asks of each kind that the carried cases leave out: the fields its
/// refusal of an object as written names.
const REQUIRED: &[(&str, &[&str])] = &[
    (
        "Project",
        &["metadata.name: Too long: may not be more than 10 bytes"],
    ),
    (
        "CloudProfile",
        &[
            "spec.kubernetes.versions",
            "spec.machineImages",
            "spec.machineTypes",
        ],
    ),
    (
        "Seed",
        &[
            "spec.ingress",
            "spec.dns.internal",
            "spec.dns.defaults[0].type",
            "spec.dns.defaults[0].credentialsRef",
        ],
    ),
    (
        "Shoot",
        &[
            "spec.provider.workers[0].machine.type",
            "workers[i].maximum > 0",
            "credentialsBindingName",
        ],
    ),
];

/// gardener-apiserver refuses a case's objects as written (one of each kind; the shoot in the
/// case's namespace here, with its CloudProfile, so that its references resolve), with 422
/// naming what [`cases`]'s completion adds. Run before the case's own objects exist.
async fn refused_as_written(client: &Client, case: &Prepared) -> Vec<String> {
    let mut problems = Vec::new();
    for (kind, fields) in REQUIRED {
        let mut object = case
            .written
            .iter()
            .find(|o| o["kind"] == *kind)
            .cloned()
            .unwrap_or_else(|| panic!("{}: no {kind}", case.file));
        if *kind == "Shoot" {
            object["metadata"]["namespace"] = case.namespace().into();
            object["spec"]["cloudProfileName"] = case.id.clone().into();
        }
        object.as_object_mut().unwrap().remove("status");
        let answer = api_for(client, &object)
            .create(
                &Default::default(),
                &serde_json::from_value(object).unwrap(),
            )
            .await;
        match answer {
            Err(kube::Error::Api(s))
                if s.code == 422 && fields.iter().all(|f| s.message.contains(f)) => {}
            other => problems.push(format!(
                "{kind} as written: {:?}, expected 422 naming {fields:?}",
                other.map(|o| o.metadata.name)
            )),
        }
    }
    problems
}

/// Upstream's integration cases, bound through `shoots/binding` on gardener-apiserver with its
/// admission plugins, by a scheduler with the chart's roles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_integration_cases_bind_through_shoots_binding_on_gardener_apiserver() {
    let api = ApiServer::start("upstream-integration");
    let problems = run(&api, "Binding").await;
    assert!(
        problems.is_empty(),
        "{} case(s) wrong:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Upstream's integration cases with `bindingMode: Patch`, on the CRD cluster: gardener-apiserver
/// refuses a patch of `spec.seedName` (see the Binding test), so Patch mode runs only where
/// Gardener's kinds are CRDs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_integration_cases_bind_by_patch_on_the_crd_cluster() {
    let api = ApiServer::start_crd_cluster("upstream-integration-patch");
    let problems = run(&api, "Patch").await;
    assert!(
        problems.is_empty(),
        "{} case(s) wrong:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
