//! Faults met on the wire: the scheduler binary talks to the real test API server through the
//! fault proxy (tests/support/fault_proxy.rs), which black-holes watches, adds latency, answers
//! storms of 429 and 503, cuts watches, and loses the answers of committed binds. Every request
//! the proxy sees is recorded with the process that sent it, so the tests count requests and
//! check who wrote when.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

use crate::burst::{Transitions, assert_bound_once_within_capacity};
use crate::support::fault_proxy::{BlackHole, Class, FaultProxy, Faults, Silence, Storm, Target};
use crate::support::*;
use gardener_scheduler::api::Shoot;

const PROJECT: &str = "ft";
const NAMESPACE: &str = "garden-ft";
const LEASE: &str = "gardener-scheduler-leader-election";

/// Records every distinct `spec.seedName` each shoot of `namespace` takes, as
/// `burst::record_transitions` does, but rides out watch errors (a 410 on a compacted etcd, a
/// restarting server) by watching again; after a relist it sees each shoot's current seed.
fn record_transitions(
    client: &kube::Client,
    namespace: &str,
) -> (Transitions, tokio::task::JoinHandle<()>) {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let seen: Transitions = Arc::default();
    let api = Api::<Shoot>::namespaced(client.clone(), namespace);
    let task = tokio::spawn({
        let seen = seen.clone();
        async move {
            watcher::watcher(api, watcher::Config::default())
                .default_backoff()
                .for_each(|ev| {
                    if let Ok(watcher::Event::Apply(s) | watcher::Event::InitApply(s)) = ev
                        && let Some(seed) = seed_of(&s)
                    {
                        let mut m = seen.lock().unwrap();
                        let v = m
                            .entry(s.metadata.name.clone().unwrap_or_default())
                            .or_default();
                        if v.last().map(String::as_str) != Some(seed) {
                            v.push(seed.to_string());
                        }
                    }
                    async {}
                })
                .await;
        }
    });
    (seen, task)
}

/// A scheduler talking through `proxy` as `name` (its token there, and its identity prefix).
fn replica(
    api: &ApiServer,
    proxy: &FaultProxy,
    name: &'static str,
    opts: SchedulerOptions,
) -> Scheduler {
    Scheduler::start(
        api,
        name,
        SchedulerOptions {
            kubeconfig: Some(proxy.kubeconfig_for(name)),
            hostname: Some(name),
            ..opts
        },
    )
}

fn elected(lease: LeaseTimes) -> SchedulerOptions {
    SchedulerOptions {
        leader_elect: true,
        lease,
        ..Default::default()
    }
}

/// The Lease as one poll saw it.
#[derive(Clone, Debug)]
struct LeaseSample {
    at: Instant,
    holder: Option<String>,
    /// nobody leads: no holder, or the holder's renewal is older than the lease duration
    leaderless: bool,
}

async fn lease_sample(client: &kube::Client) -> Option<LeaseSample> {
    let lease = Api::<Lease>::namespaced(client.clone(), "garden")
        .get_opt(LEASE)
        .await
        .ok()?;
    let at = Instant::now();
    let spec = lease.and_then(|l| l.spec).unwrap_or_default();
    let holder = spec.holder_identity.filter(|h| !h.is_empty());
    let duration = spec.lease_duration_seconds.unwrap_or(0) as f64;
    let expired = spec.renew_time.is_none_or(|t| {
        k8s_openapi::jiff::Timestamp::now()
            .duration_since(t.0)
            .as_secs_f64()
            > duration
    });
    Some(LeaseSample {
        at,
        leaderless: holder.is_none() || expired,
        holder,
    })
}

/// Polls the Lease every 200 ms in the background.
fn poll_lease(
    client: &kube::Client,
) -> (Arc<Mutex<Vec<LeaseSample>>>, tokio::task::JoinHandle<()>) {
    let samples: Arc<Mutex<Vec<LeaseSample>>> = Arc::default();
    let task = tokio::spawn({
        let (client, samples) = (client.clone(), samples.clone());
        async move {
            loop {
                if let Some(s) = lease_sample(&client).await {
                    samples.lock().unwrap().push(s);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    });
    (samples, task)
}

/// The longest stretch of consecutive leaderless samples.
fn longest_leaderless(samples: &[LeaseSample]) -> Duration {
    let (mut longest, mut since) = (Duration::ZERO, None::<Instant>);
    for s in samples {
        match (s.leaderless, since) {
            (true, None) => since = Some(s.at),
            (true, Some(t)) => longest = longest.max(s.at - t),
            (false, _) => since = None,
        }
    }
    longest
}

async fn holder(client: &kube::Client) -> Option<String> {
    lease_sample(client).await.and_then(|s| s.holder)
}

/// Waits (up to `limit`) until the Lease holder's identity starts with `<name>_`.
async fn wait_holder(client: &kube::Client, name: &str, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        if holder(client)
            .await
            .is_some_and(|h| h.starts_with(&format!("{name}_")))
        {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "{name} did not take the lease within {limit:?} (holder {:?})",
            holder(client).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn create_shoots(client: &kube::Client, prefix: &str, n: usize, pause: Duration) {
    for i in 0..n {
        create_shoot(client, PROJECT, &format!("{prefix}-{i:03}")).await;
        tokio::time::sleep(pause).await;
    }
}

async fn bound(client: &kube::Client) -> usize {
    list_shoots(client, PROJECT)
        .await
        .iter()
        .filter(|s| seed_of(s).is_some())
        .count()
}

async fn wait_all_bound(client: &kube::Client, n: usize, limit: Duration) {
    let start = Instant::now();
    loop {
        let b = bound(client).await;
        if b == n {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{b} of {n} shoots bound after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn feed_age(s: &Scheduler, kind: &str) -> Option<f64> {
    s.metric(&format!(
        "gardener_scheduler_feed_last_activity_seconds{{kind=\"{kind}\"}}"
    ))
}

/// (a) A shoot watch that goes silent without closing (a half-open connection) is noticed and
/// restarted: a shoot created meanwhile is bound within 60 s. A shoot feed that stays dead (every
/// re-watch unanswered) shows in `feed_last_activity_seconds` and `/readyz`, and the leader hands
/// the lease to a standby whose own connection works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_shoot_watch_is_restarted_and_a_dead_feed_hands_over_to_the_standby() {
    let (api, client) = ApiServer::start_with_landscape("faults-silent-watch", PROJECT).await;
    create_seed(&client, "s-a", 20, &[]).await;
    let faulty = FaultProxy::start(&api).await;
    let clean = FaultProxy::start(&api).await;
    let mut one = replica(&api, &faulty, "one", elected(LeaseTimes::Short));
    one.wait_ready().await;
    wait_holder(&client, "one", DEADLINE).await;
    let mut two = replica(&api, &clean, "two", elected(LeaseTimes::Short));
    two.wait_ready().await;

    // phase 1: the open shoot watch goes half-open; new connections work
    eventually("the leader's shoot watch", || async {
        (faulty.open_watches(Some("shoots")) > 0).then_some(())
    })
    .await;
    let silenced = faulty.silence_open_watches(Some("shoots"));
    let t0 = Instant::now();
    create_shoot(&client, PROJECT, "during-silence").await;
    let mut peak_age = 0.0f64;
    let bound_after = loop {
        peak_age = peak_age.max(feed_age(&one, "Shoot").unwrap_or(0.0));
        if seed_of(&get_shoot(&client, PROJECT, "during-silence").await).is_some() {
            break t0.elapsed();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "a shoot created while the shoot watch was silent was not bound within 90 s \
             (feed_last_activity_seconds{{kind=\"Shoot\"}} peaked at {peak_age}; {silenced} watch(es) silenced)"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let rewatch = faulty
        .requests()
        .into_iter()
        .find(|s| {
            s.class == Class::Watch && s.resource == "shoots" && s.client == "one" && s.at > t0
        })
        .map(|s| s.at - t0)
        .expect("a new shoot watch after the silence");
    eprintln!(
        "silent shoot watch: re-watched {rewatch:?} after the silence began, shoot bound after {bound_after:?}; \
         feed_last_activity_seconds{{kind=\"Shoot\"}} peaked at {peak_age:.1} s"
    );
    assert!(
        bound_after <= Duration::from_secs(60),
        "bound after {bound_after:?}, the goal is 60 s"
    );
    assert!(
        peak_age >= rewatch.as_secs_f64() * 0.7,
        "the feed's age ({peak_age:.1} s at most) did not show a silence of {rewatch:?}"
    );
    // checked at the end, so that the second phase runs (and reports) either way
    let mut deferred = Vec::new();
    // the feed notes a watch its watcher gave up on its next check, once a second
    let noted = Instant::now();
    let silent_restarts = loop {
        let n = one.metric_sum(
            "gardener_scheduler_watch_restarts_total",
            &[("kind", "Shoot"), ("reason", "silent")],
        );
        if n >= 1.0 || noted.elapsed() > Duration::from_secs(5) {
            break n;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    if silent_restarts < 1.0 {
        deferred.push(format!(
            "the restart of the silent shoot watch is not counted in \
             watch_restarts_total{{kind=\"Shoot\",reason=\"silent\"}}: {:?}",
            one.metrics()
                .lines()
                .filter(|l| l.starts_with("gardener_scheduler_watch_restarts"))
                .collect::<Vec<_>>()
        ));
    }
    let logged = one
        .logs()
        .lines()
        .filter(|l| l.contains(" WARN ") && l.contains("kind=\"Shoot\""))
        .count();
    if logged == 0 {
        deferred.push("the silent shoot watch was restarted without a WARN line".into());
    }
    assert!(
        feed_age(&one, "Shoot").is_some_and(|a| a < 30.0),
        "the restarted feed is live again: {:?}",
        feed_age(&one, "Shoot")
    );

    // phase 2: every shoot watch and list of the leader unanswered from now on
    faulty.set(Faults {
        black_hole: Some(BlackHole {
            resource: Some("shoots".into()),
            silence: Silence::NoAnswer,
            lists: true,
        }),
        ..Default::default()
    });
    let t1 = Instant::now();
    create_shoot(&client, PROJECT, "during-partition").await;
    let (mut unready, mut handed_over, mut bound2) = (None, None, None);
    let mut peak_age = 0.0f64;
    let mut readyz_body = String::new();
    let mut holders = Vec::new();
    while unready.is_none() || handed_over.is_none() || bound2.is_none() {
        peak_age = peak_age.max(feed_age(&one, "Shoot").unwrap_or(0.0));
        if unready.is_none()
            && let Some((503, body)) = one.readyz()
        {
            unready = Some(t1.elapsed());
            readyz_body = body;
        }
        let h = holder(&client).await;
        if handed_over.is_none() && h.as_deref().is_some_and(|h| h.starts_with("two_")) {
            handed_over = Some(t1.elapsed());
        }
        holders.push(h);
        if bound2.is_none()
            && seed_of(&get_shoot(&client, PROJECT, "during-partition").await).is_some()
        {
            bound2 = Some(t1.elapsed());
        }
        assert!(
            t1.elapsed() < Duration::from_secs(110),
            "with the leader's shoot feed dead for {:?}: /readyz 503 after {unready:?}, lease handed over after \
             {handed_over:?}, shoot bound after {bound2:?}; feed age peaked at {peak_age:.1} s",
            t1.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (unready, handed_over, bound2) = (unready.unwrap(), handed_over.unwrap(), bound2.unwrap());
    eprintln!(
        "dead shoot feed: /readyz 503 after {unready:?} ({readyz_body:?}), lease to the standby after {handed_over:?}, \
         shoot bound after {bound2:?}; feed age peaked at {peak_age:.1} s"
    );
    assert!(
        readyz_body.contains("Shoot"),
        "/readyz names the stale feed: {readyz_body:?}"
    );
    assert!(
        peak_age > 60.0,
        "feed_last_activity_seconds{{kind=\"Shoot\"}} peaked at {peak_age}"
    );
    // stale for more than 60 s, then the lease is released (or expires) and taken
    assert!(
        handed_over <= Duration::from_secs(75),
        "the standby led only {handed_over:?} after the feed died"
    );
    assert!(bound2 <= handed_over + Duration::from_secs(10));
    // the stale replica does not campaign: once handed over, the lease stays with the standby
    let after: Vec<&Option<String>> = holders
        .iter()
        .skip_while(|h| !h.as_deref().is_some_and(|h| h.starts_with("two_")))
        .collect();
    assert!(
        after
            .iter()
            .all(|h| h.as_deref().is_none_or(|h| h.starts_with("two_"))),
        "{after:?}"
    );

    // the feed heals: ready again
    faulty.clear();
    eventually("the healed replica to be ready again", || async {
        matches!(one.readyz(), Some((200, _))).then_some(())
    })
    .await;
    assert!(one.is_running() && two.is_running());
    assert!(deferred.is_empty(), "{}", deferred.join("\n"));
}

/// (b) A bind the server committed whose answer is lost (a 502 from an ingress) is taken for
/// what a read of the shoot shows: bound, one success event, no failure reported, and its slot
/// stays counted (the seed has one slot; the other shoot is not placed there although the bind
/// shows in the scheduler's watch only seconds later).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_bind_answered_502_counts_as_bound_and_keeps_its_slot() {
    let (api, client) = ApiServer::start_with_landscape("faults-lost-answer", PROJECT).await;
    create_seed(&client, "one-slot", 1, &[]).await;
    let proxy = FaultProxy::start(&api).await;
    proxy.set(Faults {
        lose_bind_answers: 1,
        // the scheduler learns of every shoot change 5 s late, reads stay prompt
        watch_delay: Some((Duration::from_secs(5), Some("shoots".into()))),
        ..Default::default()
    });
    let mut scheduler = replica(&api, &proxy, "solo", SchedulerOptions::default());
    scheduler.wait_ready().await;
    let (seen, watch) = record_transitions(&client, NAMESPACE);

    futures::join!(
        create_shoot(&client, PROJECT, "first"),
        create_shoot(&client, PROJECT, "second")
    );
    let lost = eventually("a bind whose answer the proxy replaces by 502", || async {
        proxy
            .requests()
            .into_iter()
            .find(|s| s.fault == Some("lost-answer"))
    })
    .await;
    let x = lost.name.clone().unwrap();
    let y = if x == "first" { "second" } else { "first" };
    assert_eq!(
        seed_of(&get_shoot(&client, PROJECT, &x).await),
        Some("one-slot"),
        "the server committed the bind"
    );
    // past the watch delay and the retries of the other shoot
    tokio::time::sleep(Duration::from_secs(12)).await;

    let events = shoot_events(&client, PROJECT, &x).await;
    assert!(
        !events
            .iter()
            .any(|e| e.reason.as_deref() == Some("SchedulingFailed")),
        "{x} was bound, yet reported as failed: {events:?}"
    );
    let obj = raw_ns::<Shoot>(&client, NAMESPACE).get(&x).await.unwrap();
    assert!(
        obj.data["status"]["lastOperation"].is_null(),
        "{x} was bound, yet its status.lastOperation says {}",
        obj.data["status"]["lastOperation"]
    );
    assert_eq!(
        seed_of(&get_shoot(&client, PROJECT, y).await),
        None,
        "{y} was placed on the seed whose only slot {x} holds"
    );
    let binds: BTreeMap<String, usize> = proxy
        .requests()
        .iter()
        .filter(|s| s.class == Class::Bind)
        .fold(BTreeMap::new(), |mut m, s| {
            *m.entry(s.name.clone().unwrap()).or_default() += 1;
            m
        });
    assert_eq!(
        binds,
        BTreeMap::from([(x.clone(), 1)]),
        "one binding request, for the shoot that got the slot"
    );
    assert_eq!(
        seen.lock().unwrap().get(&x).cloned(),
        Some(vec!["one-slot".to_string()])
    );
    let success = shoot_events(&client, PROJECT, &x)
        .await
        .into_iter()
        .find(|e| e.reason.as_deref() == Some("SchedulingSuccessful"));
    assert!(
        success.is_some(),
        "the read showed {x} bound: a success event is due"
    );
    eprintln!("lost answer: {x} bound once with a success event, {y} pending");
    watch.abort();
}

/// (c) Watches cut (every 3 s, and at the start of each round) while etcd is compacted and
/// shoots are created: re-watches from a compacted revision get a real 410 Gone (the API
/// server's watch cache is off, so etcd serves every watch), the scheduler lists again, and
/// every shoot, most of them created while the watches were down, is bound exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_cut_on_a_compacted_etcd_list_again_and_lose_no_shoot() {
    let api = ApiServer::start_with_flags("faults-compaction", &["--watch-cache=false"]);
    let client = api.client().await;
    base_landscape(&client, PROJECT).await;
    create_seed(&client, "s-a", 40, &[]).await;
    create_seed(&client, "s-b", 40, &[]).await;
    let proxy = FaultProxy::start(&api).await;
    proxy.set(Faults {
        cut_watches_after: Some(Duration::from_secs(3)),
        ..Default::default()
    });
    let mut scheduler = replica(&api, &proxy, "solo", SchedulerOptions::default());
    scheduler.wait_ready().await;
    let (seen, watch) = record_transitions(&client, NAMESPACE);

    // Six rounds: the open watches are cut and every re-watch refused (503) for a moment;
    // meanwhile shoots are created, something else is written (so etcd's revision passes the
    // watches' last one) and etcd compacted; then the watches may start again, from a revision
    // etcd no longer has.
    let n = 60;
    let mut compactions = 0;
    for round in 0..6 {
        proxy.set(Faults {
            cut_watches_after: Some(Duration::from_secs(3)),
            storm: Some(Storm {
                status: 503,
                retry_after: None,
                retry_after_in_body: false,
                fraction: 1.0,
                targets: vec![Target::Watches],
            }),
            ..Default::default()
        });
        proxy.cut_open_watches(None);
        for i in 0..n / 6 {
            create_shoot(&client, PROJECT, &format!("shoot-{round}-{i:02}")).await;
        }
        label_seed(&client, "s-b", &[("round", &round.to_string())]).await;
        api.compact_etcd();
        compactions += 1;
        proxy.set(Faults {
            cut_watches_after: Some(Duration::from_secs(3)),
            ..Default::default()
        });
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    proxy.clear();
    wait_all_bound(&client, n, DEADLINE).await;
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == n).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(&client, PROJECT, &seen, n).await;

    let logs = scheduler.logs();
    let gone: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("410") || l.contains("too old") || l.contains("Expired"))
        .collect();
    let expired = proxy.expired_watch_events(None);
    let expired_shoots = proxy.expired_watch_events(Some("shoots"));
    let counts = proxy.counts();
    eprintln!(
        "compaction: {compactions} compactions, {expired} watch events 410 Gone passed to the scheduler \
         ({expired_shoots} on shoots), \
         requests {counts:?}; scheduler log lines about it: {}",
        gone.len()
    );
    for l in gone.iter().take(3) {
        eprintln!("  {l}");
    }
    assert!(
        expired_shoots >= 1,
        "no shoot re-watch met a compacted revision"
    );
    assert!(
        gone.iter().any(|l| l.contains("kind=\"Shoot\"")),
        "the scheduler's log does not show the 410 of its shoot watch"
    );
    assert!(
        !gone.is_empty(),
        "the scheduler's log does not show the 410s the server sent"
    );
    // a relist is a streamed list (a watch) on this server; lists_total counts both ways
    let shoot_lists = scheduler.metric_sum("gardener_scheduler_lists_total", &[("kind", "Shoot")]);
    assert!(
        shoot_lists >= 2.0,
        "the scheduler listed shoots again after a 410: {shoot_lists} lists, requests {counts:?}"
    );
    assert!(scheduler.is_running());
    watch.abort();
}

/// (d) Storms on binds, lists and lease requests, half of each replica's requests of each kind
/// refused for 40 s: 15 s of 429 `Retry-After: 2` as kube-apiserver sends it (header and
/// `details.retryAfterSeconds`), 15 s of 429 with the header only (as an ingress or gateway
/// sends it), 10 s of 503. Two replicas with upstream's lease settings. Every shoot is bound
/// once, nobody binds without the lease, the leader keeps it, no leaderless stretch exceeds
/// one leaseDuration, and retries stay within the bounds stated below (counted at the proxy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storms_of_429_and_503_cost_no_leadership_and_no_shoot() {
    let (api, client) = ApiServer::start_with_landscape("faults-storm", PROJECT).await;
    create_seed(&client, "s-a", 30, &[]).await;
    create_seed(&client, "s-b", 30, &[]).await;
    let proxy = FaultProxy::start(&api).await;
    let mut one = replica(&api, &proxy, "one", elected(LeaseTimes::Defaults));
    one.wait_ready().await;
    wait_holder(&client, "one", DEADLINE).await;
    let leader = holder(&client).await.unwrap();
    let (samples, poller) = poll_lease(&client);
    let (seen, watch) = record_transitions(&client, NAMESPACE);

    let storm = |status, retry_after, retry_after_in_body| Storm {
        status,
        retry_after,
        retry_after_in_body,
        fraction: 0.5,
        targets: vec![Target::Binds, Target::Lists, Target::Lease],
    };
    proxy.set(Faults {
        storm: Some(storm(429, Some(2), true)),
        ..Default::default()
    });
    let t0 = Instant::now();
    let header_only = t0 + Duration::from_secs(15);
    // the standby starts in the storm: its first lists meet it
    let mut two = replica(&api, &proxy, "two", elected(LeaseTimes::Defaults));
    let n = 30;
    let creator = tokio::spawn({
        let client = client.clone();
        async move { create_shoots(&client, "storm", n, Duration::from_millis(800)).await }
    });
    tokio::time::sleep_until(header_only.into()).await;
    proxy.set(Faults {
        storm: Some(storm(429, Some(2), false)),
        ..Default::default()
    });
    tokio::time::sleep_until((t0 + Duration::from_secs(30)).into()).await;
    proxy.set(Faults {
        storm: Some(storm(503, None, false)),
        ..Default::default()
    });
    tokio::time::sleep(Duration::from_secs(10)).await;
    proxy.clear();
    let t_end = Instant::now();
    creator.await.unwrap();
    wait_all_bound(&client, n, DEADLINE).await;
    two.wait_ready().await;
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == n).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(&client, PROJECT, &seen, n).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    poller.abort();

    let requests = proxy.requests();
    let storm_requests: Vec<_> = requests
        .iter()
        .filter(|s| s.at >= t0 && s.at <= t_end)
        .collect();
    let mut counts: BTreeMap<(String, Class), (usize, usize)> = BTreeMap::new();
    for s in &storm_requests {
        let e = counts.entry((s.client.clone(), s.class)).or_default();
        e.0 += 1;
        if s.fault == Some("storm") {
            e.1 += 1;
        }
    }
    let samples = samples.lock().unwrap().clone();
    let gap = longest_leaderless(&samples);
    let holders: std::collections::BTreeSet<_> =
        samples.iter().filter_map(|s| s.holder.clone()).collect();
    eprintln!(
        "storm: requests (all, refused) per client and class during the 40 s: {counts:?}; holders {holders:?}; \
         longest leaderless stretch {gap:?}"
    );

    // safety first: nobody binds without the lease (binds only by the holder of the moment)
    let changed_at = samples
        .iter()
        .find(|s| s.holder.as_deref().is_some_and(|h| h != leader))
        .map(|s| s.at);
    for s in requests.iter().filter(|s| s.class == Class::Bind) {
        let by_leader = s.client == "one";
        let ok = match changed_at {
            None => by_leader,
            Some(t) => {
                (by_leader && s.at < t) || (!by_leader && s.at >= t - Duration::from_secs(1))
            }
        };
        assert!(
            ok,
            "bind of {:?} by {} at {:?} after the storm began, the lease changed hands at {:?}",
            s.name,
            s.client,
            s.at - t0,
            changed_at.map(|t| t - t0)
        );
    }

    // the rest is collected, so that one run reports every bound it misses
    let mut failures: Vec<String> = Vec::new();
    if gap > Duration::from_secs(15) {
        failures.push(format!(
            "no leader for {gap:?}, longer than one leaseDuration"
        ));
    }
    if holders.iter().any(|h| *h != leader) {
        failures.push(format!("the leader lost its lease: holders {holders:?}"));
    }
    let leadership: Vec<String> = one
        .logs()
        .lines()
        .filter(|l| l.contains("leadership") || l.contains("leader election"))
        .map(str::to_string)
        .collect();
    if leadership.iter().any(|l| l.contains("lost leadership")) {
        failures.push(format!(
            "the leader lost leadership:\n{}",
            leadership.join("\n")
        ));
    }

    // Binds: a 429 is a refusal the queue retries no sooner than Retry-After, so the next bind
    // of the same shoot comes at least 2 s later (100 ms of slack for timers), whether the
    // server said so in the header and the body or in the header only.
    let slack = Duration::from_millis(100);
    let mut early: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (i, s) in requests.iter().enumerate() {
        if s.class != Class::Bind || s.fault != Some("storm") || s.status != Some(429) {
            continue;
        }
        let next = requests[i + 1..]
            .iter()
            .find(|o| o.client == s.client && o.class == Class::Bind && o.name == s.name);
        if let Some(next) = next
            && next.at - s.at + slack < Duration::from_secs(2)
        {
            let phase = if s.at < header_only {
                "header and details.retryAfterSeconds"
            } else {
                "header only"
            };
            early.entry(phase).or_default().push(format!(
                "{:?} after {:?}",
                s.name.as_deref().unwrap_or_default(),
                next.at - s.at
            ));
        }
    }
    for (phase, binds) in &early {
        failures.push(format!(
            "binds sent again sooner than Retry-After: 2 ({phase}): {}",
            binds.join(", ")
        ));
    }
    // Lease requests: a refused one is tried again after a pause, never at once (the lease
    // client's own backoff starts at 50 ms; it may cut a Retry-After short, down to a quarter
    // of retryPeriod, so that a renewal fits several tries into renewDeadline: the bound is no
    // pause under 40 ms), and a replica sends at most 5 lease requests a second on average (a
    // renewal every 2 s is 1 a second). The pauses seen are printed per kind of refusal.
    let mut early: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut pauses: BTreeMap<&str, (Duration, Duration)> = BTreeMap::new();
    for (i, s) in requests.iter().enumerate() {
        if !s.class.is_lease() || s.fault != Some("storm") {
            continue;
        }
        let phase = match s.status {
            Some(429) if s.at < header_only => "429, header and details.retryAfterSeconds",
            Some(429) => "429, header only",
            _ => "503 without Retry-After",
        };
        let next = requests[i + 1..]
            .iter()
            .find(|o| o.client == s.client && o.class.is_lease());
        if let Some(next) = next {
            let pause = next.at - s.at;
            let p = pauses.entry(phase).or_insert((pause, pause));
            p.0 = p.0.min(pause);
            p.1 = p.1.max(pause);
            if pause < Duration::from_millis(40) {
                early
                    .entry(phase)
                    .or_default()
                    .push(format!("{} {:?} after {pause:?}", s.client, s.class));
            }
        }
    }
    eprintln!("storm: pauses after a refused lease request (shortest, longest): {pauses:?}");
    for (phase, tries) in &early {
        failures.push(format!(
            "lease requests sent again too soon after a refused one ({phase}): {}",
            tries.join(", ")
        ));
    }
    let window = (t_end - t0).as_secs_f64();
    for c in ["one", "two"] {
        let k = storm_requests
            .iter()
            .filter(|s| s.client == c && s.class.is_lease())
            .count();
        if k as f64 > 5.0 * window {
            failures.push(format!(
                "{c} sent {k} lease requests in {window:.0} s of storm"
            ));
        }
    }
    // Lists: a replica lists each kind once to start and again only after an error, on the
    // watch backoff (about 0.8 s doubling, jittered); every second list is refused, so each
    // kind needs at most two lists to sync, and 40 s of storm allow no more than 21 per kind
    // and replica even at a 2 s pace. A retry loop inside the client would exceed it.
    let mut lists: BTreeMap<(String, String), usize> = BTreeMap::new();
    for s in storm_requests.iter().filter(|s| s.class == Class::List) {
        *lists
            .entry((s.client.clone(), s.resource.clone()))
            .or_default() += 1;
    }
    for ((c, r), k) in &lists {
        if *k > 21 {
            failures.push(format!("{c} listed {r} {k} times in 40 s of storm"));
        }
    }
    // Every attempt goes through the scheduler's own counted stack (kube's retry layer off): the
    // 429s the proxy gave a replica's binds and lists are all in its request counter.
    for (name, s) in [("one", &one), ("two", &two)] {
        let given = requests
            .iter()
            .filter(|r| r.client == name && r.status == Some(429))
            .filter(|r| matches!(r.class, Class::Bind | Class::List))
            .count() as f64;
        let counted = s.metric_sum("rest_client_requests_total", &[("code", "429")]);
        if given > counted {
            failures.push(format!(
                "{name}: the proxy answered {given} binds and lists 429, the scheduler counted {counted} 429s"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    watch.abort();
}

/// (e) Two replicas on tight capacity (exactly as many slots as shoots): the leader is frozen
/// (SIGSTOP) past its lease while binds wait in its rate limiter and in the proxy; the standby
/// takes over; the old leader resumes. No shoot is bound twice, no seed holds more than it
/// allocates, and the old leader writes nothing once the lease has moved on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_frozen_past_its_lease_with_binds_in_flight_neither_double_binds_nor_overcommits()
{
    let (api, client) = ApiServer::start_with_landscape("faults-frozen", PROJECT).await;
    create_seed(&client, "s-a", 20, &[]).await;
    create_seed(&client, "s-b", 20, &[]).await;
    let proxy = FaultProxy::start(&api).await;
    proxy.set(Faults {
        latency: Some((Duration::from_millis(800), Target::Binds)),
        ..Default::default()
    });
    // two requests a second: binds queue in the client while the leader works through them
    let opts = || SchedulerOptions {
        client_rate: Some((2.0, 1)),
        ..elected(LeaseTimes::Short)
    };
    let mut one = replica(&api, &proxy, "one", opts());
    one.wait_ready().await;
    wait_holder(&client, "one", DEADLINE).await;
    let mut two = replica(&api, &proxy, "two", opts());
    two.wait_ready().await;
    let (seen, watch) = record_transitions(&client, NAMESPACE);

    let n = 40;
    create_shoots(&client, "tight", n, Duration::ZERO).await;
    eventually("part of the shoots to be bound", || async {
        (bound(&client).await >= 6).then_some(())
    })
    .await;
    one.pause();
    let frozen = Instant::now();
    let took = wait_holder(&client, "two", DEADLINE).await;
    let moved = Instant::now();
    tokio::time::sleep_until((frozen + Duration::from_secs(7)).into()).await;
    one.resume();
    wait_all_bound(&client, n, DEADLINE).await;
    eventually("the resumed process to see it lost the lease", || async {
        (one.metric("gardener_scheduler_leader") == Some(0.0)).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == n).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(&client, PROJECT, &seen, n).await;

    let requests = proxy.requests();
    let late: Vec<_> = requests
        .iter()
        .filter(|s| s.client == "one" && s.at > moved)
        .filter(|s| !s.class.is_lease() && s.method != http::Method::GET)
        .map(|s| (s.at - frozen, s.method.clone(), s.class, s.name.clone()))
        .collect();
    let binds = |c: &str| {
        requests
            .iter()
            .filter(|s| s.client == c && s.class == Class::Bind)
            .count()
    };
    eprintln!(
        "frozen leader: standby led {took:?} after SIGSTOP; binds sent by one {}, by two {}; writes by one after the lease moved: {late:?}",
        binds("one"),
        binds("two")
    );
    assert!(
        late.is_empty(),
        "the old leader wrote after the lease had moved on: {late:?}"
    );
    assert!(binds("two") > 0, "the standby bound the rest");
    assert!(one.logs().contains("lost leadership"));
    watch.abort();
}

/// (f) Failover with upstream's lease settings (15 s / 10 s / 2 s): after SIGKILL the standby
/// waits out the lease; after SIGTERM the leader releases it and the standby leads at its next
/// retry. Measured from the signal to the Lease changing hands and to the standby's first bind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_with_upstream_lease_settings_after_sigkill_and_sigterm() {
    let (api, client) = ApiServer::start_with_landscape("faults-failover", PROJECT).await;
    create_seed(&client, "s-a", 50, &[]).await;
    let proxy = FaultProxy::start(&api).await;
    let mut one = replica(&api, &proxy, "one", elected(LeaseTimes::Defaults));
    one.wait_ready().await;
    wait_holder(&client, "one", DEADLINE).await;
    let mut two = replica(&api, &proxy, "two", elected(LeaseTimes::Defaults));
    two.wait_ready().await;

    let first_bind_by = |name: &str, after: Instant| {
        proxy
            .requests()
            .into_iter()
            .find(|s| s.client == name && s.class == Class::Bind && s.at > after)
            .map(|s| s.at - after)
    };

    one.kill();
    let killed = Instant::now();
    create_shoot(&client, PROJECT, "after-kill").await;
    let kill_takeover = wait_holder(&client, "two", Duration::from_secs(40)).await;
    let kill_bind = eventually("the standby's first bind after SIGKILL", || async {
        first_bind_by("two", killed)
    })
    .await;

    let mut three = replica(&api, &proxy, "three", elected(LeaseTimes::Defaults));
    three.wait_ready().await;
    std::process::Command::new("kill")
        .arg("-TERM")
        .arg(two.pid().to_string())
        .status()
        .unwrap();
    let termed = Instant::now();
    create_shoot(&client, PROJECT, "after-term").await;
    let term_takeover = wait_holder(&client, "three", Duration::from_secs(40)).await;
    let term_bind = eventually("the standby's first bind after SIGTERM", || async {
        first_bind_by("three", termed)
    })
    .await;
    assert!(two.terminate().success());

    eprintln!(
        "failover (15 s / 10 s / 2 s): SIGKILL: lease taken after {kill_takeover:?}, first bind after {kill_bind:?}; \
         SIGTERM: lease taken after {term_takeover:?}, first bind after {term_bind:?}"
    );
    // the standby must see the record unchanged for leaseDuration; the leader renewed at most
    // one retryPeriod before the kill; the standby notices at its next retry (+20% jitter)
    assert!(
        kill_takeover >= Duration::from_secs(13) && kill_takeover <= Duration::from_secs(21),
        "SIGKILL: lease taken after {kill_takeover:?}, expected 13..21 s"
    );
    assert!(kill_bind <= kill_takeover + Duration::from_secs(3));
    assert!(
        term_takeover <= Duration::from_secs(5),
        "SIGTERM: lease taken after {term_takeover:?}"
    );
    assert!(term_bind <= term_takeover + Duration::from_secs(3));
    assert!(three.is_running());
}
