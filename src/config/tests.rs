use std::time::Duration;

use super::*;

fn errors(yaml: &str) -> Vec<FieldError> {
    match load_str(yaml) {
        Err(ConfigError::Invalid(e)) => e,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

fn paths(yaml: &str) -> Vec<String> {
    errors(yaml).into_iter().map(|e| e.path).collect()
}

#[test]
fn empty_file_yields_upstream_defaults() {
    let c = load_str("").unwrap();
    assert_eq!(c.client_connection.qps, 50.0);
    assert_eq!(c.client_connection.burst, 100);
    assert!(c.leader_election.leader_elect);
    assert_eq!(c.leader_election.lease_duration, Duration::from_secs(15));
    assert_eq!(c.leader_election.renew_deadline, Duration::from_secs(10));
    assert_eq!(c.leader_election.retry_period, Duration::from_secs(2));
    assert_eq!(c.leader_election.resource_lock, "leases");
    assert_eq!(c.leader_election.resource_namespace, "garden");
    assert_eq!(
        c.leader_election.resource_name,
        "gardener-scheduler-leader-election"
    );
    assert_eq!(c.log_level, LogLevel::Info);
    assert_eq!(c.log_format, LogFormat::Json);
    assert_eq!(c.server.health_probes.port, 10251);
    assert_eq!(c.server.metrics.port, 19251);
    assert_eq!(c.schedulers.shoot.concurrent_syncs, 5);
    assert_eq!(c.schedulers.shoot.strategy(), Strategy::SameRegion);
    assert_eq!(c.schedulers.backup_bucket.concurrent_syncs, 2);
    assert_eq!(
        c.schedulers.shoot.scheduler_names,
        vec!["default-scheduler"]
    );
    assert_eq!(
        c.schedulers.shoot.priorities_or_default()[0].name,
        "ShootCount"
    );
}

#[test]
fn upstream_config_file_loads_unchanged() {
    let upstream = r#"
apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
clientConnection:
  qps: 100
  burst: 130
  kubeconfig: /etc/kubeconfig
leaderElection:
  leaderElect: true
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
  resourceLock: leases
  resourceNamespace: garden
  resourceName: gardener-scheduler-leader-election
logLevel: debug
logFormat: text
server:
  healthProbes:
    bindAddress: 0.0.0.0
    port: 10251
  metrics:
    port: 19251
debugging:
  enableProfiling: false
  enableContentionProfiling: false
featureGates:
  SomeGate: true
schedulers:
  backupBucket:
    concurrentSyncs: 2
  shoot:
    concurrentSyncs: 5
    retrySyncPeriod: 15s
    candidateDeterminationStrategy: MinimalDistance
"#;
    let c = load_str(upstream).unwrap();
    assert_eq!(c.client_connection.qps, 100.0);
    assert_eq!(c.client_connection.kubeconfig, "/etc/kubeconfig");
    assert_eq!(c.log_level, LogLevel::Debug);
    assert_eq!(c.log_format, LogFormat::Text);
    assert_eq!(c.schedulers.shoot.strategy(), Strategy::MinimalDistance);
    assert_eq!(c.feature_gates.get("SomeGate"), Some(&true));
}

#[test]
fn unsupported_strategy_names_the_field_and_the_supported_values() {
    let e = errors("schedulers:\n  shoot:\n    candidateDeterminationStrategy: Foo\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        e[0].to_string(),
        "schedulers.shoot.candidateDeterminationStrategy: unsupported value \"Foo\": supported values: \"SameRegion\", \"MinimalDistance\", \"RegionPrefix\", \"Scored\""
    );
}

#[test]
fn every_semantic_error_is_reported_not_just_the_first() {
    let yaml = r#"
leaderElection:
  leaseDuration: 5s
  renewDeadline: 10s
  resourceLock: configmaps
server:
  healthProbes:
    port: 70000
  metrics:
    port: 0
schedulers:
  shoot:
    concurrentSyncs: 0
    candidateDeterminationStrategy: Nearest
    priorities:
    - name: ShootCount
      weight: 0
    - name: Unknown
      weight: 1
    - name: ShootCount
      weight: 2
"#;
    let got = paths(yaml);
    for want in [
        "leaderElection.leaseDuration",
        "leaderElection.resourceLock",
        "server.healthProbes.port",
        "server.metrics.port",
        "schedulers.shoot.concurrentSyncs",
        "schedulers.shoot.candidateDeterminationStrategy",
        "schedulers.shoot.priorities[0].weight",
        "schedulers.shoot.priorities[1].name",
        "schedulers.shoot.priorities[2].name",
    ] {
        assert!(got.iter().any(|p| p == want), "missing {want} in {got:?}");
    }
}

#[test]
fn unknown_keys_are_rejected_with_their_path() {
    let e = errors("schedulers:\n  shoot:\n    concurentSyncs: 3\n");
    assert_eq!(e[0].path, "schedulers.shoot.concurentSyncs");
    assert!(
        e[0].message.contains("unknown field `concurentSyncs`"),
        "{e:?}"
    );
    let e = errors("logLevl: debug\n");
    assert_eq!(e[0].path, "logLevl");
}

#[test]
fn type_errors_in_several_sections_are_all_reported() {
    let got = paths(
        "logLevel: verbose\nclientConnection:\n  qps: fast\nschedulers:\n  shoot:\n    backoff:\n      initial: soon\n",
    );
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.contains(&"logLevel".to_string()), "{got:?}");
    assert!(
        got.iter().any(|p| p.starts_with("clientConnection.qps")),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|p| p.starts_with("schedulers.shoot.backoff.initial")),
        "{got:?}"
    );
}

#[test]
fn absurd_durations_and_counts_are_rejected() {
    let got = paths(
        "leaderElection:\n  retryPeriod: 0s\nschedulers:\n  shoot:\n    retrySyncPeriod: 0s\n    backoff:\n      initial: 10s\n      max: 1s\n    schedulerNames: []\n",
    );
    for want in [
        "leaderElection.retryPeriod",
        "schedulers.shoot.retrySyncPeriod",
        "schedulers.shoot.backoff.max",
        "schedulers.shoot.schedulerNames",
    ] {
        assert!(got.iter().any(|p| p == want), "missing {want} in {got:?}");
    }
}

#[test]
fn a_non_mapping_document_is_a_clear_error() {
    let e = errors("- just\n- a list\n");
    assert!(e[0].message.contains("must be a YAML mapping"), "{e:?}");
}

#[test]
fn wrong_api_version_or_kind_is_rejected() {
    let got = paths("apiVersion: v1\nkind: ConfigMap\n");
    assert_eq!(got, vec!["apiVersion", "kind"]);
}

#[test]
fn leader_election_durations_are_not_checked_when_disabled() {
    let c = load_str("leaderElection:\n  leaderElect: false\n  leaseDuration: 1s\n").unwrap();
    assert!(!c.leader_election.leader_elect);
}
