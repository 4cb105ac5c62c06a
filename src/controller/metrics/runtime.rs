//! The metrics that controller-runtime (v0.24, with its default priority queue) and client-go
//! serve for upstream's scheduler, under the same names, labels and label values, so that
//! dashboards and alerts written for upstream keep working.
//!
//! One reconcile is one processing of one shoot key by a worker. Its result is the one
//! upstream's reconciler would return for the same situation: `error` whenever upstream returns
//! an error (no seed fits, the bind failed), `requeue_after` when the key waits for a known time
//! (a freeze window ends), `requeue` when it is queued again at once without an error (leadership
//! was lost mid-attempt), else `success`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tokio::time::Instant;

/// The controller name upstream registers (`Named("shoot")`); also its work queue's name.
pub const CONTROLLER: &str = "shoot";

/// Upstream's `controller_runtime_reconcile_time_seconds` buckets.
const RECONCILE_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// client-go's `ExponentialBuckets(10e-9, 10, 12)`, computed as Go computes it (each bound the
/// previous one times ten), so the bounds are the same floating-point numbers.
fn workqueue_buckets() -> Vec<f64> {
    let mut bound = 10e-9;
    (0..12)
        .map(|_| {
            let b = bound;
            bound *= 10.0;
            b
        })
        .collect()
}

/// The `result` label of `controller_runtime_reconcile_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReconcileResult {
    Success,
    Error,
    Requeue,
    RequeueAfter,
}

impl ReconcileResult {
    pub const ALL: [ReconcileResult; 4] = [
        ReconcileResult::Error,
        ReconcileResult::RequeueAfter,
        ReconcileResult::Requeue,
        ReconcileResult::Success,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::Error => "error",
            ReconcileResult::Requeue => "requeue",
            ReconcileResult::RequeueAfter => "requeue_after",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    controller: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    controller: String,
    name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DepthLabels {
    controller: String,
    name: String,
    priority: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabels {
    name: String,
}

type IntGauge = Gauge<i64, AtomicI64>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// `controller_runtime_*` for one controller.
pub struct ReconcileMetrics {
    controller: String,
    total: Family<ReconcileLabels, Counter>,
    errors: Counter,
    time: Histogram,
    max_concurrent: IntGauge,
    active: IntGauge,
}

impl ReconcileMetrics {
    fn register(registry: &mut Registry, controller: &str) -> Self {
        let labels = ControllerLabels {
            controller: controller.to_string(),
        };
        let total = Family::<ReconcileLabels, Counter>::default();
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            total.clone(),
        );
        let errors = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            errors.clone(),
        );
        let time = Family::<ControllerLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(RECONCILE_BUCKETS)
        });
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            time.clone(),
        );
        let max_concurrent = Family::<ControllerLabels, IntGauge>::default();
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            max_concurrent.clone(),
        );
        let active = Family::<ControllerLabels, IntGauge>::default();
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            active.clone(),
        );
        for result in ReconcileResult::ALL {
            total.get_or_create_owned(&ReconcileLabels {
                controller: controller.to_string(),
                result: result.as_str(),
            });
        }
        ReconcileMetrics {
            controller: controller.to_string(),
            errors: errors.get_or_create_owned(&labels),
            time: time.get_or_create_owned(&labels),
            max_concurrent: max_concurrent.get_or_create_owned(&labels),
            active: active.get_or_create_owned(&labels),
            total,
        }
    }

    /// The workers start (upstream's `initMetrics`).
    pub fn started(&self, workers: usize) {
        self.max_concurrent.set(workers as i64);
        self.active.set(0);
    }

    /// A worker took a key; the returned guard frees the worker when dropped.
    pub fn busy(&self) -> ActiveWorker {
        self.active.inc();
        ActiveWorker(self.active.clone())
    }

    /// One reconcile finished with `result` after `took`.
    pub fn reconciled(&self, result: ReconcileResult, took: Duration) {
        self.time.observe(took.as_secs_f64());
        if result == ReconcileResult::Error {
            self.errors.inc();
        }
        self.total
            .get_or_create(&ReconcileLabels {
                controller: self.controller.clone(),
                result: result.as_str(),
            })
            .inc();
    }
}

/// Counts a worker as active until dropped.
pub struct ActiveWorker(IntGauge);

impl Drop for ActiveWorker {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[derive(Default)]
struct Times {
    /// when a key waiting to be handed out became ready (the first time, until handed out)
    added: HashMap<Arc<str>, Instant>,
    /// when a key being processed was handed out
    processing: HashMap<Arc<str>, Instant>,
}

/// `workqueue_*` for one queue, fed by [`crate::controller::queue::Queue`] at the points where
/// controller-runtime's priority queue feeds its own: a key becoming ready to hand out (`add`),
/// being handed out (`get`), finished (`done`), and every add with a delay (`retry`).
pub struct WorkqueueMetrics {
    depth: IntGauge,
    adds: Counter,
    queue_duration: Histogram,
    work_duration: Histogram,
    unfinished: FloatGauge,
    longest: FloatGauge,
    retries: Counter,
    times: Mutex<Times>,
}

impl WorkqueueMetrics {
    fn register(registry: &mut Registry, name: &str) -> Self {
        let labels = QueueLabels {
            controller: name.to_string(),
            name: name.to_string(),
        };
        let depth = Family::<DepthLabels, IntGauge>::default();
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            depth.clone(),
        );
        let adds = Family::<QueueLabels, Counter>::default();
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            adds.clone(),
        );
        let histogram = || Histogram::new(workqueue_buckets());
        let queue_duration = Family::<QueueLabels, Histogram>::new_with_constructor(histogram);
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            queue_duration.clone(),
        );
        let work_duration = Family::<QueueLabels, Histogram>::new_with_constructor(histogram);
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            work_duration.clone(),
        );
        let unfinished = Family::<QueueLabels, FloatGauge>::default();
        registry.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases",
            unfinished.clone(),
        );
        let longest = Family::<QueueLabels, FloatGauge>::default();
        registry.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            longest.clone(),
        );
        let retries = Family::<QueueLabels, Counter>::default();
        registry.register(
            "workqueue_retries",
            "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
            retries.clone(),
        );
        WorkqueueMetrics {
            // every key is queued at priority 0: this queue has no priorities
            depth: depth.get_or_create_owned(&DepthLabels {
                controller: name.to_string(),
                name: name.to_string(),
                priority: "0".into(),
            }),
            adds: adds.get_or_create_owned(&labels),
            queue_duration: queue_duration.get_or_create_owned(&labels),
            work_duration: work_duration.get_or_create_owned(&labels),
            unfinished: unfinished.get_or_create_owned(&labels),
            longest: longest.get_or_create_owned(&labels),
            retries: retries.get_or_create_owned(&labels),
            times: Mutex::default(),
        }
    }

    fn times(&self) -> std::sync::MutexGuard<'_, Times> {
        self.times.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A key became ready to be handed out (new, due, woken, or added while being processed).
    pub fn add(&self, key: &Arc<str>) {
        self.adds.inc();
        self.depth.inc();
        self.times()
            .added
            .entry(key.clone())
            .or_insert_with(Instant::now);
    }

    /// A key was handed to a worker.
    pub fn get(&self, key: &Arc<str>) {
        self.depth.dec();
        let now = Instant::now();
        let mut t = self.times();
        t.processing.insert(key.clone(), now);
        if let Some(added) = t.added.remove(key) {
            self.queue_duration
                .observe(now.duration_since(added).as_secs_f64());
        }
    }

    /// A worker finished a key.
    pub fn done(&self, key: &str) {
        if let Some(start) = self.times().processing.remove(key) {
            self.work_duration.observe(start.elapsed().as_secs_f64());
        }
    }

    /// A key was added with a non-zero delay.
    pub fn retry(&self) {
        self.retries.inc();
    }

    /// Sets the in-progress gauges from the keys being processed now.
    pub fn refresh(&self) {
        let now = Instant::now();
        let (mut total, mut oldest) = (0.0, 0.0_f64);
        for start in self.times().processing.values() {
            let age = now.duration_since(*start).as_secs_f64();
            total += age;
            oldest = oldest.max(age);
        }
        self.unfinished.set(total);
        self.longest.set(oldest);
    }
}

/// The controller-runtime and client-go metric families.
pub struct RuntimeMetrics {
    /// `controller_runtime_*` and `workqueue_*`: upstream serves them only from the process
    /// whose controllers run, i.e. the leader
    controller_registry: Registry,
    /// `rest_client_*` and `leader_election_*`: served by every process
    process_registry: Registry,
    pub reconcile: ReconcileMetrics,
    pub workqueue: Arc<WorkqueueMetrics>,
    pub rest_client: crate::controller::metrics::rest::RestClientMetrics,
    leader: Family<LeaseLabels, IntGauge>,
}

impl Default for RuntimeMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl RuntimeMetrics {
    pub fn new() -> Self {
        let mut controller_registry = Registry::default();
        let reconcile = ReconcileMetrics::register(&mut controller_registry, CONTROLLER);
        let workqueue = Arc::new(WorkqueueMetrics::register(
            &mut controller_registry,
            CONTROLLER,
        ));
        let mut process_registry = Registry::default();
        let rest_client =
            crate::controller::metrics::rest::RestClientMetrics::register(&mut process_registry);
        let leader = Family::<LeaseLabels, IntGauge>::default();
        process_registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name",
            leader.clone(),
        );
        RuntimeMetrics {
            controller_registry,
            process_registry,
            reconcile,
            workqueue,
            rest_client,
            leader,
        }
    }

    /// `leader_election_master_status{name=<lease name>}`.
    pub fn set_leader(&self, lease: &str, leading: bool) {
        self.leader
            .get_or_create(&LeaseLabels {
                name: lease.to_string(),
            })
            .set(leading as i64);
    }

    /// Appends the text exposition (without `# EOF`); the controller families only when
    /// `controller_running`.
    pub fn encode(&self, out: &mut String, controller_running: bool) {
        use prometheus_client::encoding::text::encode_registry;
        if controller_running {
            self.workqueue.refresh();
            encode_registry(out, &self.controller_registry)
                .expect("writing to a String cannot fail");
        }
        encode_registry(out, &self.process_registry).expect("writing to a String cannot fail");
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::metrics::runtime::*;

    fn exposition(m: &RuntimeMetrics) -> String {
        let mut out = String::new();
        m.encode(&mut out, true);
        out
    }

    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn reconcile_results_start_at_zero_and_errors_are_also_counted_apart() {
        let m = RuntimeMetrics::new();
        m.reconcile.started(5);
        let text = exposition(&m);
        for result in ["success", "error", "requeue", "requeue_after"] {
            assert_eq!(
                value(
                    &text,
                    &format!(
                        "controller_runtime_reconcile_total{{controller=\"shoot\",result=\"{result}\"}}"
                    )
                ),
                Some(0.0),
                "{result} in:\n{text}"
            );
        }
        assert_eq!(
            value(
                &text,
                "controller_runtime_max_concurrent_reconciles{controller=\"shoot\"}"
            ),
            Some(5.0)
        );

        m.reconcile
            .reconciled(ReconcileResult::Success, Duration::from_millis(3));
        m.reconcile
            .reconciled(ReconcileResult::Error, Duration::from_millis(70));
        m.reconcile
            .reconciled(ReconcileResult::Error, Duration::from_secs(2));
        m.reconcile
            .reconciled(ReconcileResult::RequeueAfter, Duration::ZERO);
        let text = exposition(&m);
        let get = |s: &str| value(&text, s).unwrap_or_else(|| panic!("{s} in:\n{text}"));
        assert_eq!(
            get("controller_runtime_reconcile_total{controller=\"shoot\",result=\"error\"}"),
            2.0
        );
        assert_eq!(
            get(
                "controller_runtime_reconcile_total{controller=\"shoot\",result=\"requeue_after\"}"
            ),
            1.0
        );
        assert_eq!(
            get("controller_runtime_reconcile_errors_total{controller=\"shoot\"}"),
            2.0
        );
        assert_eq!(
            get("controller_runtime_reconcile_time_seconds_count{controller=\"shoot\"}"),
            4.0
        );
        // upstream's bucket bounds: 3 ms and 0 fall into le=0.005, 70 ms into le=0.1
        assert_eq!(
            get(
                "controller_runtime_reconcile_time_seconds_bucket{le=\"0.005\",controller=\"shoot\"}"
            ),
            2.0
        );
        assert_eq!(
            get(
                "controller_runtime_reconcile_time_seconds_bucket{le=\"0.1\",controller=\"shoot\"}"
            ),
            3.0
        );
        assert_eq!(
            get(
                "controller_runtime_reconcile_time_seconds_bucket{le=\"60.0\",controller=\"shoot\"}"
            ),
            4.0
        );
    }

    #[test]
    fn each_attempt_counts_with_the_result_upstreams_reconciler_returns_for_it() {
        use crate::controller::attempt::Attempt;
        let table = [
            (Attempt::Scheduled("s1".into()), "success"),
            (Attempt::Skipped, "success"),
            (Attempt::LeftAlone("other".into()), "success"),
            (Attempt::Deferred(None), "success"),
            (
                Attempt::Deferred(Some(Duration::from_secs(60))),
                "requeue_after",
            ),
            (Attempt::NotLeader, "requeue"),
            (Attempt::Unsettled, "requeue"),
            (Attempt::Unschedulable, "error"),
            (Attempt::Conflict, "error"),
            (Attempt::Error, "error"),
        ];
        for (attempt, want) in table {
            assert_eq!(attempt.reconcile_result().as_str(), want, "{attempt:?}");
        }
    }

    #[test]
    fn active_workers_count_the_workers_holding_a_key() {
        let m = RuntimeMetrics::new();
        m.reconcile.started(3);
        let a = m.reconcile.busy();
        let b = m.reconcile.busy();
        let series = "controller_runtime_active_workers{controller=\"shoot\"}";
        assert_eq!(value(&exposition(&m), series), Some(2.0));
        drop(a);
        drop(b);
        assert_eq!(value(&exposition(&m), series), Some(0.0));
    }

    fn queue(m: &RuntimeMetrics) -> crate::controller::queue::Queue {
        crate::controller::queue::Queue::with_metrics(
            crate::controller::queue::BackoffPolicy {
                initial: Duration::from_secs(1),
                max: Duration::from_secs(8),
            },
            m.workqueue.clone(),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn workqueue_metrics_follow_keys_from_ready_to_handed_out_to_done() {
        let m = RuntimeMetrics::new();
        let q = queue(&m);
        let get = |s: &str| {
            let text = exposition(&m);
            value(
                &text,
                &format!("{s}{{controller=\"shoot\",name=\"shoot\"}}"),
            )
            .unwrap_or_else(|| panic!("{s} in:\n{text}"))
        };
        let depth = || {
            value(
                &exposition(&m),
                "workqueue_depth{controller=\"shoot\",name=\"shoot\",priority=\"0\"}",
            )
            .unwrap()
        };
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(
            get("workqueue_adds_total"),
            2.0,
            "a key already waiting is not added again"
        );
        assert_eq!(depth(), 2.0);

        tokio::time::advance(Duration::from_secs(2)).await;
        let a = q.next().await.unwrap();
        assert_eq!(depth(), 1.0);
        assert_eq!(get("workqueue_queue_duration_seconds_count"), 1.0);
        assert_eq!(get("workqueue_queue_duration_seconds_sum"), 2.0);

        q.add("a");
        assert_eq!(
            get("workqueue_adds_total"),
            3.0,
            "added while being processed: counted now, handed out after done"
        );
        assert_eq!(depth(), 2.0);
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(get("workqueue_unfinished_work_seconds"), 5.0);
        assert_eq!(get("workqueue_longest_running_processor_seconds"), 5.0);
        q.done(&a);
        assert_eq!(get("workqueue_work_duration_seconds_count"), 1.0);
        assert_eq!(get("workqueue_work_duration_seconds_sum"), 5.0);
        assert_eq!(get("workqueue_unfinished_work_seconds"), 0.0);
        assert_eq!(get("workqueue_adds_total"), 3.0, "done does not add again");
        assert_eq!(depth(), 2.0);

        // every add with a delay is a retry, even when the key is already waiting
        q.add_after("c", Duration::from_secs(10));
        q.add_after("b", Duration::from_secs(1));
        q.add_backoff("d");
        assert_eq!(get("workqueue_retries_total"), 3.0);
        assert_eq!(
            get("workqueue_adds_total"),
            3.0,
            "delayed keys are not ready yet"
        );
        q.add("c");
        assert_eq!(
            get("workqueue_adds_total"),
            4.0,
            "a delayed key made ready now"
        );
        let mut got = Vec::new();
        for _ in 0..4 {
            let k = q.next().await.unwrap();
            got.push(k.to_string());
            q.done(&k);
        }
        got.sort();
        assert_eq!(got, ["a", "b", "c", "d"]);
        assert_eq!(
            get("workqueue_adds_total"),
            5.0,
            "d counted when it came due"
        );
        assert_eq!(depth(), 0.0);
        assert_eq!(get("workqueue_queue_duration_seconds_count"), 5.0);
        assert_eq!(get("workqueue_work_duration_seconds_count"), 5.0);
    }

    #[test]
    fn workqueue_buckets_are_client_gos_exponential_ones() {
        let b = workqueue_buckets();
        assert_eq!(b.len(), 12);
        assert_eq!(b[0], 1e-8);
        assert!((b[11] - 1000.0).abs() < 1e-9, "{b:?}");
        for w in b.windows(2) {
            assert!((w[1] / w[0] - 10.0).abs() < 1e-9);
        }
    }

    #[test]
    fn leader_status_is_labelled_with_the_lease_name_and_served_without_the_controller() {
        let m = RuntimeMetrics::new();
        m.set_leader("gardener-scheduler-leader-election", false);
        let mut text = String::new();
        m.encode(&mut text, false);
        assert_eq!(
            value(
                &text,
                "leader_election_master_status{name=\"gardener-scheduler-leader-election\"}"
            ),
            Some(0.0)
        );
        assert!(
            !text.contains("workqueue_") && !text.contains("controller_runtime_"),
            "a process whose controller does not run serves no controller series:\n{text}"
        );
        m.set_leader("gardener-scheduler-leader-election", true);
        assert_eq!(
            value(
                &exposition(&m),
                "leader_election_master_status{name=\"gardener-scheduler-leader-election\"}"
            ),
            Some(1.0)
        );
    }
}
