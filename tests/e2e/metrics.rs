//! The controller-runtime and client-go metrics upstream's dashboards read: scraped after a
//! burst, their counts add up with what happened through the API.

use std::collections::BTreeMap;

use crate::support::*;

/// The samples of one scrape, by series (`name{labels}`).
fn scrape(s: &Scheduler) -> BTreeMap<String, f64> {
    s.metrics()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_string(), value.parse().ok()?))
        })
        .collect()
}

fn get(m: &BTreeMap<String, f64>, series: &str) -> f64 {
    *m.get(series)
        .unwrap_or_else(|| panic!("{series} not served; got:\n{m:#?}"))
}

const CTRL: &str = "{controller=\"shoot\"}";
const QUEUE: &str = "{controller=\"shoot\",name=\"shoot\"}";

fn reconciles(m: &BTreeMap<String, f64>, result: &str) -> f64 {
    get(
        m,
        &format!("controller_runtime_reconcile_total{{controller=\"shoot\",result=\"{result}\"}}"),
    )
}

/// `host:port` of the API server, as client-go's `host` label has it.
fn api_host(api: &ApiServer) -> String {
    let kc = kube::config::Kubeconfig::read_from(&api.kubeconfig).unwrap();
    let server = kc.clusters[0]
        .cluster
        .as_ref()
        .and_then(|c| c.server.clone())
        .unwrap();
    server
        .parse::<http::Uri>()
        .unwrap()
        .authority()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_runtime_metrics_add_up_after_a_burst() {
    let (api, client) = ApiServer::start_with_landscape("metrics", "metrics").await;
    create_seed(&client, "s-a", 25, &[]).await;
    create_seed(&client, "s-b", 25, &[]).await;
    let mut scheduler = Scheduler::start(
        &api,
        "metrics",
        SchedulerOptions {
            concurrent_syncs: 4,
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;

    futures::future::join_all((0..50).map(|i| {
        let client = client.clone();
        async move { create_shoot(&client, "metrics", &format!("shoot-{i:02}")).await }
    }))
    .await;
    wait_bound(&client, "all 50 shoots to be bound", "metrics", 50).await;

    // once idle (the events are sent after the binds, off their path), every count agrees with
    // every other
    let host = api_host(&api);
    let events_sent =
        format!("rest_client_requests_total{{code=\"201\",host=\"{host}\",method=\"POST\"}}");
    let m = eventually("the queue to be idle and the events sent", || async {
        let m = scrape(&scheduler);
        (m.get("workqueue_depth{controller=\"shoot\",name=\"shoot\",priority=\"0\"}") == Some(&0.0)
            && m.get(&format!("controller_runtime_active_workers{CTRL}")) == Some(&0.0)
            && m.get(&events_sent).is_some_and(|n| *n >= 50.0))
        .then_some(m)
    })
    .await;
    let scheduled = get(
        &m,
        "gardener_scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default\"}",
    );
    assert_eq!(scheduled, 50.0);
    let results: f64 = ["success", "error", "requeue", "requeue_after"]
        .iter()
        .map(|r| reconciles(&m, r))
        .sum();
    assert!(reconciles(&m, "success") >= scheduled, "{m:#?}");
    assert_eq!(reconciles(&m, "error"), 0.0, "nothing failed");
    assert_eq!(
        get(
            &m,
            &format!("controller_runtime_reconcile_errors_total{CTRL}")
        ),
        0.0
    );
    assert_eq!(
        get(
            &m,
            &format!("controller_runtime_reconcile_time_seconds_count{CTRL}")
        ),
        results,
        "one duration per reconcile"
    );
    assert_eq!(
        get(&m, &format!("workqueue_work_duration_seconds_count{QUEUE}")),
        results,
        "each key handed out is one reconcile"
    );
    assert_eq!(
        get(
            &m,
            &format!("workqueue_queue_duration_seconds_count{QUEUE}")
        ),
        results
    );
    let adds = get(&m, &format!("workqueue_adds_total{QUEUE}"));
    assert!(adds >= 50.0, "every new shoot was added: {adds}");
    assert_eq!(
        adds, results,
        "with the queue empty, every add was handed out"
    );
    assert_eq!(
        get(
            &m,
            &format!("controller_runtime_max_concurrent_reconciles{CTRL}")
        ),
        4.0
    );
    assert_eq!(
        get(&m, &format!("workqueue_unfinished_work_seconds{QUEUE}")),
        0.0
    );
    assert_eq!(
        get(
            &m,
            &format!("rest_client_requests_total{{code=\"200\",host=\"{host}\",method=\"PUT\"}}")
        ),
        50.0,
        "one binding PUT per shoot"
    );
    assert!(
        get(
            &m,
            &format!("rest_client_requests_total{{code=\"201\",host=\"{host}\",method=\"POST\"}}")
        ) >= 50.0,
        "at least one event per shoot"
    );
    // the events went through the reporter's own client, the binds did not
    assert!(
        get(
            &m,
            &format!(
                "gardener_scheduler_event_client_requests_total{{code=\"201\",host=\"{host}\",method=\"POST\"}}"
            )
        ) >= 50.0,
        "the events were sent by the reporter's client"
    );
    assert!(
        !m.keys().any(
            |k| k.starts_with("gardener_scheduler_event_client_requests_total")
                && k.contains("method=\"PUT\"")
        ),
        "no binding went through the reporter's client"
    );
    assert!(
        !m.keys()
            .any(|k| k.starts_with("leader_election_master_status")),
        "no lease without leader election, as upstream"
    );

    // a shoot that fits nowhere: every attempt is a reconcile error and a delayed retry
    create_shoot(&client, "metrics", "one-too-many").await;
    event_with_reason(
        &client,
        "the failure event of the 51st shoot",
        "metrics",
        "one-too-many",
        "SchedulingFailed",
    )
    .await;
    eventually("errors to show in a consistent scrape", || async {
        let m = scrape(&scheduler);
        let errors = reconciles(&m, "error");
        let unschedulable = get(
            &m,
            "gardener_scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"default\"}",
        );
        (errors >= 1.0
            && errors == unschedulable
            && get(&m, &format!("controller_runtime_reconcile_errors_total{CTRL}")) == errors
            && get(&m, &format!("workqueue_retries_total{QUEUE}")) >= errors)
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_serves_the_controller_series_and_both_report_the_lease() {
    let (api, client) = ApiServer::start_with_landscape("metrics-ha", "ha").await;
    create_seed(&client, "s-a", 10, &[]).await;
    let (one, two) = Scheduler::start_electing_pair(&api).await;
    let lease = "leader_election_master_status{name=\"gardener-scheduler-leader-election\"}";
    let one_leads = eventually(
        "exactly one process reporting the lease as held",
        || async {
            match (one.metric(lease), two.metric(lease)) {
                (Some(1.0), Some(0.0)) => Some(true),
                (Some(0.0), Some(1.0)) => Some(false),
                _ => None,
            }
        },
    )
    .await;
    let (leader, standby) = if one_leads {
        (&one, &two)
    } else {
        (&two, &one)
    };
    for i in 0..5 {
        create_shoot(&client, "ha", &format!("shoot-{i}")).await;
    }
    eventually("the leader to bind all 5", || async {
        let m = scrape(leader);
        (m.get("controller_runtime_reconcile_total{controller=\"shoot\",result=\"success\"}")
            >= Some(&5.0))
        .then_some(())
    })
    .await;
    let m = scrape(standby);
    assert!(
        !m.keys()
            .any(|k| k.starts_with("workqueue_") || k.starts_with("controller_runtime_")),
        "a standby's controller does not run upstream, so it serves no controller series: {m:#?}"
    );
    assert!(
        m.keys()
            .any(|k| k.starts_with("rest_client_requests_total{")),
        "the standby's client requests are counted"
    );
}
