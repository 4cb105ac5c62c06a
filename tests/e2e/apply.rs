//! `plan apply` against the test API server, with the gardenlets played by
//! [`FakeGardenlets`](crate::support::gardenlet::FakeGardenlets): plans are made with `plan drain
//! --kubeconfig`, saved, and applied by the binary on a clock started at `--now`, so maintenance
//! windows a few seconds long stand in for real ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use gardener_scheduler::api::{Seed, Shoot};
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::plan::{migratable_seed, moves};
use crate::support::gardenlet::FakeGardenlets;
use crate::support::*;
use crate::whatif::run_cli;

/// The instant the plans are made at and the applies' clocks start at.
const T0: &str = "2026-01-01T10:00:00Z";
pub(crate) const NS: &str = "garden-ap";

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(T0).unwrap().to_utc()
}

/// `HHMMSS+0000` of `T0 + seconds`.
fn at(seconds: i64) -> String {
    (t0() + chrono::Duration::seconds(seconds))
        .format("%H%M%S+0000")
        .to_string()
}

/// A shoot on `seed` whose maintenance window is `[T0 + begin, T0 + end)` (gardener-apiserver
/// refuses windows shorter than 30 minutes).
pub(crate) async fn shoot_on(
    client: &kube::Client,
    name: &str,
    seed: &str,
    begin: i64,
    end: i64,
) -> Value {
    let mut m = shoot_manifest("ap", name);
    m["spec"]["seedName"] = seed.into();
    m["spec"]["maintenance"] = json!({"timeWindow": {"begin": at(begin), "end": at(end)}});
    raw_ns::<Shoot>(client, NS)
        .create(
            &Default::default(),
            &serde_json::from_value(m.clone()).unwrap(),
        )
        .await
        .unwrap();
    m
}

/// Makes `plan drain <seed>` of the cluster and saves it.
pub(crate) async fn save_plan(api: &ApiServer, name: &str, seed: &str, extra: &[&str]) -> PathBuf {
    let mut args: Vec<String> = ["plan", "drain", seed, "-o", "json", "--now", T0]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend([
        "--kubeconfig".into(),
        api.what_if_identity().display().to_string(),
    ]);
    args.extend(["--move-duration".into(), "1s".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = run_cli(args).await;
    assert!(
        out.status.success(),
        "plan: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = api.state.join(format!("{name}.json"));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

pub(crate) fn apply_args(kubeconfig: &Path, plan: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "plan".into(),
        "apply".into(),
        plan.display().to_string(),
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "--now".into(),
        T0.into(),
        "--poll-interval".into(),
        "200ms".into(),
        "-o".into(),
        "json".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

pub(crate) async fn apply(kubeconfig: &Path, plan: &Path, extra: &[&str]) -> Output {
    run_cli(apply_args(kubeconfig, plan, extra)).await
}

/// The JSON lines of an apply's stdout.
pub(crate) fn steps(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

pub(crate) fn of<'a>(steps: &'a [Value], step: &str) -> Vec<&'a Value> {
    steps.iter().filter(|s| s["step"] == step).collect()
}

fn time(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v["time"].as_str().unwrap())
        .unwrap()
        .to_utc()
}

/// shoot (namespace/name) -> planned destination.
fn planned(plan: &Path) -> BTreeMap<String, String> {
    let v: Value = serde_json::from_slice(&std::fs::read(plan).unwrap()).unwrap();
    moves(&v)
        .into_iter()
        .map(|(shoot, _, to)| (shoot, to))
        .collect()
}

/// The shoot as the API server stores it, metadata included.
async fn shoot(client: &kube::Client, name: &str) -> Value {
    serde_json::to_value(raw_ns::<Shoot>(client, NS).get(name).await.unwrap()).unwrap()
}

/// The most moves between a `started` step and the `done` or `failed` step of the same shoot.
fn most_in_flight(steps: &[Value]) -> usize {
    let (mut now, mut most) = (0usize, 0usize);
    for s in steps {
        match s["step"].as_str() {
            Some("started") => {
                now += 1;
                most = most.max(now);
            }
            Some("done") | Some("failed") => now = now.saturating_sub(1),
            _ => {}
        }
    }
    most
}

/// s1 with `n` shoots (the first half in a window from T0+2s, the rest from T0+6s, both until
/// T0+10min), and three destinations with room for `room` shoots each.
async fn drain_landscape(client: &kube::Client, n: usize, room: u32) -> Vec<Value> {
    base_landscape(client, "ap").await;
    migratable_seed(client, "s1", 100).await;
    for s in ["s2", "s3", "s4"] {
        migratable_seed(client, s, room).await;
    }
    let mut shoots = Vec::new();
    for i in 0..n {
        let begin = if i < n / 2 { 2 } else { 6 };
        shoots.push(shoot_on(client, &format!("sh{i:02}"), "s1", begin, 2400).await);
    }
    shoots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_of_twenty_shoots_ends_on_the_planned_seeds_within_windows_and_three_at_a_time() {
    let api = ApiServer::start("apply-drain");
    let client = api.client().await;
    let manifests = drain_landscape(&client, 20, 10).await;
    let gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(800), &[]);
    // every shoot has its status before the plan is made
    reconciled(&client).await;
    // planned ten at a time, so that only the apply's own limit keeps it to three
    let plan = save_plan(&api, "drain", "s1", &["--max-concurrent", "10"]).await;
    let want = planned(&plan);
    assert_eq!(
        want.len(),
        20,
        "{}",
        std::fs::read_to_string(&plan).unwrap()
    );
    // after planning, the last two shoots' windows move to T0+16s: the apply reads them live
    let mut manifests = manifests;
    for m in manifests.iter_mut().skip(18) {
        let name = m["metadata"]["name"].as_str().unwrap().to_string();
        m["spec"]["maintenance"]["timeWindow"]["begin"] = at(16).into();
        raw_ns::<Shoot>(&client, NS)
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"spec": {"maintenance": m["spec"]["maintenance"]}})),
            )
            .await
            .unwrap();
    }

    let out = apply(
        &api.plan_applier_identity(),
        &plan,
        &["--max-concurrent", "3"],
    )
    .await;
    let log = steps(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{log:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = log.last().unwrap();
    assert_eq!(summary["step"], "summary");
    assert_eq!(summary["counts"]["done"], 20, "{summary:#}");

    for (key, to) in &want {
        let name = key.rsplit('/').next().unwrap();
        let s = shoot(&client, name).await;
        assert_eq!(s["spec"]["seedName"], to.as_str(), "{key}");
        assert_eq!(s["status"]["seedName"], to.as_str(), "{key}");
        assert_eq!(s["status"]["lastOperation"]["state"], "Succeeded", "{key}");
        // classic moves: no live-migration annotation
        assert!(
            s["metadata"]["annotations"]["migration.gardener.cloud/live-migrate"].is_null(),
            "{key}"
        );
    }
    // once each, never more than three at a time (as the apply logged it and as the
    // gardenlets saw it)
    let seen = gardenlets.moves();
    assert_eq!(seen.len(), 20);
    assert!(seen.values().all(|m| m.len() == 1), "{seen:?}");
    assert!(most_in_flight(&log) <= 3, "{log:#?}");
    assert!(most_in_flight(&log) >= 2, "moves ran in parallel: {log:#?}");
    assert!(gardenlets.max_in_flight() <= 3);
    // every start inside the shoot's window
    let started = of(&log, "started");
    assert_eq!(started.len(), 20);
    for s in started {
        let name = s["shoot"].as_str().unwrap().rsplit('/').next().unwrap();
        let m = manifests
            .iter()
            .find(|m| m["metadata"]["name"] == name)
            .unwrap();
        let begin = m["spec"]["maintenance"]["timeWindow"]["begin"]
            .as_str()
            .unwrap();
        let opens = [2, 6, 16].into_iter().find(|&b| at(b) == begin).unwrap();
        assert!(
            time(s) >= t0() + chrono::Duration::seconds(opens),
            "{name} started at {} before its window {begin}",
            s["time"]
        );
    }
    // one event per start and per end on the shoot
    let events = shoot_events(&client, "ap", "sh00").await;
    let reasons: Vec<&str> = events.iter().filter_map(|e| e.reason.as_deref()).collect();
    assert!(
        reasons.contains(&"MigrationStarted") && reasons.contains(&"MigrationSucceeded"),
        "{reasons:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_killed_mid_plan_finishes_when_started_again_without_binding_a_shoot_twice() {
    let api = ApiServer::start("apply-resume");
    let client = api.client().await;
    drain_landscape(&client, 8, 10).await;
    let gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(1500), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "resume", "s1", &["--max-concurrent", "2"]).await;
    let want = planned(&plan);
    let log1 = api.state.join("apply-1.jsonl");
    let mut first = std::process::Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
        .args(apply_args(
            &api.plan_applier_identity(),
            &plan,
            &["--lease-duration", "3s"],
        ))
        .env_remove("KUBECONFIG")
        .stdout(std::fs::File::create(&log1).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // kill -9 once three moves have started (some done, some under way)
    let start = Instant::now();
    while of(&steps(&std::fs::read(&log1).unwrap()), "started").len() < 3 {
        assert!(
            start.elapsed() < DEADLINE,
            "the first apply started no moves"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let before = steps(&std::fs::read(&log1).unwrap());

    // the killed apply's lease still holds: a second apply is refused, changing nothing
    let out = apply(&api.plan_applier_identity(), &plan, &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("another plan apply runs against this garden"),
        "{stderr}"
    );

    tokio::time::sleep(Duration::from_secs(3)).await;
    let out = apply(&api.plan_applier_identity(), &plan, &[]).await;
    let after = steps(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{after:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    // what the first apply had bound is found, not bound again
    let found: Vec<&str> = of(&after, "found")
        .iter()
        .map(|s| s["shoot"].as_str().unwrap())
        .collect();
    assert!(!found.is_empty(), "{after:#?}");
    let mut starts: BTreeMap<String, usize> = BTreeMap::new();
    for s in of(&before, "started")
        .into_iter()
        .chain(of(&after, "started"))
    {
        *starts
            .entry(s["shoot"].as_str().unwrap().into())
            .or_default() += 1;
    }
    assert!(starts.values().all(|&n| n == 1), "{starts:?}");
    for f in &found {
        assert!(
            !of(&after, "started").iter().any(|s| s["shoot"] == *f),
            "{f}"
        );
    }
    for (key, to) in &want {
        let s = shoot(&client, key.rsplit('/').next().unwrap()).await;
        assert_eq!(s["status"]["seedName"], to.as_str(), "{key}");
        assert_eq!(s["status"]["lastOperation"]["state"], "Succeeded", "{key}");
    }
    let seen = gardenlets.moves();
    assert_eq!(seen.len(), want.len());
    assert!(seen.values().all(|m| m.len() == 1), "bound once: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_migration_stops_new_moves_and_is_reported_with_its_last_operation() {
    let api = ApiServer::start("apply-failure");
    let client = api.client().await;
    drain_landscape(&client, 4, 10).await;
    // the first half opens at T0+2s: sh00 and sh01 move first, one at a time
    let _gardenlets =
        FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &["sh01"]);
    reconciled(&client).await;
    let plan = save_plan(&api, "failure", "s1", &["--max-concurrent", "1"]).await;
    // checked with another profile than the plan's: said once, changes nothing
    let config = api.state.join("night.yaml");
    std::fs::write(
        &config,
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n\
         schedulers:\n  shoot:\n    profiles:\n    - id: night\n      profile: {}\n",
    )
    .unwrap();
    let out = apply(
        &api.plan_applier_identity(),
        &plan,
        &[
            "--max-concurrent",
            "1",
            "--config",
            config.to_str().unwrap(),
        ],
    )
    .await;
    let log = steps(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{log:#?}");
    let notes = of(&log, "note");
    assert_eq!(notes.len(), 1, "{log:#?}");
    assert!(
        notes[0]["message"].as_str().unwrap().contains(
            "computed with profile \"default\"; its moves are checked with profile \"night\""
        ),
        "{:#}",
        notes[0]
    );
    let failed = of(&log, "failed");
    assert_eq!(failed.len(), 1, "{log:#?}");
    assert_eq!(failed[0]["shoot"], "garden-ap/sh01");
    assert!(
        failed[0]["lastOperation"]
            .as_str()
            .unwrap()
            .starts_with("Migrate Failed"),
        "{:#}",
        failed[0]
    );
    assert!(!of(&log, "stopping").is_empty(), "{log:#?}");
    // the moves after it were not started: those shoots are still on s1
    let started: Vec<&str> = of(&log, "started")
        .iter()
        .map(|s| s["shoot"].as_str().unwrap())
        .collect();
    assert_eq!(started, ["garden-ap/sh00", "garden-ap/sh01"], "{log:#?}");
    for name in ["sh02", "sh03"] {
        assert_eq!(
            shoot(&client, name).await["spec"]["seedName"],
            "s1",
            "{name}"
        );
    }
    let summary = log.last().unwrap();
    assert_eq!(summary["counts"]["failed"], 1, "{summary:#}");
    assert_eq!(summary["counts"]["waiting"], 2, "{summary:#}");
    let events = shoot_events(&client, "ap", "sh01").await;
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("MigrationFailed")),
        "{events:?}"
    );
}

/// A proxy in front of the API server that records every request and, at the first binding of
/// a shoot named in `meddle`, changes that shoot (a label) just before passing the binding on,
/// as another client writing at the same moment would.
struct MeddlingProxy {
    kubeconfig: PathBuf,
    requests: std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Meddle {
    /// changes the shoot, as another client
    admin: kube::Client,
    /// forwards with the sender's token
    client: kube::Client,
    meddle: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    requests: std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>,
}

impl MeddlingProxy {
    async fn start(api: &ApiServer, meddle: &[&str]) -> MeddlingProxy {
        let state = Meddle {
            admin: api.client().await,
            client: api.passthrough_client().await,
            meddle: std::sync::Arc::new(std::sync::Mutex::new(
                meddle.iter().map(|s| s.to_string()).collect(),
            )),
            requests: Default::default(),
        };
        let requests = state.requests.clone();
        let app = axum::Router::new()
            .fallback(
                |axum::extract::State(m): axum::extract::State<Meddle>,
                 req: axum::extract::Request| async move {
                    let (parts, body) = req.into_parts();
                    let bytes = crate::support::proxy::body_bytes(body).await;
                    let uri = parts
                        .uri
                        .path_and_query()
                        .map(|p| p.to_string())
                        .unwrap_or_default();
                    m.requests
                        .lock()
                        .unwrap()
                        .push((parts.method.to_string(), uri));
                    let path = parts.uri.path().to_string();
                    if parts.method == http::Method::PUT && path.ends_with("/binding") {
                        let name = path.rsplit('/').nth(1).unwrap_or_default().to_string();
                        let hit = {
                            let mut list = m.meddle.lock().unwrap();
                            let hit = list.contains(&name);
                            list.retain(|n| *n != name);
                            hit
                        };
                        if hit {
                            raw_ns::<Shoot>(&m.admin, NS)
                                .patch(
                                    &name,
                                    &PatchParams::default(),
                                    &Patch::Merge(
                                        &json!({"metadata": {"labels": {"meddled": "yes"}}}),
                                    ),
                                )
                                .await
                                .unwrap();
                        }
                    }
                    crate::support::proxy::forward(&m.client, parts, bytes).await
                },
            )
            .with_state(state);
        let (port, task) = crate::support::proxy::serve_locally(app).await;
        let kubeconfig = api.state.join("kubeconfig-meddling-proxy");
        std::fs::write(
            &kubeconfig,
            crate::whatif::kubeconfig_for(
                &format!("http://127.0.0.1:{port}"),
                &token_of(&api.plan_applier_identity()),
            ),
        )
        .unwrap();
        MeddlingProxy {
            kubeconfig,
            requests,
            task,
        }
    }

    fn requests(&self) -> Vec<(String, String)> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for MeddlingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) async fn reconciled(client: &kube::Client) {
    eventually("first reconciles", || async {
        let all = list_shoots(client, "ap").await;
        all.iter()
            .all(|s| s.status.as_ref().is_some_and(|st| st.seed_name.is_some()))
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_full_since_planning_is_skipped_and_a_changed_shoot_is_checked_again() {
    let (api, client) = ApiServer::start_with_landscape("apply-recheck", "ap").await;
    migratable_seed(&client, "s1", 10).await;
    migratable_seed(&client, "s2", 10).await;
    for name in ["a", "b", "c"] {
        shoot_on(&client, name, "s1", 2, 2400).await;
    }
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "recheck", "s1", &["--max-concurrent", "1"]).await;
    assert_eq!(planned(&plan).values().filter(|to| *to == "s2").count(), 3);
    // after planning, s2 makes room for one shoot only
    raw::<Seed>(&client)
        .patch_status(
            "s2",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"allocatable": {"shoots": "1"}}})),
        )
        .await
        .unwrap();
    // and shoot a is changed by someone else just as it is bound
    let proxy = MeddlingProxy::start(&api, &["a"]).await;
    let out = apply(&proxy.kubeconfig, &plan, &[]).await;
    let log = steps(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{log:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    // a: one conflict, read again, checked again, bound; the other change kept
    let conflicts = of(&log, "conflict");
    assert_eq!(conflicts.len(), 1, "{log:#?}");
    assert_eq!(conflicts[0]["shoot"], "garden-ap/a");
    let a = shoot(&client, "a").await;
    assert_eq!(a["spec"]["seedName"], "s2");
    assert_eq!(
        a["metadata"]["labels"]["meddled"], "yes",
        "never overwritten"
    );
    let binds = proxy
        .requests()
        .iter()
        .filter(|(m, p)| m == "PUT" && p.contains("/shoots/a/binding"))
        .count();
    assert_eq!(
        binds, 2,
        "the refused binding and the one after the re-read"
    );
    // b and c: skipped with the reason, still on s1
    let skipped = of(&log, "skipped");
    assert_eq!(skipped.len(), 2, "{log:#?}");
    for s in skipped {
        let reason = s["reason"].as_str().unwrap();
        assert!(
            reason.contains("destination s2 no longer fits: 1/1 shoots allocated"),
            "{reason}"
        );
        let name = s["shoot"].as_str().unwrap().rsplit('/').next().unwrap();
        assert_eq!(shoot(&client, name).await["spec"]["seedName"], "s1");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_moves_planned_live_carry_the_annotation_and_a_dry_run_writes_nothing() {
    let (api, client) = ApiServer::start_with_landscape("apply-live", "ap").await;
    for seed in ["s1", "s2"] {
        migratable_seed(&client, seed, 10).await;
        raw::<Seed>(&client)
            .patch_status(
                seed,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": {"gardener": {"version": "v1.130.0"}}})),
            )
            .await
            .unwrap();
    }
    shoot_on(&client, "plain", "s1", 2, 2400).await;
    let mut ha = shoot_manifest("ap", "ha");
    ha["spec"]["seedName"] = "s1".into();
    ha["spec"]["maintenance"] = json!({"timeWindow": {"begin": at(2), "end": at(2400)}});
    ha["spec"]["controlPlane"] =
        json!({"highAvailability": {"failureTolerance": {"type": "node"}}});
    raw_ns::<Shoot>(&client, NS)
        .create(&Default::default(), &serde_json::from_value(ha).unwrap())
        .await
        .unwrap();
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "live", "s1", &["--live-migration"]).await;
    let v: Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    let kinds: BTreeMap<&str, &str> = elements(&v, "moves")
        .map(|m| {
            (
                m["shoot"].as_str().unwrap(),
                m["migration"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        BTreeMap::from([("garden-ap/ha", "live"), ("garden-ap/plain", "classic")]),
        "{v:#}"
    );

    // dry run: every write sent with dryRun=All, nothing stored
    let before: Vec<Value> =
        futures::future::join_all(["ha", "plain"].map(|n| shoot(&client, n))).await;
    let proxy = MeddlingProxy::start(&api, &[]).await;
    let out = apply(&proxy.kubeconfig, &plan, &["--dry-run"]).await;
    let log = steps(&out.stdout);
    assert_success(&out);
    assert_eq!(of(&log, "wouldStart").len(), 2, "{log:#?}");
    assert_eq!(log.last().unwrap()["wouldStart"], 2);
    let writes: Vec<(String, String)> = proxy
        .requests()
        .into_iter()
        .filter(|(m, _)| m != "GET")
        .collect();
    assert!(writes.len() >= 2, "{writes:?}");
    assert!(
        writes.iter().all(|(_, p)| p.contains("dryRun=All")),
        "{writes:?}"
    );
    let after: Vec<Value> =
        futures::future::join_all(["ha", "plain"].map(|n| shoot(&client, n))).await;
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(
            b["metadata"]["resourceVersion"],
            a["metadata"]["resourceVersion"]
        );
        assert_eq!(a["spec"]["seedName"], "s1");
    }
    // the same as text, for a person
    let mut args = apply_args(&proxy.kubeconfig, &plan, &["--dry-run"]);
    let o = args.iter().position(|a| a == "-o").unwrap();
    args[o + 1] = "table".into();
    let out = run_cli(args).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(
        text.contains("would start garden-ap/ha s1 -> s2 (live) at ")
            && text.contains("would start garden-ap/plain s1 -> s2 (classic) at ")
            && text.contains("Dry run: 2 of 2 move(s) would start; nothing was written."),
        "{text}"
    );
    let lease = kube::Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(
        client.clone(),
        "garden",
    )
    .get_opt("gardener-scheduler-plan-apply")
    .await
    .unwrap();
    assert!(lease.is_none(), "{lease:?}");
    assert!(shoot_events(&client, "ap", "ha").await.is_empty());

    // for real: the annotation on the live move only
    let out = apply(&api.plan_applier_identity(), &plan, &[]).await;
    let log = steps(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{log:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = "migration.gardener.cloud/live-migrate";
    let ha = shoot(&client, "ha").await;
    assert_eq!(ha["spec"]["seedName"], "s2");
    assert_eq!(ha["metadata"]["annotations"][key], "true", "{ha:#}");
    let plain = shoot(&client, "plain").await;
    assert_eq!(plain["spec"]["seedName"], "s2");
    assert!(plain["metadata"]["annotations"][key].is_null(), "{plain:#}");
    let live: BTreeMap<&str, bool> = of(&log, "started")
        .iter()
        .map(|s| (s["shoot"].as_str().unwrap(), s["live"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        live,
        BTreeMap::from([("garden-ap/ha", true), ("garden-ap/plain", false)])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_move_starts_inside_a_freeze_of_the_profile_chain() {
    let api = ApiServer::start("apply-freeze");
    let client = api.client().await;
    drain_landscape(&client, 2, 10).await;
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "freeze", "s1", &[]).await;
    // the moves are planned from T0+2s; the apply's configuration freezes until T0+8s
    let until =
        (t0() + chrono::Duration::seconds(8)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let config = api.state.join("freeze.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n\
             schedulers:\n  shoot:\n    profiles:\n    - id: freeze\n      schedule:\n        \
             between: {{start: \"{T0}\", end: \"{until}\"}}\n      freeze: true\n    - id: default\n      profile: {{}}\n"
        ),
    )
    .unwrap();
    let out = apply(
        &api.plan_applier_identity(),
        &plan,
        &["--config", config.to_str().unwrap()],
    )
    .await;
    let log = steps(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{log:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(of(&log, "frozen").len(), 1, "{log:#?}");
    let started = of(&log, "started");
    assert_eq!(started.len(), 2, "{log:#?}");
    for s in started {
        assert!(
            time(s) >= t0() + chrono::Duration::seconds(8),
            "started inside the freeze: {s:#}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_starting_moves_and_lets_the_ones_in_flight_finish() {
    let api = ApiServer::start("apply-sigterm");
    let client = api.client().await;
    drain_landscape(&client, 6, 10).await;
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(2000), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "sigterm", "s1", &["--max-concurrent", "2"]).await;
    let log = api.state.join("apply-sigterm.jsonl");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
        .args(apply_args(&api.plan_applier_identity(), &plan, &[]))
        .env_remove("KUBECONFIG")
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while of(&steps(&std::fs::read(&log).unwrap()), "started").is_empty() {
        assert!(start.elapsed() < DEADLINE, "no move started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let log = steps(&std::fs::read(&log).unwrap());
    assert!(status.success(), "{status:?}\n{log:#?}");
    let stopping = of(&log, "stopping");
    assert_eq!(stopping.len(), 1, "{log:#?}");
    assert!(
        stopping[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("interrupted"),
        "{log:#?}"
    );
    // what had started ended on its destination; nothing else started
    let started: std::collections::BTreeSet<String> = of(&log, "started")
        .iter()
        .map(|s| string(s, "shoot"))
        .collect();
    let done: std::collections::BTreeSet<String> = of(&log, "done")
        .iter()
        .map(|s| string(s, "shoot"))
        .collect();
    assert!(!started.is_empty() && started.len() < 6, "{log:#?}");
    assert_eq!(started, done, "{log:#?}");
    for i in 0..6 {
        let name = format!("sh{i:02}");
        let s = shoot(&client, &name).await;
        let moved = started.contains(&format!("{NS}/{name}"));
        assert_eq!(s["spec"]["seedName"] != "s1", moved, "{name}: {s:#}");
    }
    assert_eq!(log.last().unwrap()["counts"]["waiting"], 6 - started.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_from_another_garden_is_refused_unless_forced_and_its_own_garden_says_nothing() {
    let api = ApiServer::start("apply-stamp");
    let client = api.client().await;
    drain_landscape(&client, 2, 10).await;
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "stamp", "s1", &[]).await;
    // the landscape it was computed on: no note about the stamp
    let out = apply(&api.plan_applier_identity(), &plan, &["--dry-run"]).await;
    let log = steps(&out.stdout);
    assert!(out.status.success(), "{log:#?}");
    assert!(of(&log, "note").is_empty(), "{log:#?}");

    // the profile of the same name, configured otherwise: said once
    let config = api.state.join("minimal-distance.yaml");
    std::fs::write(
        &config,
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n\
         schedulers:\n  shoot:\n    candidateDeterminationStrategy: MinimalDistance\n",
    )
    .unwrap();
    let out = apply(
        &api.plan_applier_identity(),
        &plan,
        &["--dry-run", "--config", config.to_str().unwrap()],
    )
    .await;
    let log = steps(&out.stdout);
    assert!(out.status.success(), "{log:#?}");
    let notes = of(&log, "note");
    assert_eq!(notes.len(), 1, "{log:#?}");
    assert!(
        notes[0]["message"].as_str().unwrap().contains(
            "computed with profile \"default\" configured otherwise (strategy, filters or priorities)"
        ),
        "{log:#?}"
    );

    // the same moves, stamped as another garden's whose shoots are not here
    let mut other: Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    other["stamp"]["landscape"] = "ffffffffffffffff".into();
    other["stamp"]["shoots"] = 250.into();
    for m in other["moves"].as_array_mut().unwrap() {
        let name = m["shoot"].as_str().unwrap().replace(NS, "garden-elsewhere");
        m["shoot"] = name.into();
    }
    let foreign = api.state.join("foreign.json");
    std::fs::write(&foreign, other.to_string()).unwrap();
    let out = apply(&api.plan_applier_identity(), &foreign, &["--dry-run"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the plan looks computed on another garden")
            && stderr.contains("-> 2 shoot(s)")
            && stderr.contains("0 of its 2 move(s)")
            && stderr.contains("no move was started"),
        "{stderr}"
    );
    let out = apply(
        &api.plan_applier_identity(),
        &foreign,
        &["--dry-run", "--force"],
    )
    .await;
    let log = steps(&out.stdout);
    assert!(out.status.success(), "{log:#?}");
    let notes = of(&log, "note");
    assert_eq!(notes.len(), 1, "{log:#?}");
    assert!(
        notes[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("applied anyway (--force)"),
        "{log:#?}"
    );
}

/// A shoot gated after planning is never moved: its move is skipped with the gates named, the
/// other move of the plan goes ahead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shoot_gated_since_planning_is_skipped_with_its_gates_named() {
    let (api, client) = ApiServer::start_with_landscape("apply-gated", "ap").await;
    migratable_seed(&client, "s1", 10).await;
    migratable_seed(&client, "s2", 10).await;
    for name in ["a", "b"] {
        shoot_on(&client, name, "s1", 2, 2400).await;
    }
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "gated", "s1", &[]).await;
    assert_eq!(planned(&plan).values().filter(|to| *to == "s2").count(), 2);
    raw_ns::<Shoot>(&client, NS)
        .patch(
            "b",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"metadata": {"annotations": {"scheduling.gardener.cloud/gates": "change-freeze"}}}),
            ),
        )
        .await
        .unwrap();
    let out = apply(&api.plan_applier_identity(), &plan, &[]).await;
    let log = steps(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{log:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let skipped = of(&log, "skipped");
    assert_eq!(skipped.len(), 1, "{log:#?}");
    assert_eq!(skipped[0]["shoot"], "garden-ap/b");
    assert_eq!(
        skipped[0]["reason"],
        "the shoot is waiting for scheduling gate(s) change-freeze"
    );
    assert_eq!(shoot(&client, "b").await["spec"]["seedName"], "s1");
    assert_eq!(shoot(&client, "a").await["spec"]["seedName"], "s2");
}
