//! Binds refused forever, by an admission-like proxy in front of the API server, for some
//! shoots: the others bind, and the refused ones are retried on their own schedule
//! (`retrySyncPeriod` 1 s, doubling up to `backoff.max` 4 s), never in a loop. The schedule is
//! the queue's own [`BackoffPolicy`]; `controller::tests::storm` holds many more failures to it
//! over half an hour of paused clock.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::proxy::{REFUSE_LABEL, RefusingProxy};
use crate::support::*;
use gardener_scheduler::api::Shoot;
use gardener_scheduler::controller::BackoffPolicy;

const POLICY: BackoffPolicy = BackoffPolicy {
    initial: Duration::from_secs(1),
    max: Duration::from_secs(4),
};
/// Binding requests each refused shoot is watched for: at 0, 1, 3 and 7 s on its schedule.
const WATCHED: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shoots_refused_by_admission_are_retried_on_their_schedule_while_the_others_bind() {
    let (api, client) = ApiServer::start_with_landscape("refusals", "dev").await;
    create_seed(&client, "seed-a", 50, &[]).await;
    let proxy = RefusingProxy::start(&api).await;
    let mut scheduler = Scheduler::start(
        &api,
        "refusals",
        SchedulerOptions {
            kubeconfig: Some(proxy.kubeconfig.clone()),
            backoff: ("1s", "4s"),
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;

    let refused: Vec<String> = (0..3).map(|i| format!("refused-{i}")).collect();
    for name in &refused {
        let mut m = shoot_manifest("dev", name);
        m["metadata"]["labels"] = json!({ REFUSE_LABEL: "true" });
        raw_ns::<Shoot>(&client, "garden-dev")
            .create(&Default::default(), &serde_json::from_value(m).unwrap())
            .await
            .unwrap();
    }
    let others: Vec<String> = (0..5).map(|i| format!("other-{i}")).collect();
    for name in &others {
        create_shoot(&client, "dev", name).await;
    }
    eventually("the shoots without the label to be bound", || async {
        let shoots = list_shoots(&client, "dev").await;
        let bound = shoots
            .iter()
            .filter(|s| seed_of(s).is_some())
            .filter(|s| others.contains(s.metadata.name.as_ref().unwrap()))
            .count();
        (bound == others.len()).then_some(())
    })
    .await;

    let per_shoot = || {
        let mut per_shoot: BTreeMap<String, Vec<Instant>> = BTreeMap::new();
        for (at, name) in proxy.refused() {
            per_shoot.entry(name).or_default().push(at);
        }
        per_shoot
    };
    eventually("each refused shoot to be retried three times", || async {
        let seen = per_shoot();
        (seen.len() == refused.len() && seen.values().all(|t| t.len() >= WATCHED)).then_some(())
    })
    .await;
    let end = Instant::now();
    let per_shoot = per_shoot();
    assert_eq!(
        per_shoot.keys().cloned().collect::<Vec<_>>(),
        refused,
        "exactly the labelled shoots were refused"
    );
    for (name, times) in &per_shoot {
        let window = end - times[0];
        let bound = POLICY.attempts_within(window);
        assert!(
            times.len() <= bound,
            "{name}: {} binding requests within {window:?}, more than the {bound} its retry schedule allows",
            times.len()
        );
        for (n, pair) in times.windows(2).enumerate() {
            let (gap, delay) = (pair[1] - pair[0], POLICY.delay(n as u32));
            assert!(
                gap + Duration::from_millis(200) >= delay,
                "{name}: retried after {gap:?}, before its delay of {delay:?}"
            );
        }
        assert_eq!(seed_of(&get_shoot(&client, "dev", name).await), None);
    }
    let before = proxy.refused().len() as f64;
    let counted = scheduler
        .metric("gardener_scheduler_bind_errors_total{code=\"422\"}")
        .unwrap_or_default();
    let after = proxy.refused().len() as f64;
    assert!(
        counted >= before - refused.len() as f64 && counted <= after,
        "bind_errors_total{{code=\"422\"}} {counted}, refused {before}..{after}"
    );
    let logs = scheduler.logs();
    assert!(
        !logs.contains("retrying waiting shoots now"),
        "a refusal woke waiting shoots:\n{logs}"
    );
    let forwarded: Vec<String> = proxy
        .binds()
        .into_iter()
        .map(|(_, name)| name)
        .filter(|name| !refused.contains(name))
        .collect();
    assert_eq!(
        forwarded.len(),
        others.len(),
        "one binding request per bound shoot: {forwarded:?}"
    );
}
