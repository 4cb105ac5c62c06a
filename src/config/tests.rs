use std::time::Duration;

use super::*;

/// The configuration as loaded and compiled (its profile chain built: problems of the profiles
/// are configuration errors as well).
fn load_str(yaml: &str) -> Result<SchedulerConfiguration, ConfigError> {
    crate::compile::load_str(yaml).map(|c| c.config)
}

use crate::compile::load_str_with;

fn errors(yaml: &str) -> Vec<FieldError> {
    match load_str(yaml) {
        Err(ConfigError::Invalid(e)) => e,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

/// `yaml` is refused with an error at `path` whose message contains `words`.
fn assert_error(yaml: &str, path: &str, words: &str) {
    let e = errors(yaml);
    assert!(
        e.iter()
            .any(|e| e.path == path && e.message.contains(words)),
        "{yaml}: want {path}: …{words}…, got {e:?}"
    );
}

fn strict_errors(yaml: &str) -> Vec<FieldError> {
    match load_str_with(yaml, UnknownKeys::Reject) {
        Err(ConfigError::Invalid(e)) => e,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

trait WithPriorities {
    fn unwrap_with_priorities(self) -> SchedulerConfiguration;
}

impl WithPriorities for Result<SchedulerConfiguration, ConfigError> {
    /// The default configuration with the priorities the test file lists explicitly.
    fn unwrap_with_priorities(self) -> SchedulerConfiguration {
        let mut c = self.unwrap();
        c.schedulers.shoot.priorities = Some(c.schedulers.shoot.priorities_or_default());
        c
    }
}

fn paths(yaml: &str) -> Vec<String> {
    errors(yaml).into_iter().map(|e| e.path).collect()
}

/// `yaml` is refused with an error at each of `want` (and maybe more).
fn has_paths(yaml: &str, want: &[&str]) {
    let got = paths(yaml);
    for want in want {
        assert!(got.iter().any(|p| p == want), "missing {want} in {got:?}");
    }
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
    assert_eq!(
        c.schedulers.shoot.candidate_determination_strategy,
        "SameRegion"
    );
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
  AllBeta: false
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
    assert_eq!(
        c.schedulers.shoot.candidate_determination_strategy,
        "MinimalDistance"
    );
    assert_eq!(c.feature_gates.get("AllBeta"), Some(&false));
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
    port: -1
schedulers:
  shoot:
    concurrentSyncs: 1001
    candidateDeterminationStrategy: Nearest
    priorities:
    - name: ShootCount
      weight: 0
    - name: Unknown
      weight: 1
    - name: ShootCount
      weight: 2
"#;
    has_paths(
        yaml,
        &[
            "leaderElection.leaseDuration",
            "leaderElection.resourceLock",
            "server.healthProbes.port",
            "server.metrics.port",
            "schedulers.shoot.concurrentSyncs",
            "schedulers.shoot.candidateDeterminationStrategy",
            "schedulers.shoot.priorities[0].weight",
            "schedulers.shoot.priorities[1].name",
            "schedulers.shoot.priorities[2].name",
        ],
    );
}

#[test]
fn unknown_keys_are_rejected_with_their_path_under_strict() {
    let e = strict_errors("schedulers:\n  shoot:\n    concurentSyncs: 3\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].path, "schedulers.shoot.concurentSyncs");
    assert_eq!(e[0].message, UNKNOWN_KEY);
    let e = strict_errors("logLevl: debug\n");
    assert_eq!(e[0].path, "logLevl");
}

#[test]
fn unknown_keys_are_ignored_with_one_warning_each_as_upstream_ignores_them() {
    let yaml = "logLevl: debug\nschedulers:\n  shoot:\n    concurentSyncs: 3\n    priorities:\n    - name: ShootCount\n      wieght: 2\n";
    let loaded = load_str_with(yaml, UnknownKeys::Warn).unwrap();
    let paths: Vec<_> = loaded.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "logLevl",
            "schedulers.shoot.concurentSyncs",
            "schedulers.shoot.priorities[0].wieght"
        ]
    );
    // Ignored means ignored: the misspelt keys change nothing.
    assert_eq!(loaded.config, load_str("").unwrap_with_priorities());
    // Strict reports all of them at once.
    let e = strict_errors(yaml);
    assert_eq!(e.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), paths);
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
    has_paths(
        "leaderElection:\n  leaseDuration: 2s\n  renewDeadline: 1s\n  retryPeriod: 1s\nschedulers:\n  shoot:\n    backoff:\n      initial: 10s\n      max: 1s\n    schedulerNames: []\n",
        &[
            "leaderElection.renewDeadline",
            "schedulers.shoot.backoff.max",
            "schedulers.shoot.schedulerNames",
        ],
    );
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

const RENDERED_SAME_REGION: &str =
    include_str!("../../tests/data/upstream-config/operator-rendered-sameregion.yaml");
const RENDERED_EMPTY_STRATEGY: &str =
    include_str!("../../tests/data/upstream-config/operator-rendered-empty-strategy.yaml");
const UPSTREAM_EXAMPLE: &str =
    include_str!("../../tests/data/upstream-config/upstream-example.yaml");
const OBSOLETE_KEYS: &str = include_str!("../../tests/data/upstream-config/obsolete-keys.yaml");

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn the_operator_rendered_file_means_what_it_means_upstream() {
    for (name, text) in [
        ("SameRegion", RENDERED_SAME_REGION),
        ("empty strategy", RENDERED_EMPTY_STRATEGY),
    ] {
        // Every key of the rendered file is known: it loads even under --strict.
        let loaded =
            load_str_with(text, UnknownKeys::Reject).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(loaded.warnings.is_empty(), "{name}: {:?}", loaded.warnings);
        let c = loaded.config;
        let cc = &c.client_connection;
        assert_eq!(
            cc.kubeconfig,
            "/var/run/secrets/gardener.cloud/shoot/generic-kubeconfig/kubeconfig"
        );
        assert_eq!((cc.qps, cc.burst), (100.0, 130), "{name}");
        assert_eq!(
            (cc.accept_content_types.as_str(), cc.content_type.as_str()),
            ("", "")
        );
        let le = &c.leader_election;
        assert!(le.leader_elect);
        // `0s` and `""` take component-base's and upstream's defaults.
        assert_eq!(le.lease_duration, secs(15), "{name}");
        assert_eq!(le.renew_deadline, secs(10), "{name}");
        assert_eq!(le.retry_period, secs(2), "{name}");
        assert_eq!(le.resource_lock, "leases", "{name}");
        // Values the operator sets stay as written.
        assert_eq!(le.resource_namespace, "kube-system");
        assert_eq!(le.resource_name, "gardener-scheduler-leader-election");
        assert_eq!(c.log_level, LogLevel::Info);
        assert_eq!(c.log_format, LogFormat::Json);
        assert_eq!(c.server.health_probes.bind_address, "");
        assert_eq!(c.server.health_probes.port, 10251);
        assert_eq!(c.server.metrics.port, 19251);
        // `concurrentSyncs: 0` is 5 upstream; an absent backupBucket gets 2.
        assert_eq!(c.schedulers.shoot.concurrent_syncs, 5, "{name}");
        assert_eq!(c.schedulers.backup_bucket.concurrent_syncs, 2);
        // `""` is upstream's default strategy, SameRegion.
        assert_eq!(
            c.schedulers.shoot.candidate_determination_strategy, "SameRegion",
            "{name}"
        );
        assert!(c.feature_gates.is_empty());
    }
}

#[test]
fn upstreams_example_file_loads_with_its_values() {
    let loaded = load_str_with(UPSTREAM_EXAMPLE, UnknownKeys::Reject).unwrap();
    let c = loaded.config;
    assert_eq!(
        (c.client_connection.qps, c.client_connection.burst),
        (100.0, 130)
    );
    assert_eq!(c.leader_election.resource_namespace, "garden");
    assert_eq!(c.log_format, LogFormat::Text);
    assert_eq!(c.server.health_probes.port, 10251);
    assert_eq!(c.server.metrics.port, 19252);
    assert!(!c.debugging.enable_profiling && !c.debugging.enable_contention_profiling);
    // Its schedulers section is commented out: upstream's defaults apply.
    assert_eq!(c.schedulers.shoot.concurrent_syncs, 5);
    assert_eq!(
        c.schedulers.shoot.candidate_determination_strategy,
        "SameRegion"
    );
}

#[test]
fn a_file_with_obsolete_upstream_keys_loads_and_names_each_ignored_key() {
    let loaded = load_str_with(OBSOLETE_KEYS, UnknownKeys::Warn).unwrap();
    let warned: Vec<_> = loaded.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        warned,
        ["schedulers.backupBucket.retrySyncPeriod", "server.http"]
    );
    let c = loaded.config;
    assert_eq!(c.schedulers.shoot.retry_sync_period, secs(30));
    assert_eq!(
        c.schedulers.shoot.candidate_determination_strategy,
        "MinimalDistance"
    );
    assert_eq!(c.schedulers.backup_bucket.concurrent_syncs, 5);
    // `server.http` is not read as the probe or metrics server.
    assert_eq!(c.server.health_probes.bind_address, "");
    let e = strict_errors(OBSOLETE_KEYS);
    assert_eq!(
        e.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
        warned
    );
}

#[test]
fn each_zero_value_takes_its_upstream_default_field_by_field() {
    let c = load_str(
        "clientConnection: {qps: 0, burst: 0}\nlogLevel: \"\"\nlogFormat: \"\"\nserver: {healthProbes: {port: 0}, metrics: {port: 0}}\nschedulers: {backupBucket: {concurrentSyncs: 0}, shoot: {concurrentSyncs: 0, candidateDeterminationStrategy: \"\", retrySyncPeriod: 0}}\nleaderElection: {leaseDuration: 0, renewDeadline: 0s, retryPeriod: 0ms, resourceLock: \"\", resourceName: \"\", resourceNamespace: \"\"}\n",
    )
    .unwrap();
    assert_eq!(c, load_str("").unwrap());
    // Where upstream has no default, the value stays: leader election can be switched off.
    let c = load_str("leaderElection: {leaderElect: false}\n").unwrap();
    assert!(!c.leader_election.leader_elect);
    // Non-zero values are kept, one field at a time.
    let c = load_str("leaderElection: {leaseDuration: 40s, renewDeadline: 0s}\n").unwrap();
    assert_eq!(c.leader_election.lease_duration, secs(40));
    assert_eq!(c.leader_election.renew_deadline, secs(10));
}

#[test]
fn explicitly_invalid_values_stay_errors_with_their_field() {
    for (yaml, path, words) in [
        (
            "leaderElection: {leaseDuration: -1s}\n",
            "leaderElection.leaseDuration",
            "negative",
        ),
        (
            "leaderElection: {retryPeriod: -5m}\n",
            "leaderElection.retryPeriod",
            "negative",
        ),
        (
            "leaderElection: {renewDeadline: 20s}\n",
            "leaderElection.leaseDuration",
            "greater than renewDeadline",
        ),
        (
            "leaderElection: {leaseDuration: 10s}\n",
            "leaderElection.leaseDuration",
            "greater than renewDeadline",
        ),
        (
            "schedulers: {shoot: {candidateDeterminationStrategy: Nearest}}\n",
            "schedulers.shoot.candidateDeterminationStrategy",
            "unsupported value \"Nearest\"",
        ),
        (
            "schedulers: {shoot: {concurrentSyncs: -1}}\n",
            "schedulers.shoot.concurrentSyncs",
            "got -1",
        ),
        (
            "schedulers: {shoot: {listPageSize: 0}}\n",
            "schedulers.shoot.listPageSize",
            "must be between 50 and 10000, got 0",
        ),
        (
            "schedulers: {shoot: {listPageSize: 20000}}\n",
            "schedulers.shoot.listPageSize",
            "got 20000",
        ),
        (
            "schedulers: {backupBucket: {concurrentSyncs: -1}}\n",
            "schedulers.backupBucket.concurrentSyncs",
            "got -1",
        ),
        (
            "clientConnection: {burst: -1}\n",
            "clientConnection.burst",
            "got -1",
        ),
        (
            "leaderElection: {resourceLock: configmaps}\n",
            "leaderElection.resourceLock",
            "unsupported value",
        ),
    ] {
        assert_error(yaml, path, words);
    }
}

#[test]
fn durations_are_read_in_gos_syntax() {
    let c = load_str(
        "leaderElection: {leaseDuration: 1h30m, renewDeadline: 1.5m, retryPeriod: 300ms}\nschedulers: {shoot: {backoff: {initial: 500ms, max: 2h45m}}}\n",
    )
    .unwrap();
    let le = &c.leader_election;
    assert_eq!(le.lease_duration, secs(5400));
    assert_eq!(le.renew_deadline, secs(90));
    assert_eq!(le.retry_period, Duration::from_millis(300));
    assert_eq!(
        c.schedulers.shoot.backoff.initial,
        Duration::from_millis(500)
    );
    assert_eq!(c.schedulers.shoot.backoff.max, secs(9900));
    for (yaml, path, words) in [
        (
            "leaderElection: {leaseDuration: 15}\n",
            "leaderElection.leaseDuration",
            "needs a unit",
        ),
        (
            "leaderElection: {leaseDuration: 1h 30m}\n",
            "leaderElection.leaseDuration",
            "unknown unit \"h \"",
        ),
        (
            "leaderElection: {leaseDuration: h}\n",
            "leaderElection.leaseDuration",
            "invalid duration",
        ),
        (
            "leaderElection: {leaseDuration: 1d}\n",
            "leaderElection.leaseDuration",
            "unknown unit \"d\"",
        ),
    ] {
        assert_error(yaml, path, words);
    }
}

#[test]
fn the_effective_configuration_prints_durations_upstream_can_read_back() {
    let c = load_str("leaderElection: {leaseDuration: 1h30m}\n").unwrap();
    let text = serde_yaml_ng::to_string(&c).unwrap();
    assert!(text.contains("leaseDuration: 1h30m0s"), "{text}");
    assert_eq!(load_str(&text).unwrap(), c);
}

#[test]
fn feature_gates_upstreams_scheduler_does_not_know_are_errors() {
    let e = errors("featureGates: {DefaultSeccompProfile: true, AllAlpha: false}\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].path, "featureGates.DefaultSeccompProfile");
    assert!(e[0].message.contains("unrecognized feature gate"), "{e:?}");
    let c = load_str("featureGates: {AllAlpha: true, AllBeta: false}\n").unwrap();
    assert_eq!(c.feature_gates.len(), 2);
}

#[test]
fn a_leading_byte_order_mark_is_accepted() {
    let c = load_str_with("\u{feff}logLevel: debug\n", UnknownKeys::Reject).unwrap();
    assert_eq!(c.config.log_level, LogLevel::Debug);
}

#[test]
fn numbers_json_cannot_hold_are_errors_naming_their_field() {
    for value in [".nan", ".NaN", ".inf", "-.inf"] {
        for (yaml, path) in [
            (
                format!("clientConnection: {{qps: {value}}}\n"),
                "clientConnection.qps",
            ),
            (
                format!("leaderElection: {{resourceName: {value}}}\n"),
                "leaderElection.resourceName",
            ),
            (
                format!(
                    "schedulers:\n  shoot:\n    priorities:\n    - name: ShootCount\n      weight: {value}\n"
                ),
                "schedulers.shoot.priorities[0].weight",
            ),
            (
                format!(
                    "schedulers:\n  shoot:\n    profiles:\n    - freeze: true\n      schedule:\n        between:\n          start: {value}\n"
                ),
                "schedulers.shoot.profiles[0].schedule.between.start",
            ),
        ] {
            let e = errors(&yaml);
            assert_eq!(e.len(), 1, "{yaml}: {e:?}");
            assert_eq!(e[0].path, path, "{yaml}");
            assert!(e[0].message.contains("not a finite number"), "{e:?}");
        }
    }
    // YAML reads a number beyond f64 as text: where a number or a time is expected, that is
    // an error naming the field, never an unset value.
    for (yaml, path) in [
        ("clientConnection: {qps: 1e309}\n", "clientConnection.qps"),
        (
            "schedulers:\n  shoot:\n    priorities:\n    - name: ShootCount\n      weight: 1e309\n",
            "schedulers.shoot.priorities[0].weight",
        ),
        (
            "schedulers:\n  shoot:\n    profiles:\n    - freeze: true\n      schedule:\n        between:\n          start: 1e309\n",
            "schedulers.shoot.profiles[0].schedule.between.start",
        ),
    ] {
        let e = errors(yaml);
        assert_eq!(e.len(), 1, "{yaml}: {e:?}");
        assert_eq!(e[0].path, path, "{yaml}");
    }
}

#[test]
fn with_profiles_an_error_in_a_plain_key_is_reported_where_it_was_written() {
    let e = errors(
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: Nearest\n    priorities:\n    - name: ShootCount\n      weight: -1\n    profiles:\n    - id: a\n      profile: {}\n    - id: b\n      profile:\n        priorities: [{name: ShootCount, weight: 0}]\n",
    );
    let got: Vec<_> = e.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        got,
        [
            "schedulers.shoot.candidateDeterminationStrategy",
            "schedulers.shoot.priorities[0].weight",
            "schedulers.shoot.profiles[1].profile.priorities[0].weight",
        ],
        "{e:?}"
    );
}

#[test]
fn durations_that_would_block_failover_or_retries_for_ever_have_upper_bounds() {
    let e = errors(
        "leaderElection: {leaseDuration: 1000000h}\n\
         schedulers: {shoot: {retrySyncPeriod: 2562047h, backoff: {max: 48h}}}\n",
    );
    let got: Vec<String> = e.iter().map(|e| e.to_string()).collect();
    for want in [
        "leaderElection.leaseDuration: must be at most 24h0m0s, got 1000000h0m0s",
        "schedulers.shoot.retrySyncPeriod: must be at most 24h0m0s, got 2562047h0m0s",
        "schedulers.shoot.backoff.max: must be at most 24h0m0s, got 48h0m0s",
    ] {
        assert!(got.iter().any(|g| g == want), "missing {want} in {got:#?}");
    }
    assert!(load_str("leaderElection: {leaseDuration: 24h, renewDeadline: 50m}\n").is_ok());
}

#[test]
fn a_scheduler_name_listed_twice_loads_with_a_note() {
    let loaded = load_str_with(
        "schedulers: {shoot: {schedulerNames: [default-scheduler, a, default-scheduler]}}\n",
        UnknownKeys::Warn,
    )
    .unwrap();
    let notes: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "schedulers.shoot.schedulerNames[2]: \"default-scheduler\" is listed twice"
        ),
        "{notes:?}"
    );
}

#[test]
fn merge_keys_are_applied_as_go_applies_them_and_tags_are_refused() {
    let c = load_str("clientConnection: {<<: {qps: 7, burst: 9}, burst: 11}\n").unwrap();
    assert_eq!(
        (c.client_connection.qps, c.client_connection.burst),
        (7.0, 11)
    );
    let c = load_str(
        "schedulers:\n  shoot:\n    backoff: &b {initial: 2s, max: 20s}\n    retrySyncPeriod: 30s\nleaderElection:\n  <<: {leaseDuration: 20s}\n",
    )
    .unwrap();
    assert_eq!(c.leader_election.lease_duration, Duration::from_secs(20));
    let e = errors("clientConnection: {qps: !Ref 5}\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].to_string()
            .starts_with("clientConnection.qps: the tag !Ref is not supported"),
        "{e:?}"
    );
}

#[test]
fn numbers_beyond_what_a_key_holds_are_named_as_such() {
    let e = errors("clientConnection: {qps: 1e308}\n");
    assert_eq!(
        e[0].to_string(),
        "clientConnection.qps: must be at most 3.4028235e38 (a 32-bit float)"
    );
    let e = errors("clientConnection: {qps: 1e400}\n");
    assert!(
        e[0].to_string()
            .starts_with("clientConnection.qps: 1e400 is beyond the largest number accepted"),
        "{e:?}"
    );
    // text that is no number is named as text
    let e = errors("clientConnection: {qps: fast}\n");
    assert!(
        e[0].to_string() == "clientConnection.qps: must be a number, got text \"fast\"",
        "{e:?}"
    );
}

#[test]
fn environment_overrides_that_are_not_finite_or_have_three_underscores_are_named() {
    let vars = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
            .into_iter()
    };
    for bad in ["NaN", "inf", "-Infinity", "1e400"] {
        let Err(ConfigError::Invalid(e)) =
            load::env_vars(vars(&[("GARDENER_SCHEDULER_CLIENTCONNECTION__QPS", bad)]))
        else {
            panic!("{bad} accepted");
        };
        assert_eq!(
            e[0].to_string(),
            format!("GARDENER_SCHEDULER_CLIENTCONNECTION__QPS: {bad:?} is not a finite number")
        );
    }
    let (kept, notes) = load::env_vars(vars(&[
        ("GARDENER_SCHEDULER_CLIENTCONNECTION___QPS", "5"),
        ("GARDENER_SCHEDULER_CLIENTCONNECTION__BURST", "7"),
        ("HOME", "/root"),
    ]))
    .unwrap();
    assert_eq!(kept.len(), 1);
    assert!(kept.contains_key("GARDENER_SCHEDULER_CLIENTCONNECTION__BURST"));
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .to_string()
            .starts_with("GARDENER_SCHEDULER_CLIENTCONNECTION___QPS: three underscores in a row"),
        "{notes:?}"
    );
}

#[test]
fn two_byte_order_marks_are_named() {
    let e = match read_str_with(
        "\u{feff}\u{feff}logLevel: debug\nlogFormat: text\n",
        UnknownKeys::Warn,
    ) {
        Err(ConfigError::Invalid(e)) => e,
        other => panic!("{other:?}"),
    };
    assert!(e[0].to_string().contains("byte order mark"), "{e:?}");
}

#[test]
fn a_configuration_nested_deeper_than_the_documented_limit_is_refused_naming_the_line() {
    let dir = std::env::temp_dir().join(format!("config-nesting-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("deep.yaml");
    std::fs::write(
        &path,
        format!("featureGates: {}{}\n", "[".repeat(200), "]".repeat(200)),
    )
    .unwrap();
    let e = read_with(Some(&path), UnknownKeys::Warn)
        .unwrap_err()
        .to_string();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        e.contains("line 1: flow collections ('[', '{') nested deeper than 128 levels"),
        "{e}"
    );
}

#[test]
fn a_schedule_whose_every_key_is_unknown_is_an_error_not_always_active() {
    for schedule in [
        "{betwen: {start: '2026-12-02T00:00:00Z'}}",
        "{between: {strat: '2026-12-02T00:00:00Z'}}",
    ] {
        let e = errors(&format!(
            "schedulers:\n  shoot:\n    profiles:\n    - {{id: f, freeze: true, schedule: {schedule}}}\n    - {{id: d, profile: {{}}}}\n"
        ));
        let e: Vec<String> = e.iter().map(|e| e.to_string()).collect();
        assert!(
            e.iter().any(|e| e.starts_with(
                "schedulers.shoot.profiles[0].schedule: every key of it is unknown (schedulers.shoot.profiles[0].schedule.betw"
            ) || e.starts_with("schedulers.shoot.profiles[0].schedule: every key of it is unknown (schedulers.shoot.profiles[0].schedule.between.strat")),
            "{schedule}: {e:#?}"
        );
    }
    // written empty, it means "always", as before
    assert!(
        load_str(
            "schedulers:\n  shoot:\n    profiles:\n    - {id: d, schedule: {}, profile: {}}\n"
        )
        .is_ok()
    );
}

#[test]
fn automatic_evacuation_is_refused_where_binds_patch_the_shoot() {
    let yaml =
        "schedulers: {shoot: {bindingMode: Patch, evacuation: {enabled: true, mode: automatic}}}";
    assert_eq!(paths(yaml), ["schedulers.shoot.evacuation.mode"]);
    let manual =
        "schedulers: {shoot: {bindingMode: Patch, evacuation: {enabled: true, mode: manual}}}";
    assert!(load_str(manual).is_ok());
    let automatic = "schedulers: {shoot: {evacuation: {enabled: true, mode: automatic, \
                     automatic: {maxMovesInFlight: 1, maxMovesPerHour: 2, maxShareInFlight: 50}}}}";
    let c = load_str(automatic).unwrap();
    assert_eq!(
        c.schedulers.shoot.evacuation.automatic.max_moves_per_hour,
        2
    );
}
