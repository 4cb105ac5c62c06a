//! Upstream's `SetDefaults_*` (`pkg/apis/config/scheduler/v1alpha1/defaults.go` and
//! component-base's `RecommendedDefaultLeaderElectionConfiguration`): gardener-operator writes
//! unset fields as Go zero values (`0`, `0s`, `""`), and upstream replaces each of them by its
//! default. This does the same, field by field, after the file is read and before validation.

use std::time::Duration;

use super::types::*;

/// Replaces every zero value that upstream defaults by upstream's default.
///
/// Fields upstream does not default keep their value (an explicit `leaderElect: false`, an
/// empty `kubeconfig`), and so do our extension keys, whose zero values are errors.
pub fn set_defaults(cfg: &mut SchedulerConfiguration) {
    let cc = &mut cfg.client_connection;
    let cc_default = ClientConnection::default();
    if cc.qps == 0.0 {
        cc.qps = cc_default.qps;
    }
    if cc.burst == 0 {
        cc.burst = cc_default.burst;
    }

    let le = &mut cfg.leader_election;
    let le_default = LeaderElection::default();
    zero_to(&mut le.lease_duration, le_default.lease_duration);
    zero_to(&mut le.renew_deadline, le_default.renew_deadline);
    zero_to(&mut le.retry_period, le_default.retry_period);
    empty_to(&mut le.resource_lock, &le_default.resource_lock);
    empty_to(&mut le.resource_namespace, &le_default.resource_namespace);
    empty_to(&mut le.resource_name, &le_default.resource_name);

    let server_default = ServerConfiguration::default();
    if cfg.server.health_probes.port == 0 {
        cfg.server.health_probes.port = server_default.health_probes.port;
    }
    if cfg.server.metrics.port == 0 {
        cfg.server.metrics.port = server_default.metrics.port;
    }

    if cfg.schedulers.backup_bucket.concurrent_syncs == 0 {
        cfg.schedulers.backup_bucket.concurrent_syncs =
            BackupBucketScheduler::default().concurrent_syncs;
    }
    let shoot = &mut cfg.schedulers.shoot;
    let shoot_default = ShootScheduler::default();
    if shoot.concurrent_syncs == 0 {
        shoot.concurrent_syncs = shoot_default.concurrent_syncs;
    }
    empty_to(
        &mut shoot.candidate_determination_strategy,
        &shoot_default.candidate_determination_strategy,
    );
    // Removed upstream; its former default applied to zero as well.
    zero_to(
        &mut shoot.retry_sync_period,
        shoot_default.retry_sync_period,
    );
    zero_to(&mut shoot.decision_budget, shoot_default.decision_budget);
}

fn zero_to(field: &mut Duration, default: Duration) {
    if field.is_zero() {
        *field = default;
    }
}

fn empty_to(field: &mut String, default: &str) {
    if field.is_empty() {
        *field = default.to_string();
    }
}
