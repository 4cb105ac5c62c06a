//! How the feeds list their kinds against the real API server: as streaming lists where the
//! server serves them (Kubernetes 1.36 does, watch cache on or off), in pages where it refuses
//! (the `WatchList` feature gate off). Both ways leave the same state; a stream cut, or a server
//! restarted, before the stream's end marker binds nothing on half a landscape and ends in a
//! whole one.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use crate::support::fault_proxy::{FaultProxy, Faults};
use crate::support::*;

const PROJECT: &str = "ls";

fn lists(s: &Scheduler, kind: &str, mode: &str) -> f64 {
    s.metric(&format!(
        "gardener_scheduler_lists_total{{kind=\"{kind}\",mode=\"{mode}\"}}"
    ))
    .unwrap_or(0.0)
}

/// The lines of the families that show what the cache holds: placements counted per seed,
/// room per seed, pending shoots and why they wait.
fn cache_figures(s: &Scheduler) -> Vec<String> {
    let mut v: Vec<String> = s
        .metrics()
        .lines()
        .filter(|l| {
            [
                "gardener_scheduler_seed_shoots{",
                "gardener_scheduler_seed_allocatable_shoots{",
                "gardener_scheduler_pending_shoots ",
                "gardener_scheduler_pending_shoots_by_reason{",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// A gated pending shoot: it waits, so that two schedulers can watch the same landscape.
async fn create_gated(client: &kube::Client, name: &str) {
    let mut m = shoot_manifest(PROJECT, name);
    m["metadata"]["annotations"] = json!({"scheduling.gardener.cloud/gates": "held"});
    create(
        &raw_ns::<gardener_scheduler::api::Shoot>(client, "garden-ls"),
        m,
    )
    .await;
}

/// For random landscapes (seeds with random room, shoots bound to them or to seeds that do not
/// exist, gated pending shoots, shoots of another scheduler), a scheduler that streams and one
/// that pages count the same placements, room and pending shoots, and both the expected ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_and_paged_lists_leave_the_same_state() {
    let base: u64 = std::env::var("LISTING_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261203);
    for case in 0..3 {
        let mut rng = ChaCha8Rng::seed_from_u64(base + case);
        let (api, client) = ApiServer::start_with_landscape("listing-property", PROJECT).await;
        let seeds = rng.gen_range(1..=5);
        let mut bound = vec![0u32; seeds];
        // gardener-apiserver refuses a shoot on a full seed: the seeds get their (random)
        // capacity once their shoots exist, as a seed whose capacity shrank has them
        let mut capacity = Vec::new();
        for (i, _) in bound.iter().enumerate() {
            capacity.push(rng.gen_range(0..50));
            create_seed(&client, &format!("seed-{i}"), 1000, &[]).await;
        }
        // shoots can only be bound to a seed that exists; this one is deleted after them
        create_seed(&client, "gone", 1000, &[]).await;
        let (mut gated, mut elsewhere) = (0, 0);
        for n in 0..rng.gen_range(0..120) {
            let name = format!("s-{n:03}");
            match rng.gen_range(0..10) {
                0..=5 => {
                    let i = rng.gen_range(0..=seeds);
                    if i < seeds {
                        bound[i] += 1;
                        create_bound_shoot(&client, PROJECT, &name, &format!("seed-{i}")).await;
                    } else {
                        create_bound_shoot(&client, PROJECT, &name, "gone").await;
                    }
                }
                6..=8 => {
                    gated += 1;
                    create_gated(&client, &name).await;
                }
                _ => {
                    elsewhere += 1;
                    let mut m = shoot_manifest(PROJECT, &name);
                    m["spec"]["schedulerName"] = json!("another-scheduler");
                    create(
                        &raw_ns::<gardener_scheduler::api::Shoot>(&client, "garden-ls"),
                        m,
                    )
                    .await;
                }
            }
        }
        for (i, slots) in capacity.iter().enumerate() {
            set_seed_status(&client, &format!("seed-{i}"), *slots).await;
        }
        api.kubectl(&["delete", "seed", "gone", "--wait=false"]);
        eventually("seed gone to be deleted", || async {
            raw::<gardener_scheduler::api::Seed>(&client)
                .get_opt("gone")
                .await
                .unwrap()
                .is_none()
                .then_some(())
        })
        .await;
        let mut streaming = Scheduler::start(&api, "listing-streaming", Default::default());
        let mut paged = Scheduler::start(
            &api,
            "listing-paged",
            SchedulerOptions {
                shoot_config: "streamingLists: false\nlistPageSize: 50\n",
                ..Default::default()
            },
        );
        streaming.wait_ready().await;
        paged.wait_ready().await;
        let want_gated = gated as f64;
        for s in [&streaming, &paged] {
            eventually("every gated shoot counted", || async {
                (s.metric("gardener_scheduler_pending_shoots_by_reason{reason=\"gated\"}")
                    == Some(want_gated))
                .then_some(())
            })
            .await;
        }
        let figures = cache_figures(&streaming);
        assert_eq!(
            figures,
            cache_figures(&paged),
            "case {case} (seed {}): {seeds} seeds, {gated} gated, {elsewhere} of another scheduler",
            base + case
        );
        for (i, n) in bound.iter().enumerate() {
            assert!(
                figures.contains(&format!(
                    "gardener_scheduler_seed_shoots{{seed=\"seed-{i}\"}} {n}"
                )),
                "seed-{i} should count {n}: {figures:#?}"
            );
        }
        assert!(
            figures.contains(&format!("gardener_scheduler_pending_shoots {gated}")),
            "{figures:#?}"
        );
        for kind in ["Shoot", "Seed", "CloudProfile", "Project"] {
            assert_eq!(lists(&streaming, kind, "streaming"), 1.0, "{kind}");
            assert_eq!(lists(&streaming, kind, "paged"), 0.0, "{kind}");
            assert_eq!(lists(&paged, kind, "paged"), 1.0, "{kind}");
            assert_eq!(lists(&paged, kind, "streaming"), 0.0, "{kind}");
        }
    }
}

/// An API server without streaming lists (the `WatchList` feature gate off answers 422): the
/// feeds list in pages, say so once per kind, and bind as ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_streaming_lists_is_listed_in_pages() {
    let api = ApiServer::start_with_flags("listing-refused", &["--feature-gates=WatchList=false"]);
    let client = api.client().await;
    base_landscape(&client, PROJECT).await;
    create_seed(&client, "seed-a", 5, &[]).await;
    let mut scheduler = Scheduler::start(&api, "listing-refused", Default::default());
    scheduler.wait_ready().await;
    create_shoot(&client, PROJECT, "web").await;
    seed_when_bound(&client, "the shoot bound", PROJECT, "web").await;
    for kind in ["Shoot", "Seed", "CloudProfile", "Project"] {
        assert_eq!(lists(&scheduler, kind, "paged"), 1.0, "{kind}");
        assert_eq!(lists(&scheduler, kind, "streaming"), 0.0, "{kind}");
    }
    let logs = scheduler.logs();
    let said = logs
        .lines()
        .filter(|l| l.contains("the API server does not serve streaming lists; listing in pages"))
        .count();
    assert!(said >= 4, "one line per kind:\n{logs}");
    assert!(
        logs.contains(
            "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
        ),
        "the server's reason is in the line:\n{logs}"
    );
}

/// `seed-a` full with `n` bound shoots, and `garden-ls/aaa-pending` waiting, first in the
/// stream: a scheduler that took part of the stream for the whole would count fewer shoots on
/// `seed-a` and bind it there.
async fn full_seed_and_a_pending_shoot(client: &kube::Client, n: u32) {
    base_landscape(client, PROJECT).await;
    create_seed(client, "seed-a", n, &[]).await;
    for i in 0..n {
        create_bound_shoot(client, PROJECT, &format!("s-{i:04}"), "seed-a").await;
    }
    create_shoot(client, PROJECT, "aaa-pending").await;
}

/// After the relist: `seed-a` counts every shoot, the pending one waits for room, and is bound
/// there once when room is made.
async fn whole_landscape_then_bound_once(client: &kube::Client, s: &Scheduler, n: u32) {
    eventually("the pending shoot turned away for capacity", || async {
        (s.metric("gardener_scheduler_pending_shoots_by_reason{reason=\"unschedulable\"}")
            == Some(1.0))
        .then_some(())
    })
    .await;
    assert_eq!(
        s.metric("gardener_scheduler_seed_shoots{seed=\"seed-a\"}"),
        Some(n as f64)
    );
    assert_eq!(
        seed_of(&get_shoot(client, PROJECT, "aaa-pending").await),
        None,
        "bound on part of the landscape"
    );
    set_seed_status(client, "seed-a", n + 1).await;
    let seed = seed_when_bound(client, "bound once there is room", PROJECT, "aaa-pending").await;
    assert_eq!(seed, "seed-a");
}

/// The shoot stream cut mid-line, about a third of the way through: not ready, nothing bound,
/// listed again as a stream, and the whole landscape counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_before_its_end_binds_nothing_until_the_kind_is_listed_whole() {
    const N: u32 = 150;
    let api = ApiServer::start("listing-cut");
    let client = api.client().await;
    full_seed_and_a_pending_shoot(&client, N).await;
    let proxy = FaultProxy::start(&api).await;
    // a realistic shoot event is over 1 kB: 150 of them are well past 50 kB
    proxy.set(Faults {
        cut_next_watch_after_bytes: Some((50_000, "shoots".into())),
        ..Default::default()
    });
    let mut scheduler = Scheduler::start(
        &api,
        "listing-cut",
        SchedulerOptions {
            kubeconfig: Some(proxy.kubeconfig_for("listing-cut")),
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    assert!(
        proxy.faults().cut_next_watch_after_bytes.is_none(),
        "the first shoot stream was cut"
    );
    assert_eq!(lists(&scheduler, "Shoot", "streaming"), 2.0);
    assert_eq!(lists(&scheduler, "Shoot", "paged"), 0.0);
    whole_landscape_then_bound_once(&client, &scheduler, N).await;
}

/// The API server killed while the shoot stream is on its way (its chunks held back by the
/// proxy) and started again: the scheduler lists again (streamed, or in pages while the new
/// server answers streams 429) and counts the kind whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_during_the_stream_ends_in_a_whole_relist() {
    const N: u32 = 60;
    let api = ApiServer::start("listing-restart");
    let client = api.client().await;
    full_seed_and_a_pending_shoot(&client, N).await;
    let proxy = FaultProxy::start(&api).await;
    proxy.set(Faults {
        watch_delay: Some((
            std::time::Duration::from_secs(3),
            Some("shoots".to_string()),
        )),
        ..Default::default()
    });
    let mut scheduler = Scheduler::start(
        &api,
        "listing-restart",
        SchedulerOptions {
            kubeconfig: Some(proxy.kubeconfig_for("listing-restart")),
            ..Default::default()
        },
    );
    eventually("the shoot stream open", || async {
        (proxy.open_watches(Some("shoots")) > 0).then_some(())
    })
    .await;
    assert_ne!(
        scheduler.readyz().map(|(code, _)| code),
        Some(200),
        "ready before the stream's end"
    );
    let args = api.kill_apiserver();
    proxy.clear();
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    api.relaunch_apiserver(&args);
    scheduler.wait_ready().await;
    // The relist streams, or, while the restarted server still fills its watch cache and
    // answers the stream 429, is made in pages at once; the server never refused streams.
    let streamed = lists(&scheduler, "Shoot", "streaming");
    let paged = lists(&scheduler, "Shoot", "paged");
    assert!(
        streamed >= 1.0 && streamed + paged >= 2.0,
        "{streamed} streamed, {paged} paged"
    );
    let logs = scheduler.logs();
    assert!(
        !logs.contains("the API server does not serve streaming lists"),
        "a restart is not a refusal:\n{logs}"
    );
    if paged > 0.0 {
        assert!(
            logs.lines()
                .any(|l| l.contains("the streaming list was not served")
                    && l.contains("kind=\"Shoot\"")),
            "a paged relist only after an error answer to the stream:\n{logs}"
        );
    }
    whole_landscape_then_bound_once(&client, &scheduler, N).await;
}
