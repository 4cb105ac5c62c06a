//! Prometheus metrics, served on `server.metrics` at `/metrics`.

pub(in crate::controller) mod carbon;
pub(in crate::controller) mod evacuation;
pub(in crate::controller) mod rest;
pub(in crate::controller) mod runtime;

use std::sync::atomic::AtomicI64;

use crate::api::Shoot;
use crate::controller::cache::{Cache, Waiting};
use crate::controller::metrics::carbon::CarbonMetrics;
use crate::controller::metrics::evacuation::EvacuationMetrics;
use crate::controller::metrics::rest::RestClientMetrics;
use crate::controller::metrics::runtime::RuntimeMetrics;
use k8s_openapi::jiff::Timestamp;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// How a list of the kind's state was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListMode {
    /// one watch sending the state as events, ending at its marked bookmark
    Streaming,
    /// list pages of `listPageSize` objects
    Paged,
}

impl ListMode {
    pub const ALL: [ListMode; 2] = [ListMode::Streaming, ListMode::Paged];

    pub fn as_str(self) -> &'static str {
        match self {
            ListMode::Streaming => "streaming",
            ListMode::Paged => "paged",
        }
    }
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(non_camel_case_types)]
pub enum AttemptResult {
    scheduled,
    unschedulable,
    error,
    /// a freeze window or no active profile: the shoot waits, nothing failed
    deferred,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: AttemptResult,
    /// the profile chain entry in effect (`default` without `profiles`, `none` when no entry is
    /// active)
    pub profile: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CodeLabels {
    /// the HTTP status of the refusal, or `none` when no answer came
    pub code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StageLabels {
    /// the filter, set step or priority the decision was in
    pub stage: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// the watched kind (`Shoot`, `Seed`, ...)
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ListLabels {
    pub kind: String,
    /// `streaming`: one watch sending the state as events; `paged`: list pages
    pub mode: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RestartLabels {
    pub kind: String,
    /// `silent`: nothing arrived for too long; `error`: the list or watch failed
    pub reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SeedLabels {
    pub seed: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: String,
}

/// The `reason` values of `pending_shoots_by_reason`: why a pending shoot waits.
pub const PENDING_REASONS: [&str; 5] = [
    "undecided",
    "unschedulable",
    "bind_failed",
    "deferred",
    "gated",
];

/// The `reason` label of a pending shoot in this state.
fn pending_reason(state: Option<&Waiting>) -> &'static str {
    match state {
        None => "undecided",
        Some(Waiting::NoFit(_)) => "unschedulable",
        Some(Waiting::BindFailed) => "bind_failed",
        Some(Waiting::Deferred) => "deferred",
        Some(Waiting::Gated) => "gated",
    }
}

/// Seconds from `then` to `now`, 0 if `then` is later.
fn seconds_since(now: Timestamp, then: Timestamp) -> f64 {
    (now.as_millisecond() - then.as_millisecond()).max(0) as f64 / 1000.0
}

/// The `reason` values of `watch_restarts_total`.
pub const RESTART_REASONS: [&str; 2] = ["silent", "error"];

pub struct Metrics {
    registry: Registry,
    pub attempts: Family<ResultLabels, Counter>,
    pub attempt_duration: Family<ResultLabels, Histogram>,
    pub pending: Gauge<i64, AtomicI64>,
    pub conflicts: Counter,
    pub bind_errors: Family<CodeLabels, Counter>,
    pub binds_forbidden: Gauge<i64, AtomicI64>,
    pub leader: Gauge<i64, AtomicI64>,
    pub seed_shoots: Family<SeedLabels, Gauge<i64, AtomicI64>>,
    /// `status.allocatable.shoots` of each seed that publishes it
    pub seed_allocatable: Family<SeedLabels, Gauge<i64, AtomicI64>>,
    /// pending shoots by why they wait (leader only; set before each scrape)
    pub pending_by_reason: Family<ReasonLabels, Gauge<i64, AtomicI64>>,
    /// seconds since the oldest pending shoot of each reason was created (leader only)
    pub pending_oldest: Family<ReasonLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    /// pending shoots that fit no seed, by each reason a seed rejected them for (leader only)
    pub unschedulable: Family<ReasonLabels, Gauge<i64, AtomicI64>>,
    /// from a shoot's creationTimestamp to its successful bind
    pub create_to_bound: Histogram,
    /// reports (events, `status.lastOperation`) dropped because their queue was full
    pub events_dropped: Counter,
    /// reports waiting to be sent
    pub events_queued: Gauge<i64, AtomicI64>,
    /// requests of the reporter's own API client, by code and method
    pub event_client: RestClientMetrics,
    /// seconds since each feed's watch last delivered anything (set before each scrape)
    pub feed_last_activity: Family<KindLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    /// watch restarts by kind and reason
    pub watch_restarts: Family<RestartLabels, Counter>,
    /// lists of a watched kind's state begun, by how they are read
    pub lists: Family<ListLabels, Counter>,
    /// decisions that gave up over their budget, by the stage they were in
    pub over_budget: Family<StageLabels, Counter>,
    pub carbon: CarbonMetrics,
    /// seed evacuation: plans published per seed
    pub evacuation: EvacuationMetrics,
    /// controller-runtime's and client-go's families, as upstream serves them
    pub runtime: RuntimeMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("gardener_scheduler");
        let attempts = Family::<ResultLabels, Counter>::default();
        registry.register(
            "schedule_attempts",
            "Scheduling attempts by result (scheduled, unschedulable: no seed fits, error: API failure, deferred: freeze or no active profile) and profile chain entry",
            attempts.clone(),
        );
        let attempt_duration = Family::<ResultLabels, Histogram>::new_with_constructor(|| {
            // 100 µs .. ~1.6 s: decision plus bind round trip
            Histogram::new([
                0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                1.0, 2.5, 5.0,
            ])
        });
        registry.register(
            "scheduling_attempt_duration_seconds",
            "Duration of one scheduling attempt (decision and, when scheduled, the bind)",
            attempt_duration.clone(),
        );
        let pending = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "pending_shoots",
            "Shoots waiting for this scheduler (unassigned, not being bound)",
            pending.clone(),
        );
        let conflicts = Counter::default();
        registry.register(
            "binding_conflicts",
            "Binds rejected because the shoot changed since it was read (409 Conflict)",
            conflicts.clone(),
        );
        let bind_errors = Family::<CodeLabels, Counter>::default();
        registry.register(
            "bind_errors",
            "Binds the API server refused or did not answer, by HTTP status (none: no answer)",
            bind_errors.clone(),
        );
        let binds_forbidden = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "binds_forbidden",
            "1 from a bind refused with 403 Forbidden until a bind succeeds again, else 0",
            binds_forbidden.clone(),
        );
        let leader = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "leader",
            "1 while this process holds the leader lease and may bind, else 0",
            leader.clone(),
        );
        let seed_shoots = Family::<SeedLabels, Gauge<i64, AtomicI64>>::default();
        registry.register(
            "seed_shoots",
            "Shoots counted on each seed, including binds the watch has not shown yet",
            seed_shoots.clone(),
        );
        let seed_allocatable = Family::<SeedLabels, Gauge<i64, AtomicI64>>::default();
        registry.register(
            "seed_allocatable_shoots",
            "status.allocatable.shoots of each seed that publishes it (seeds without it take any number of shoots)",
            seed_allocatable.clone(),
        );
        let pending_by_reason = Family::<ReasonLabels, Gauge<i64, AtomicI64>>::default();
        registry.register(
            "pending_shoots_by_reason",
            "Pending shoots by why they wait, as their last attempt left them (undecided: not decided yet; unschedulable: no seed fits; bind_failed: a seed fits but the bind failed; deferred: a freeze window or no active profile; gated: held by its scheduling gates); served by the leader only",
            pending_by_reason.clone(),
        );
        let pending_oldest =
            Family::<ReasonLabels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
        registry.register(
            "pending_shoots_oldest_age_seconds",
            "Seconds since the creationTimestamp of the oldest pending shoot of each reason of pending_shoots_by_reason, 0 when there is none; served by the leader only",
            pending_oldest.clone(),
        );
        let unschedulable = Family::<ReasonLabels, Gauge<i64, AtomicI64>>::default();
        registry.register(
            "unschedulable_shoots",
            "Pending shoots that fit no seed, by each reason a seed rejected them for (the reason names of simulate -o json: capacity, taints, otherRegion, ...; noSeeds, invalidShoot, invalidRegionConfig); a shoot counts under each of its reasons; served by the leader only",
            unschedulable.clone(),
        );
        let create_to_bound = Histogram::new([
            0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0,
            1800.0, 3600.0,
        ]);
        registry.register(
            "shoot_create_to_bound_seconds",
            "Seconds from a shoot's creationTimestamp to its successful bind by this process",
            create_to_bound.clone(),
        );
        let events_dropped = Counter::default();
        registry.register(
            "events_dropped",
            "Reports (events with their status.lastOperation write) dropped: the report queue was full, or the event was still refused after its retries",
            events_dropped.clone(),
        );
        let events_queued = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "events_queued",
            "Reports (events, status.lastOperation writes) waiting to be sent by the reporter's client",
            events_queued.clone(),
        );
        let event_client = RestClientMetrics::register_as(
            &mut registry,
            "event_client_requests",
            "HTTP requests of the client that sends events and status.lastOperation (its own rate limit), by status code, method and host; also counted in rest_client_requests_total",
        );
        let feed_last_activity =
            Family::<KindLabels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
        registry.register(
            "feed_last_activity_seconds",
            "Seconds since the watch of each kind last delivered anything (an event, a bookmark or its clean end); above 60 the feed is stale and /readyz fails",
            feed_last_activity.clone(),
        );
        let watch_restarts = Family::<RestartLabels, Counter>::default();
        registry.register(
            "watch_restarts",
            "Watches started again, by kind and reason (silent: nothing arrived for 40 s, so the kind is listed again; error: the list or watch failed)",
            watch_restarts.clone(),
        );
        let lists = Family::<ListLabels, Counter>::default();
        registry.register(
            "lists",
            "Lists of a watched kind's whole state begun (at start, after a 410 Gone or a silent watch), by kind and mode (streaming: one watch sends the state as events; paged: list pages, where the API server does not stream)",
            lists.clone(),
        );
        let over_budget = Family::<StageLabels, Counter>::default();
        registry.register(
            "decisions_over_budget",
            "Decisions that did not finish within schedulers.shoot.decisionBudget and gave up (the shoot is tried again with backoff), by the filter, set step or priority they were in",
            over_budget.clone(),
        );
        let carbon = CarbonMetrics::register(&mut registry);
        let evacuation = EvacuationMetrics::register(&mut registry);
        Metrics {
            evacuation,
            over_budget,
            feed_last_activity,
            watch_restarts,
            lists,
            registry,
            attempts,
            attempt_duration,
            pending,
            conflicts,
            bind_errors,
            binds_forbidden,
            leader,
            seed_shoots,
            seed_allocatable,
            pending_by_reason,
            pending_oldest,
            unschedulable,
            create_to_bound,
            events_dropped,
            events_queued,
            event_client,
            carbon,
            runtime: RuntimeMetrics::new(),
        }
    }

    pub fn observe(&self, result: AttemptResult, profile: &str, seconds: f64) {
        let labels = ResultLabels {
            result,
            profile: profile.to_string(),
        };
        self.attempts.get_or_create(&labels).inc();
        self.attempt_duration
            .get_or_create(&labels)
            .observe(seconds);
    }

    /// Counts a bind refused with `code` (an HTTP status, or `none`).
    pub fn bind_error(&self, code: &str) {
        self.bind_errors
            .get_or_create(&CodeLabels { code: code.into() })
            .inc();
    }

    /// Counts a decision that gave up over its budget in `stage`.
    pub fn over_budget(&self, stage: &str) {
        self.over_budget
            .get_or_create(&StageLabels {
                stage: stage.into(),
            })
            .inc();
    }

    /// Counts a restart of `kind`'s watch.
    pub fn watch_restarted(&self, kind: &str, reason: &str) {
        self.watch_restarts
            .get_or_create(&RestartLabels {
                kind: kind.into(),
                reason: reason.into(),
            })
            .inc();
    }

    /// Counts a list of `kind`'s state begun in `mode`.
    pub fn listed_as(&self, kind: &str, mode: ListMode) {
        self.lists
            .get_or_create(&ListLabels {
                kind: kind.into(),
                mode: mode.as_str().into(),
            })
            .inc();
    }

    /// Starts `kind`'s restart and list counters at 0, so the first of each is an increase.
    pub fn watch_tracked(&self, kind: &str) {
        for mode in ListMode::ALL {
            drop(self.lists.get_or_create(&ListLabels {
                kind: kind.into(),
                mode: mode.as_str().into(),
            }));
        }
        for reason in RESTART_REASONS {
            drop(self.watch_restarts.get_or_create(&RestartLabels {
                kind: kind.into(),
                reason: reason.into(),
            }));
        }
    }

    /// Counts a successful bind of `shoot`: the time since it was created.
    pub fn bound(&self, shoot: &Shoot) {
        if let Some(created) = &shoot.metadata.creation_timestamp {
            self.create_to_bound
                .observe(seconds_since(Timestamp::now(), created.0));
        }
    }

    /// Refreshes the gauges that mirror the cache (called before each scrape). Why shoots
    /// wait is known to the leader only, whose workers decide: standbys serve none of it.
    pub fn refresh(&self, state: &Cache, leading: bool) {
        self.pending.set(state.pending_count() as i64);
        self.seed_shoots.clear();
        self.seed_allocatable.clear();
        for seed in state.snapshot.seeds() {
            let n = state.snapshot.usage().shoots_on(&seed.name);
            let labels = SeedLabels {
                seed: seed.name.to_string(),
            };
            self.seed_shoots.get_or_create(&labels).set(n as i64);
            if let Some(capacity) = seed.allocatable_shoots() {
                self.seed_allocatable
                    .get_or_create(&labels)
                    .set(i64::try_from(capacity).unwrap_or(i64::MAX));
            }
        }
        self.pending_by_reason.clear();
        self.pending_oldest.clear();
        self.unschedulable.clear();
        if !leading {
            return;
        }
        let now = Timestamp::now();
        let mut counts = [0i64; PENDING_REASONS.len()];
        let mut oldest = [0.0f64; PENDING_REASONS.len()];
        let mut no_fit: std::collections::BTreeMap<&str, i64> = Default::default();
        for (state, created) in state.pending_states() {
            let reason = pending_reason(state);
            let i = PENDING_REASONS
                .iter()
                .position(|r| *r == reason)
                .unwrap_or(0);
            counts[i] += 1;
            if let Some(created) = created {
                oldest[i] = oldest[i].max(seconds_since(now, created));
            }
            if let Some(Waiting::NoFit(reasons)) = state {
                for r in reasons {
                    *no_fit.entry(r.as_str()).or_default() += 1;
                }
            }
        }
        for (i, reason) in PENDING_REASONS.iter().enumerate() {
            let labels = ReasonLabels {
                reason: reason.to_string(),
            };
            self.pending_by_reason.get_or_create(&labels).set(counts[i]);
            self.pending_oldest.get_or_create(&labels).set(oldest[i]);
        }
        for (reason, n) in no_fit {
            self.unschedulable
                .get_or_create(&ReasonLabels {
                    reason: reason.to_string(),
                })
                .set(n);
        }
    }

    /// The OpenMetrics text exposition, all families.
    pub fn encode(&self) -> String {
        self.exposition(true)
    }

    /// The OpenMetrics text exposition; the controller-runtime controller and work queue
    /// families only while `leading` (upstream starts its controller once elected).
    pub fn exposition(&self, leading: bool) -> String {
        use prometheus_client::encoding::text::{encode_eof, encode_registry};
        let mut out = String::new();
        encode_registry(&mut out, &self.registry).expect("writing to a String cannot fail");
        self.runtime.encode(&mut out, leading);
        encode_eof(&mut out).expect("writing to a String cannot fail");
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::metrics::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};

    #[test]
    fn exposition_names_match_the_documented_metrics() {
        let m = Metrics::new();
        m.observe(AttemptResult::scheduled, "default", 0.002);
        m.observe(AttemptResult::unschedulable, "default", 0.001);
        m.observe(AttemptResult::deferred, "release-weekend", 0.0);
        m.conflicts.inc();
        m.bind_error("403");
        m.leader.set(1);
        let mut st = Cache::new(vec!["default-scheduler".into()]);
        st.apply_seed(&SeedBuilder::new("s1").build());
        st.apply_shoot(&ShootBuilder::new("garden-a", "a").seed("s1").build());
        st.apply_shoot(&ShootBuilder::new("garden-a", "b").build());
        m.refresh(&st, true);
        let text = m.encode();
        for line in [
            "gardener_scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default\"} 1",
            "gardener_scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"default\"} 1",
            "gardener_scheduler_schedule_attempts_total{result=\"deferred\",profile=\"release-weekend\"} 1",
            "gardener_scheduler_scheduling_attempt_duration_seconds_count{result=\"scheduled\",profile=\"default\"} 1",
            "gardener_scheduler_pending_shoots 1",
            "gardener_scheduler_binding_conflicts_total 1",
            "gardener_scheduler_bind_errors_total{code=\"403\"} 1",
            "gardener_scheduler_binds_forbidden 0",
            "gardener_scheduler_leader 1",
            "gardener_scheduler_seed_shoots{seed=\"s1\"} 1",
            "gardener_scheduler_events_dropped_total 0",
            "gardener_scheduler_events_queued 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in:\n{text}"
            );
        }
    }

    fn series(text: &str, name: &str) -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn pending_shoots_are_served_by_why_they_wait_and_only_by_the_leader() {
        let m = Metrics::new();
        let mut st = Cache::new(vec!["default-scheduler".into()]);
        st.apply_seed(&SeedBuilder::new("s1").allocatable("shoots", "4").build());
        st.apply_seed(&SeedBuilder::new("s2").build());
        st.apply_shoot(&ShootBuilder::new("garden-a", "bound").seed("s1").build());
        for name in ["new", "full", "tainted", "refused", "frozen", "gated"] {
            st.apply_shoot(
                &ShootBuilder::new("garden-a", name)
                    .created("2020-01-01T00:00:00Z")
                    .build(),
            );
        }
        st.note_waiting(
            "garden-a/full",
            Waiting::NoFit(vec!["capacity".into(), "otherRegion".into()]),
        );
        st.note_waiting("garden-a/tainted", Waiting::NoFit(vec!["capacity".into()]));
        st.note_waiting("garden-a/refused", Waiting::BindFailed);
        st.note_waiting("garden-a/frozen", Waiting::Deferred);
        st.note_waiting("garden-a/gated", Waiting::Gated);
        // a bound shoot's state is not kept
        st.note_waiting("garden-a/bound", Waiting::BindFailed);

        m.refresh(&st, true);
        let text = m.encode();
        let mut by_reason = series(&text, "gardener_scheduler_pending_shoots_by_reason");
        by_reason.sort();
        assert_eq!(
            by_reason,
            [
                "gardener_scheduler_pending_shoots_by_reason{reason=\"bind_failed\"} 1",
                "gardener_scheduler_pending_shoots_by_reason{reason=\"deferred\"} 1",
                "gardener_scheduler_pending_shoots_by_reason{reason=\"gated\"} 1",
                "gardener_scheduler_pending_shoots_by_reason{reason=\"undecided\"} 1",
                "gardener_scheduler_pending_shoots_by_reason{reason=\"unschedulable\"} 2",
            ]
        );
        let mut unschedulable = series(&text, "gardener_scheduler_unschedulable_shoots");
        unschedulable.sort();
        assert_eq!(
            unschedulable,
            [
                "gardener_scheduler_unschedulable_shoots{reason=\"capacity\"} 2",
                "gardener_scheduler_unschedulable_shoots{reason=\"otherRegion\"} 1",
            ]
        );
        let age = |reason: &str| -> f64 {
            let prefix = format!(
                "gardener_scheduler_pending_shoots_oldest_age_seconds{{reason=\"{reason}\"}} "
            );
            text.lines()
                .find_map(|l| l.strip_prefix(&prefix)?.parse().ok())
                .unwrap_or_else(|| panic!("{prefix} in:\n{text}"))
        };
        // created in 2020: older than 5 years
        assert!(age("bind_failed") > 5.0 * 365.0 * 86400.0, "{text}");
        assert_eq!(
            series(&text, "gardener_scheduler_seed_allocatable_shoots"),
            ["gardener_scheduler_seed_allocatable_shoots{seed=\"s1\"} 4"],
            "only seeds that publish a capacity"
        );

        // a bind that succeeds takes the shoot out of every count
        st.apply_shoot(&ShootBuilder::new("garden-a", "refused").seed("s2").build());
        m.refresh(&st, true);
        let text = m.encode();
        assert!(
            text.contains("gardener_scheduler_pending_shoots_by_reason{reason=\"bind_failed\"} 0"),
            "{text}"
        );
        assert!(
            text.contains(
                "gardener_scheduler_pending_shoots_oldest_age_seconds{reason=\"bind_failed\"} 0"
            ),
            "{text}"
        );

        // a standby has not decided anything: it serves no reasons
        m.refresh(&st, false);
        let text = m.encode();
        assert!(series(&text, "gardener_scheduler_pending_shoots_by_reason").is_empty());
        assert!(series(&text, "gardener_scheduler_unschedulable_shoots").is_empty());
        assert!(
            series(
                &text,
                "gardener_scheduler_pending_shoots_oldest_age_seconds"
            )
            .is_empty()
        );
        assert_eq!(
            series(&text, "gardener_scheduler_pending_shoots"),
            ["gardener_scheduler_pending_shoots 5"]
        );
    }

    #[test]
    fn watch_restarts_start_at_zero_for_each_tracked_kind() {
        let m = Metrics::new();
        m.watch_tracked("Shoot");
        m.watch_restarted("Shoot", "silent");
        let text = m.encode();
        assert!(
            text.contains(
                "gardener_scheduler_watch_restarts_total{kind=\"Shoot\",reason=\"silent\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "gardener_scheduler_watch_restarts_total{kind=\"Shoot\",reason=\"error\"} 0"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_bind_counts_the_time_since_the_shoot_was_created() {
        let m = Metrics::new();
        m.bound(
            &ShootBuilder::new("garden-a", "a")
                .created("2020-01-01T00:00:00Z")
                .build(),
        );
        m.bound(&ShootBuilder::new("garden-a", "b").build());
        let text = m.encode();
        assert!(
            text.contains("gardener_scheduler_shoot_create_to_bound_seconds_count 1"),
            "a shoot without creationTimestamp is not counted:\n{text}"
        );
        assert!(
            text.contains(
                "gardener_scheduler_shoot_create_to_bound_seconds_bucket{le=\"3600.0\"} 0"
            ),
            "{text}"
        );
    }

    #[test]
    fn reason_names_are_the_distinct_reasons_of_simulate_json() {
        use crate::outcome::{FitError, Rejection};
        use crate::reason::{Reason, testing};
        let rejected = |reason: Reason| Rejection {
            seed: "s".into(),
            stage: "x",
            reason,
        };
        let fit = FitError::no_fit(
            3,
            vec![
                rejected(testing::full()),
                rejected(testing::elsewhere()),
                rejected(testing::full()),
            ],
        );
        assert_eq!(fit.reason_names(), ["capacity", "otherRegion"]);
        assert_eq!(FitError::no_fit(0, vec![]).reason_names(), ["noSeeds"]);
        assert_eq!(
            FitError::InvalidShoot {
                field: "spec.region".into(),
                message: "is required".into()
            }
            .reason_names(),
            ["invalidShoot"]
        );
    }
}
