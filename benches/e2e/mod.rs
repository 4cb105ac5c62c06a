//! End-to-end binding throughput: the real binary against the real test API server, 1,000
//! shoots created at once, bind times taken from a watch on shoots.

#[path = "../../tests/support/mod.rs"]
mod harness;
mod realistic;
pub mod scale;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use gardener_scheduler::api::Shoot;
use kube::Api;
use kube::api::{DynamicObject, PostParams};
use kube::runtime::{WatchStreamExt, watcher};

use harness::{ApiServer, Scheduler, SchedulerOptions};

const PROJECT: &str = "bench";

/// The outcome of one run.
pub struct E2eRun {
    pub concurrent_syncs: u32,
    /// `clientConnection` `qps` and `burst` of the scheduler
    pub client_rate: (f32, i32),
    pub shoots: usize,
    pub bound: usize,
    /// first create sent → last bind seen
    pub span: Duration,
    /// create sent → bind seen, per bound shoot
    pub latencies: Vec<Duration>,
    /// first create sent → last create answered
    pub create_span: Duration,
    /// requests the scheduler sent through its main client (the one `clientConnection`
    /// limits for binds: watches, binds, reads), from its `rest_client_requests_total` minus
    /// the reporter's `gardener_scheduler_event_client_requests_total`, over the whole run
    pub bind_client_requests: f64,
    /// requests of the reporter's own client (events, status.lastOperation), once it has sent
    /// what was queued
    pub report_client_requests: f64,
    /// reports the reporter dropped because its queue was full
    pub events_dropped: f64,
    /// last bind seen → the reporter's queue sent (each success event sent or dropped)
    pub events_lag: Duration,
    /// mean length in bytes of the decision record on the bound shoots (0: none)
    pub record_bytes: f64,
}

impl E2eRun {
    pub fn per_s(&self) -> f64 {
        self.bound as f64 / self.span.as_secs_f64()
    }

    /// Requests of the main client per bound shoot.
    pub fn bind_requests_per_shoot(&self) -> f64 {
        self.bind_client_requests / self.bound.max(1) as f64
    }
}

/// Success events expected for `shoots` bound shoots: one each.
fn latencies_len_hint(shoots: usize) -> f64 {
    shoots as f64
}

/// Sums the samples of `family` in an OpenMetrics exposition.
fn sum_family(text: &str, family: &str) -> f64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(family)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// [`run_with`] without further keys of `schedulers.shoot`.
pub fn run(
    concurrent_syncs: u32,
    client_rate: (f32, i32),
    seeds: usize,
    capacity: u32,
    shoots: usize,
    in_flight: usize,
    limit: Duration,
) -> E2eRun {
    run_with(
        concurrent_syncs,
        client_rate,
        seeds,
        capacity,
        shoots,
        in_flight,
        limit,
        "",
    )
}

/// Starts an API server with `seeds` × `capacity` seeds and a scheduler with `concurrent_syncs`
/// and the client rate limit `client_rate` (`qps`, `burst`; 0 qps: none),
/// creates `shoots` shoots with at most `in_flight` create requests open, and waits (at most
/// `limit`) until every one is bound. `shoot_config`: more keys of `schedulers.shoot`, one per
/// line.
#[allow(clippy::too_many_arguments)]
pub fn run_with(
    concurrent_syncs: u32,
    client_rate: (f32, i32),
    seeds: usize,
    capacity: u32,
    shoots: usize,
    in_flight: usize,
    limit: Duration,
    shoot_config: &'static str,
) -> E2eRun {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    rt.block_on(async move {
        let api = ApiServer::start(&format!("bench-e2e-{concurrent_syncs}-{}", client_rate.0));
        let client = api.client().await;
        harness::base_landscape(&client, PROJECT).await;
        for i in 0..seeds {
            harness::create_seed(&client, &format!("seed-{i:03}"), capacity, &[]).await;
        }
        let mut scheduler = Scheduler::start(
            &api,
            &format!("syncs-{concurrent_syncs}-qps-{}", client_rate.0),
            SchedulerOptions {
                concurrent_syncs,
                client_rate: Some(client_rate),
                shoot_config,
                ..Default::default()
            },
        );
        scheduler.wait_ready().await;

        // The watch runs before the first create, so no bind can be missed.
        let shoots_api: Api<Shoot> = Api::namespaced(client.clone(), &format!("garden-{PROJECT}"));
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let watch = tokio::spawn(async move {
            let mut ready_tx = Some(ready_tx);
            let mut bound: HashMap<String, Instant> = HashMap::new();
            let stream = watcher(shoots_api, watcher::Config::default()).default_backoff();
            futures::pin_mut!(stream);
            while let Some(ev) = stream.try_next().await.transpose() {
                let shoot = match ev {
                    Ok(watcher::Event::InitDone) => {
                        if let Some(tx) = ready_tx.take() {
                            let _ = tx.send(());
                        }
                        continue;
                    }
                    Ok(watcher::Event::Apply(s) | watcher::Event::InitApply(s)) => s,
                    Ok(_) => continue,
                    Err(e) => {
                        eprintln!("[bench] e2e watch error (retrying): {e}");
                        continue;
                    }
                };
                if harness::seed_of(&shoot).is_some()
                    && let Some(name) = shoot.metadata.name.clone()
                {
                    bound.entry(name).or_insert_with(Instant::now);
                    if bound.len() == shoots {
                        break;
                    }
                }
            }
            bound
        });
        ready_rx.await.expect("shoot watch started");

        let raw = harness::raw_ns::<Shoot>(&client, &format!("garden-{PROJECT}"));
        let start = Instant::now();
        let created: Vec<(String, Instant, Instant)> = futures::stream::iter(0..shoots)
            .map(|i| {
                let raw = raw.clone();
                async move {
                    let name = format!("s-{i:04}");
                    let obj: DynamicObject =
                        serde_json::from_value(harness::shoot_manifest(PROJECT, &name))
                            .expect("shoot manifest");
                    let sent = Instant::now();
                    raw.create(&PostParams::default(), &obj)
                        .await
                        .unwrap_or_else(|e| panic!("creating shoot {name}: {e}"));
                    (name, sent, Instant::now())
                }
            })
            .buffer_unordered(in_flight)
            .collect()
            .await;
        let create_span = created
            .iter()
            .map(|(_, _, done)| *done - start)
            .max()
            .unwrap_or_default();

        let bound = match tokio::time::timeout(limit, watch).await {
            Ok(r) => r.expect("watch task"),
            Err(_) => panic!(
                "not every shoot was bound within {limit:?} (concurrentSyncs {concurrent_syncs}); scheduler log tail:\n{}",
                scheduler
                    .logs()
                    .lines()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        };
        let mut latencies = Vec::with_capacity(shoots);
        let mut last = start;
        for (name, sent, _) in &created {
            if let Some(at) = bound.get(name) {
                latencies.push(at.saturating_duration_since(*sent));
                last = last.max(*at);
            }
        }
        // every bind has been seen; the success events follow off the bind path: wait until each
        // was sent or dropped (at most a minute), then read what the scheduler sent, by client
        let all_bound = Instant::now();
        let text = loop {
            let text = scheduler.metrics();
            let sent = sum_family(&text, "gardener_scheduler_event_client_requests_total");
            let dropped = sum_family(&text, "gardener_scheduler_events_dropped_total");
            if sent + dropped >= latencies_len_hint(shoots) || all_bound.elapsed() > Duration::from_secs(60) {
                break text;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let events_lag = all_bound.elapsed();
        let all = sum_family(&text, "rest_client_requests_total");
        let report_client_requests =
            sum_family(&text, "gardener_scheduler_event_client_requests_total");
        let events_dropped = sum_family(&text, "gardener_scheduler_events_dropped_total");
        let listed = raw
            .list(&Default::default())
            .await
            .expect("listing the shoots");
        let records: Vec<usize> = listed
            .items
            .iter()
            .filter_map(|s| {
                s.metadata
                    .annotations
                    .as_ref()?
                    .get("scheduling.gardener.cloud/decision")
                    .map(String::len)
            })
            .collect();
        let record_bytes = records.iter().sum::<usize>() as f64 / records.len().max(1) as f64;
        drop(scheduler);
        drop(api);
        E2eRun {
            concurrent_syncs,
            client_rate,
            shoots,
            bound: latencies.len(),
            span: last - start,
            latencies,
            create_span,
            bind_client_requests: all - report_client_requests,
            report_client_requests,
            events_dropped,
            events_lag,
            record_bytes,
        }
    })
}
