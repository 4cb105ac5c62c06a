//! Prometheus metrics, served on `server.metrics` at `/metrics`.

use std::sync::atomic::AtomicI64;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::cache::Cache;
use super::carbon_metrics::CarbonMetrics;
use super::rest_metrics::RestClientMetrics;
use super::runtime_metrics::RuntimeMetrics;

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
pub struct RestartLabels {
    pub kind: String,
    /// `silent`: nothing arrived for too long; `error`: the list or watch failed
    pub reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SeedLabels {
    pub seed: String,
}

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
    /// decisions that gave up over their budget, by the stage they were in
    pub over_budget: Family<StageLabels, Counter>,
    pub carbon: CarbonMetrics,
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
        let events_dropped = Counter::default();
        registry.register(
            "events_dropped",
            "Reports (events with their status.lastOperation write) dropped because the report queue was full",
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
        let over_budget = Family::<StageLabels, Counter>::default();
        registry.register(
            "decisions_over_budget",
            "Decisions that did not finish within schedulers.shoot.decisionBudget and gave up (the shoot is tried again with backoff), by the filter, set step or priority they were in",
            over_budget.clone(),
        );
        let carbon = CarbonMetrics::register(&mut registry);
        Metrics {
            over_budget,
            feed_last_activity,
            watch_restarts,
            registry,
            attempts,
            attempt_duration,
            pending,
            conflicts,
            bind_errors,
            binds_forbidden,
            leader,
            seed_shoots,
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

    /// Refreshes the gauges that mirror the cache (called before each scrape).
    pub fn refresh(&self, state: &Cache) {
        self.pending.set(state.pending_count() as i64);
        self.seed_shoots.clear();
        for seed in state.snapshot.seeds() {
            let n = state.snapshot.usage().shoots_on(&seed.name);
            self.seed_shoots
                .get_or_create(&SeedLabels {
                    seed: seed.name.to_string(),
                })
                .set(n as i64);
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
    use super::*;
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
        m.refresh(&st);
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
}
