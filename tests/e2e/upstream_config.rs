//! The configuration file gardener-operator renders for upstream's scheduler, used as is.

use k8s_openapi::api::coordination::v1::Lease;

use crate::burst::{burst_bound_once, record_transitions};
use crate::support::*;

const RENDERED: &str = include_str!("../data/upstream-config/operator-rendered-sameregion.yaml");
const OPERATOR_KUBECONFIG: &str =
    "/var/run/secrets/gardener.cloud/shoot/generic-kubeconfig/kubeconfig";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_is_scheduled_with_the_operator_rendered_configuration() {
    let (api, client) = ApiServer::start_with_landscape("operator-config", "opcfg").await;
    // The operator's file puts the Lease into kube-system.
    ensure_namespace(&client, "kube-system").await;
    for (name, slots) in [("s-40", 40), ("s-30", 30), ("s-20", 20)] {
        create_seed(&client, name, slots, &[]).await;
    }

    // Only the kubeconfig path and the two ports differ from what the operator writes.
    let health_port = free_port();
    let mut metrics_port = free_port();
    while metrics_port == health_port {
        metrics_port = free_port();
    }
    let kubeconfig = api.kubeconfig.display().to_string();
    let config = RENDERED
        .replace(OPERATOR_KUBECONFIG, &kubeconfig)
        .replace("port: 10251", &format!("port: {health_port}"))
        .replace("port: 19251", &format!("port: {metrics_port}"));
    assert_eq!(
        config.lines().count(),
        RENDERED.lines().count(),
        "only values are substituted"
    );
    let changed = config
        .lines()
        .zip(RENDERED.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(changed, 2, "the clientConnection and server lines");
    let cfg_path = api.state.join("operator-rendered.yaml");
    std::fs::write(&cfg_path, &config).unwrap();

    let mut scheduler =
        Scheduler::start_as_written(&api, "operator", &cfg_path, health_port, metrics_port);
    scheduler.wait_ready().await;
    let (seen, watch) = record_transitions(&client, "garden-opcfg");

    burst_bound_once(&client, "opcfg", 90, 2, &seen).await;
    watch.abort();

    // The zero durations took upstream's defaults: the Lease in kube-system lasts 15s.
    let lease = kube::Api::<Lease>::namespaced(client.clone(), "kube-system")
        .get("gardener-scheduler-leader-election")
        .await
        .expect("the Lease named by the operator's file");
    let spec = lease.spec.expect("lease spec");
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert!(spec.holder_identity.is_some_and(|h| !h.is_empty()));

    // `concurrentSyncs: 0` means upstream's 5 workers; every key of the file is known.
    let logs = scheduler.logs();
    assert!(!logs.contains("unknown field"), "{logs}");
    assert_reports_five_workers(&scheduler);
}

/// `concurrentSyncs: 0` is upstream's default of 5 workers, as the start-up line reports.
fn assert_reports_five_workers(scheduler: &Scheduler) {
    let logs = scheduler.logs();
    assert!(
        logs.lines()
            .any(|l| l.contains("concurrent_syncs=5") || l.contains("\"concurrent_syncs\":5")),
        "the scheduler does not report 5 workers:\n{logs}"
    );
}
