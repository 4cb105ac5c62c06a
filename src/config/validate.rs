use std::net::IpAddr;

use super::types::*;
use crate::field_error::{FieldError, GREATER_THAN_ZERO, unsupported};

/// Feature gate names upstream's scheduler knows. It registers none of Gardener's gates
/// (`features.GetFeatures()` without names, upstream `pkg/scheduler/features`), so only the two
/// gates every component-base gate set has remain; none of them changes what we do.
pub const KNOWN_FEATURE_GATES: [&str; 2] = ["AllAlpha", "AllBeta"];

/// The bounds of `schedulers.shoot.decisionBudget`: decisions take microseconds to
/// milliseconds; a budget below 10 ms would fail decisions that are merely busy, one over five
/// minutes would hold the cache that long.
const MIN_DECISION_BUDGET: std::time::Duration = std::time::Duration::from_millis(10);
const MAX_DECISION_BUDGET: std::time::Duration = std::time::Duration::from_secs(300);

/// The bounds of `schedulers.shoot.listPageSize`: below 50 a landscape's list is thousands of
/// requests; a page is held whole while it is decoded, and 10,000 shoots of 8 kB are 80 MB.
const LIST_PAGE_SIZES: std::ops::RangeInclusive<u32> = 50..=10_000;

/// The longest `leaderElection` durations: a crashed leader blocks failover for up to
/// `leaseDuration`; a day is far beyond any setting in use (upstream recommends 15s).
const MAX_LEADER_DURATION: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The longest wait before a shoot is tried again (`retrySyncPeriod`, `backoff.initial`,
/// `backoff.max`): a day. Longer, a shoot that did not fit is in effect never retried.
const MAX_RETRY: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn longer_than(d: std::time::Duration, max: std::time::Duration) -> Option<String> {
    (d > max).then(|| {
        format!(
            "must be at most {}, got {}",
            crate::go_duration::format(max),
            crate::go_duration::format(d)
        )
    })
}

/// Every semantic problem of a configuration, each with its field path.
pub fn validate(cfg: &SchedulerConfiguration) -> Vec<FieldError> {
    let mut e = Vec::new();
    let mut err = |path: &str, msg: String| e.push(FieldError::new(path, msg));

    if cfg.api_version != API_VERSION {
        err("apiVersion", unsupported(&cfg.api_version, [API_VERSION]));
    }
    if cfg.kind != KIND {
        err("kind", unsupported(&cfg.kind, [KIND]));
    }
    let cc = &cfg.client_connection;
    if cc.qps.is_infinite() {
        // the key is a 32-bit float, as upstream's
        err(
            "clientConnection.qps",
            format!("must be at most {:e} (a 32-bit float)", f32::MAX),
        );
    } else if !(cc.qps.is_finite() && cc.qps >= 0.0) {
        err(
            "clientConnection.qps",
            format!("must be >= 0, got {}", cc.qps),
        );
    }
    if cc.burst < 0 {
        err(
            "clientConnection.burst",
            format!("must be >= 0, got {}", cc.burst),
        );
    }

    let le = &cfg.leader_election;
    if le.leader_elect {
        for (field, d) in [
            ("leaderElection.leaseDuration", le.lease_duration),
            ("leaderElection.renewDeadline", le.renew_deadline),
            ("leaderElection.retryPeriod", le.retry_period),
        ] {
            if d.is_zero() {
                err(field, GREATER_THAN_ZERO.into());
            } else if let Some(m) = longer_than(d, MAX_LEADER_DURATION) {
                err(field, m);
            }
        }
        if le.lease_duration <= le.renew_deadline {
            err(
                "leaderElection.leaseDuration",
                format!(
                    "must be greater than renewDeadline ({:?} <= {:?})",
                    le.lease_duration, le.renew_deadline
                ),
            );
        }
        if le.renew_deadline <= le.retry_period {
            err(
                "leaderElection.renewDeadline",
                format!(
                    "must be greater than retryPeriod ({:?} <= {:?})",
                    le.renew_deadline, le.retry_period
                ),
            );
        }
        if le.resource_lock != "leases" {
            err(
                "leaderElection.resourceLock",
                unsupported(&le.resource_lock, ["leases"]),
            );
        }
        // The Lease's name and namespace: the API server would refuse anything else, at every
        // renewal, long after the configuration loaded.
        if le.resource_name.is_empty() {
            err("leaderElection.resourceName", "is required".into());
        } else if let Err(e) = crate::names::dns1123_subdomain(&le.resource_name) {
            err("leaderElection.resourceName", e);
        }
        if le.resource_namespace.is_empty() {
            err("leaderElection.resourceNamespace", "is required".into());
        } else if let Err(e) = crate::names::dns1123_label(&le.resource_namespace) {
            err("leaderElection.resourceNamespace", e);
        }
    }

    for (path, server) in [
        ("server.healthProbes", &cfg.server.health_probes),
        ("server.metrics", &cfg.server.metrics),
    ] {
        if !(1..=65535).contains(&server.port) {
            err(
                &format!("{path}.port"),
                format!("must be between 1 and 65535, got {}", server.port),
            );
        }
        if !server.bind_address.is_empty() && server.bind_address.parse::<IpAddr>().is_err() {
            err(
                &format!("{path}.bindAddress"),
                format!("{:?} is not an IP address", server.bind_address),
            );
        }
    }
    if cfg.server.health_probes.port == cfg.server.metrics.port {
        err(
            "server.metrics.port",
            format!(
                "must differ from server.healthProbes.port ({})",
                cfg.server.metrics.port
            ),
        );
    }

    for name in cfg.feature_gates.keys() {
        if !KNOWN_FEATURE_GATES.contains(&name.as_str()) {
            err(
                &format!("featureGates.{name}"),
                format!(
                    "unrecognized feature gate {name:?}: gardener-scheduler knows {}",
                    KNOWN_FEATURE_GATES.map(|g| format!("{g:?}")).join(", ")
                ),
            );
        }
    }

    if cfg.schedulers.backup_bucket.concurrent_syncs < 0 {
        err(
            "schedulers.backupBucket.concurrentSyncs",
            format!(
                "must be >= 0, got {}",
                cfg.schedulers.backup_bucket.concurrent_syncs
            ),
        );
    }
    let shoot = &cfg.schedulers.shoot;
    if !(1..=1000).contains(&shoot.concurrent_syncs) {
        err(
            "schedulers.shoot.concurrentSyncs",
            format!("must be between 1 and 1000, got {}", shoot.concurrent_syncs),
        );
    }
    if shoot.retry_sync_period.is_zero() {
        err("schedulers.shoot.retrySyncPeriod", GREATER_THAN_ZERO.into());
    }
    for (field, d) in [
        ("schedulers.shoot.retrySyncPeriod", shoot.retry_sync_period),
        ("schedulers.shoot.backoff.initial", shoot.backoff.initial),
        ("schedulers.shoot.backoff.max", shoot.backoff.max),
    ] {
        if let Some(m) = longer_than(d, MAX_RETRY) {
            err(field, m);
        }
    }
    if !(MIN_DECISION_BUDGET..=MAX_DECISION_BUDGET).contains(&shoot.decision_budget) {
        err(
            "schedulers.shoot.decisionBudget",
            format!(
                "must be between {}ms and {}m, got {}",
                MIN_DECISION_BUDGET.as_millis(),
                MAX_DECISION_BUDGET.as_secs() / 60,
                crate::go_duration::format(shoot.decision_budget)
            ),
        );
    }
    if !LIST_PAGE_SIZES.contains(&shoot.list_page_size) {
        err(
            "schedulers.shoot.listPageSize",
            format!(
                "must be between {} and {}, got {}",
                LIST_PAGE_SIZES.start(),
                LIST_PAGE_SIZES.end(),
                shoot.list_page_size
            ),
        );
    }
    if shoot.scheduler_names.is_empty() {
        err(
            "schedulers.shoot.schedulerNames",
            "must name at least one scheduler".into(),
        );
    }
    for (i, n) in shoot.scheduler_names.iter().enumerate() {
        if n.is_empty() {
            err(
                &format!("schedulers.shoot.schedulerNames[{i}]"),
                "must not be empty".into(),
            );
        } else if let Err(e) = crate::names::dns1123_subdomain(n) {
            // As a pod's schedulerName: the value a shoot's spec.schedulerName is compared with.
            err(&format!("schedulers.shoot.schedulerNames[{i}]"), e);
        }
    }
    if shoot.backoff.initial.is_zero() {
        err("schedulers.shoot.backoff.initial", GREATER_THAN_ZERO.into());
    }
    if shoot.backoff.max < shoot.backoff.initial {
        err(
            "schedulers.shoot.backoff.max",
            format!(
                "must be at least backoff.initial ({:?} < {:?})",
                shoot.backoff.max, shoot.backoff.initial
            ),
        );
    }
    e.append(&mut crate::regions::validate(
        &shoot.regions,
        "schedulers.shoot.regions",
    ));
    super::evacuation::validate(&shoot.evacuation, &shoot.failback, &mut e);
    if shoot.evacuation.mode == super::EvacuationMode::Automatic
        && shoot.binding_mode == BindingMode::Patch
    {
        e.push(FieldError::new(
            "schedulers.shoot.evacuation.mode",
            "automatic moves shoots through shoots/binding, which bindingMode: Patch clusters \
             (CRDs only) do not serve; use mode: manual there",
        ));
    }
    e
}

/// What loads but is likely a mistake, each with its field path: a scheduler name listed twice.
pub fn notes(cfg: &SchedulerConfiguration) -> Vec<FieldError> {
    let names = &cfg.schedulers.shoot.scheduler_names;
    let mut notes = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if let Some(j) = names[..i].iter().position(|o| o == n) {
            notes.push(FieldError::new(
                format!("schedulers.shoot.schedulerNames[{i}]"),
                format!(
                    "{n:?} is listed twice (also schedulerNames[{j}]); the copy changes nothing"
                ),
            ));
        }
    }
    notes
}
