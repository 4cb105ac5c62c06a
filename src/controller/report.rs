//! What people see of a decision: `events.k8s.io` Events on the shoot and, on failure,
//! `status.lastOperation`, worded as upstream words them.
//!
//! Reports leave the bind path: [`Reporter`] queues them (bounded, as client-go's event
//! broadcaster) and a few background tasks send them through the reporter's own API client,
//! which has its own rate limit. A full queue drops the report and counts it in
//! `gardener_scheduler_events_dropped_total`; [`Reporter::flush`] waits for the queue to empty
//! (a graceful stop).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use serde_json::json;
use tokio::sync::{Mutex, Notify, mpsc};

use super::bind::FIELD_MANAGER;
use crate::api::Shoot;
use crate::schedule::{Decision, FitError};

/// `reportingController` of every event: upstream's event recorder name (`shoot` controller +
/// `-scheduler`), so that event queries written for upstream find ours.
pub const REPORTING_CONTROLLER: &str = "shoot-scheduler";
pub const REASON_SCHEDULED: &str = "SchedulingSuccessful";
pub const REASON_FAILED: &str = "SchedulingFailed";
/// A freeze window or no active profile keeps the shoot waiting; not a failure.
pub const REASON_DEFERRED: &str = "SchedulingDeferred";
/// `action` of every event, upstream's `EventActionReconcile`.
const ACTION: &str = "Reconcile";
/// events.k8s.io accepts notes up to 1 kB.
const MAX_NOTE_BYTES: usize = 1024;
/// Repeats of the same event within this window update its series instead of adding events.
const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);
/// Bound on the series cache; the oldest entries go first.
const MAX_SERIES: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("publishing event {reason} for {shoot}: {source}")]
    PublishEvent {
        reason: &'static str,
        shoot: String,
        source: kube::Error,
    },
    #[error("patching status.lastOperation of {shoot}: {source}")]
    PatchStatus { shoot: String, source: kube::Error },
    #[error("{action} for {shoot}: no answer within {limit:?}")]
    Timeout {
        action: &'static str,
        shoot: String,
        limit: Duration,
    },
}

/// Cuts `s` to at most `max` bytes on a char boundary, marking the cut.
pub fn truncate_note(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Upstream's `Scheduled to seed "X"`. With a profile chain configured the entry that placed
/// the shoot follows (`Scheduled to seed "X" by profile "P"`), and with configured priorities
/// the winner's score summary (`(score 1124.5: ...)`): both only exist in those configurations.
pub fn success_note(decision: &Decision, name_profile: bool, scores: bool) -> String {
    let mut note = format!("Scheduled to seed {:?}", decision.seed);
    if name_profile {
        note.push_str(&format!(" by profile {:?}", decision.profile));
    }
    if scores {
        note.push_str(&format!(" ({})", decision.winner().short()));
    }
    note
}

/// The upstream description, `Failed to schedule Shoot: <reason>`.
pub fn failure_description(err: &impl std::fmt::Display) -> String {
    format!("Failed to schedule Shoot: {err}")
}

fn failure_note(err: &FitError) -> String {
    let hints = err.hints();
    if hints.is_empty() {
        failure_description(err)
    } else {
        format!(
            "{} To schedule it: {}.",
            failure_description(err),
            hints.join("; ")
        )
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct SeriesKey {
    uid: String,
    namespace: String,
    name: String,
    type_: &'static str,
    reason: &'static str,
    note: String,
}

struct Series {
    event_name: String,
    count: i32,
    last: chrono::DateTime<Utc>,
    /// published as a core/v1 Event
    core_v1: bool,
}

/// Reports waiting to be sent, at most; client-go's event broadcaster queues as many.
pub const QUEUE_CAPACITY: usize = 1000;
/// Reports sent at once. Repeats of one event are rare within a send's time; they may then
/// create two events instead of a series entry.
const SENDERS: usize = 4;
/// A full queue is logged at most this often (each drop is counted).
const DROP_LOG_EVERY: Duration = Duration::from_secs(60);

/// One report to send.
enum Job {
    Event {
        shoot: Shoot,
        type_: &'static str,
        reason: &'static str,
        note: String,
    },
    /// a `SchedulingFailed` event and `status.lastOperation`
    Failure {
        shoot: Shoot,
        note: String,
        description: String,
    },
}

/// The queue between the workers and the senders.
struct ReportQueue {
    tx: mpsc::Sender<Job>,
    /// taken by the senders when they start (on the first report)
    rx: std::sync::Mutex<Option<mpsc::Receiver<Job>>>,
    /// reports queued or being sent
    outstanding: AtomicUsize,
    idle: Notify,
    dropped: Counter,
    queued: Gauge<i64, AtomicI64>,
    last_drop_log: std::sync::Mutex<Option<tokio::time::Instant>>,
}

/// Queues reports for sending; see the module documentation.
#[derive(Clone)]
pub struct Reporter {
    publisher: Publisher,
    queue: Arc<ReportQueue>,
}

/// Sends events and status updates.
#[derive(Clone)]
struct Publisher {
    client: Client,
    instance: String,
    timeout: Duration,
    series: Arc<Mutex<HashMap<SeriesKey, Series>>>,
    /// set once events.k8s.io turned out to be forbidden or missing
    core_v1_events: Arc<AtomicBool>,
    /// success notes carry the winner's score summary (priorities are configured)
    score_notes: bool,
}

impl Reporter {
    /// Reports through `client` (give it its own rate limit), queueing at most `capacity`;
    /// drops beyond that are counted in `dropped`, the queue's length shown in `queued`.
    pub fn new(
        client: Client,
        instance: String,
        timeout: Duration,
        capacity: usize,
        dropped: Counter,
        queued: Gauge<i64, AtomicI64>,
    ) -> Self {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        Reporter {
            publisher: Publisher {
                client,
                instance,
                timeout,
                series: Arc::default(),
                core_v1_events: Arc::default(),
                score_notes: false,
            },
            queue: Arc::new(ReportQueue {
                tx,
                rx: std::sync::Mutex::new(Some(rx)),
                outstanding: AtomicUsize::new(0),
                idle: Notify::new(),
                dropped,
                queued,
                last_drop_log: std::sync::Mutex::new(None),
            }),
        }
    }

    /// Success notes carry the winner's score summary; for configurations with priorities.
    pub fn with_score_notes(mut self, on: bool) -> Self {
        self.publisher.score_notes = on;
        self
    }

    /// Queues `SchedulingSuccessful`.
    pub fn scheduled(&self, shoot: &Shoot, decision: &Decision, name_profile: bool) {
        self.enqueue(Job::Event {
            shoot: shoot.clone(),
            type_: "Normal",
            reason: REASON_SCHEDULED,
            note: success_note(decision, name_profile, self.publisher.score_notes),
        });
    }

    /// Queues `SchedulingDeferred` with the reason (a freeze window, no active profile).
    /// Nothing is written to the shoot's status: waiting is not a failure.
    pub fn deferred(&self, shoot: &Shoot, reason: &str) {
        self.enqueue(Job::Event {
            shoot: shoot.clone(),
            type_: "Normal",
            reason: REASON_DEFERRED,
            note: format!("Scheduling deferred: {reason}"),
        });
    }

    /// Queues the failure event and its record in `status.lastOperation`.
    pub fn failed(&self, shoot: &Shoot, err: &FitError) {
        self.enqueue(Job::Failure {
            shoot: shoot.clone(),
            note: failure_note(err),
            description: failure_description(err),
        });
    }

    /// Reports a bind the API server refused as upstream does: a `SchedulingFailed` event and
    /// `status.lastOperation`, with the server's error as the reason. Called once per attempt;
    /// attempts are backed off, and repeats update the event's series.
    pub fn bind_failed(&self, shoot: &Shoot, err: &super::bind::BindError) {
        let description = failure_description(err);
        self.enqueue(Job::Failure {
            shoot: shoot.clone(),
            note: description.clone(),
            description,
        });
    }

    fn enqueue(&self, job: Job) {
        let q = &self.queue;
        self.start_senders();
        q.outstanding.fetch_add(1, Ordering::SeqCst);
        match q.tx.try_send(job) {
            Ok(()) => {
                q.queued.inc();
            }
            Err(e) => {
                q.outstanding.fetch_sub(1, Ordering::SeqCst);
                q.idle.notify_waiters();
                q.dropped.inc();
                let (shoot, reason) = match e.into_inner() {
                    Job::Event { shoot, reason, .. } => (shoot, reason),
                    Job::Failure { shoot, .. } => (shoot, REASON_FAILED),
                };
                let now = tokio::time::Instant::now();
                let mut last = q.last_drop_log.lock().unwrap_or_else(|e| e.into_inner());
                if last.is_none_or(|t| now.duration_since(t) >= DROP_LOG_EVERY) {
                    *last = Some(now);
                    tracing::warn!(
                        shoot = %crate::api::object_key(&shoot.metadata),
                        reason,
                        dropped_total = q.dropped.get(),
                        "report queue full; dropping reports (counted in gardener_scheduler_events_dropped_total)"
                    );
                }
            }
        }
    }

    /// Starts the senders on the current runtime, once.
    fn start_senders(&self) {
        let Some(rx) = self
            .queue
            .rx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return;
        };
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..SENDERS {
            let rx = rx.clone();
            let queue = self.queue.clone();
            let publisher = self.publisher.clone();
            tokio::spawn(async move {
                loop {
                    let Some(job) = rx.lock().await.recv().await else {
                        return;
                    };
                    queue.queued.dec();
                    publisher.send(job).await;
                    if queue.outstanding.fetch_sub(1, Ordering::SeqCst) == 1 {
                        queue.idle.notify_waiters();
                    }
                }
            });
        }
    }

    /// Reports queued or being sent.
    pub fn outstanding(&self) -> usize {
        self.queue.outstanding.load(Ordering::SeqCst)
    }

    /// Waits until every queued report was sent (or failed), at most `limit`. Returns how many
    /// were still outstanding when the limit passed (0: all sent).
    pub async fn flush(&self, limit: Duration) -> usize {
        let q = &self.queue;
        let wait = async {
            loop {
                let idle = q.idle.notified();
                tokio::pin!(idle);
                idle.as_mut().enable();
                if q.outstanding.load(Ordering::SeqCst) == 0 {
                    return;
                }
                idle.await;
            }
        };
        match tokio::time::timeout(limit, wait).await {
            Ok(()) => 0,
            Err(_) => q.outstanding.load(Ordering::SeqCst),
        }
    }
}

impl Publisher {
    async fn send(&self, job: Job) {
        match job {
            Job::Event {
                shoot,
                type_,
                reason,
                note,
            } => {
                if let Err(e) = self.publish(&shoot, type_, reason, note).await {
                    tracing::warn!(error = %e, "publishing an event failed");
                }
            }
            Job::Failure {
                shoot,
                note,
                description,
            } => {
                if let Err(e) = self.report_failure(&shoot, note, &description).await {
                    tracing::warn!(error = %e, "reporting a scheduling failure failed");
                }
            }
        }
    }

    async fn report_failure(
        &self,
        shoot: &Shoot,
        note: String,
        description: &str,
    ) -> Result<(), ReportError> {
        let event = self.publish(shoot, "Warning", REASON_FAILED, note).await;
        let status = self.patch_last_operation(shoot, description).await;
        event.and(status)
    }

    async fn patch_last_operation(
        &self,
        shoot: &Shoot,
        description: &str,
    ) -> Result<(), ReportError> {
        let key = crate::api::object_key(&shoot.metadata);
        let current = shoot
            .status
            .as_ref()
            .and_then(|s| s.last_operation.as_ref());
        if current.is_some_and(|op| {
            op.type_ == "Create" && op.state == "Pending" && op.description == description
        }) {
            // already says so; spare the write (and the watch event it would cause)
            return Ok(());
        }
        let api: Api<Shoot> = Api::namespaced(
            self.client.clone(),
            shoot.metadata.namespace.as_deref().unwrap_or_default(),
        );
        let patch = json!({
            "status": {
                "lastOperation": {
                    "type": "Create",
                    "state": "Pending",
                    "description": description,
                    "lastUpdateTime": Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
                }
            }
        });
        let pp = PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        };
        let name = shoot.metadata.name.as_deref().unwrap_or_default();
        match tokio::time::timeout(
            self.timeout,
            api.patch_status(name, &pp, &Patch::Merge(&patch)),
        )
        .await
        {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(source)) => Err(ReportError::PatchStatus { shoot: key, source }),
            Err(_) => Err(ReportError::Timeout {
                action: "patching status.lastOperation",
                shoot: key,
                limit: self.timeout,
            }),
        }
    }

    async fn publish(
        &self,
        shoot: &Shoot,
        type_: &'static str,
        reason: &'static str,
        note: String,
    ) -> Result<(), ReportError> {
        let note = truncate_note(&note, MAX_NOTE_BYTES);
        let meta = &shoot.metadata;
        let namespace = meta.namespace.clone().unwrap_or_default();
        let name = meta.name.clone().unwrap_or_default();
        let key = SeriesKey {
            uid: meta.uid.clone().unwrap_or_default(),
            namespace: namespace.clone(),
            name: name.clone(),
            type_,
            reason,
            note: note.clone(),
        };
        let now = Utc::now();
        let shoot_key = format!("{namespace}/{name}");
        let fail = |source| ReportError::PublishEvent {
            reason,
            shoot: shoot_key.clone(),
            source,
        };

        let mut series = self.series.lock().await;
        series.retain(|_, s| {
            now.signed_duration_since(s.last)
                .to_std()
                .unwrap_or_default()
                < SERIES_WINDOW
        });
        if let Some(s) = series.get_mut(&key) {
            s.count += 1;
            s.last = now;
            let (event_name, count, core_v1) = (s.event_name.clone(), s.count, s.core_v1);
            drop(series);
            let pp = PatchParams::default();
            let result = if core_v1 {
                let patch = json!({"count": count, "lastTimestamp": now.to_rfc3339_opts(SecondsFormat::Secs, true)});
                let api: Api<CoreEvent> = Api::namespaced(self.client.clone(), &namespace);
                self.call("patching event count", &shoot_key, async {
                    api.patch(&event_name, &pp, &Patch::Merge(&patch))
                        .await
                        .map(|_| ())
                })
                .await?
            } else {
                let patch = Event {
                    series: Some(EventSeries {
                        count,
                        last_observed_time: MicroTime(to_timestamp(now)),
                    }),
                    ..Default::default()
                };
                let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
                self.call("patching event series", &shoot_key, async {
                    api.patch(&event_name, &pp, &Patch::Merge(&patch))
                        .await
                        .map(|_| ())
                })
                .await?
            };
            return result.map_err(fail);
        }
        drop(series);

        let event_name = format!("{name}.{:x}", now.timestamp_nanos_opt().unwrap_or_default());
        let regarding = ObjectReference {
            api_version: Some(Shoot::api_version(&()).into()),
            kind: Some(Shoot::kind(&()).into()),
            namespace: Some(namespace.clone()),
            name: Some(name.clone()),
            uid: meta.uid.clone(),
            resource_version: meta.resource_version.clone(),
            ..Default::default()
        };
        let object_meta = kube::api::ObjectMeta {
            name: Some(event_name.clone()),
            namespace: Some(namespace.clone()),
            ..Default::default()
        };
        let mut core_v1 = self.core_v1_events.load(Ordering::Relaxed);
        if !core_v1 {
            let event = Event {
                metadata: object_meta.clone(),
                action: Some(ACTION.into()),
                reason: Some(reason.into()),
                note: Some(note.clone()),
                type_: Some(type_.into()),
                event_time: Some(MicroTime(to_timestamp(now))),
                reporting_controller: Some(REPORTING_CONTROLLER.into()),
                reporting_instance: Some(self.instance.clone()),
                regarding: Some(regarding.clone()),
                ..Default::default()
            };
            let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
            match self
                .call(
                    "creating event",
                    &shoot_key,
                    api.create(&PostParams::default(), &event),
                )
                .await?
            {
                Ok(_) => {}
                // Landscapes whose RBAC predates events.k8s.io (upstream grants core/v1 events
                // only) or API servers without it: publish core/v1 events from now on.
                Err(kube::Error::Api(s)) if s.code == 403 || s.code == 404 => {
                    tracing::warn!(
                        code = s.code,
                        "cannot create events.k8s.io events; publishing core/v1 events instead"
                    );
                    self.core_v1_events.store(true, Ordering::Relaxed);
                    core_v1 = true;
                }
                Err(e) => return Err(fail(e)),
            }
        }
        if core_v1 {
            let time = Time(to_timestamp(now));
            let event = CoreEvent {
                metadata: object_meta,
                involved_object: regarding,
                action: Some(ACTION.into()),
                reason: Some(reason.into()),
                message: Some(note),
                type_: Some(type_.into()),
                count: Some(1),
                first_timestamp: Some(time.clone()),
                last_timestamp: Some(time),
                reporting_component: Some(REPORTING_CONTROLLER.into()),
                reporting_instance: Some(self.instance.clone()),
                source: Some(EventSource {
                    component: Some(REPORTING_CONTROLLER.into()),
                    host: None,
                }),
                ..Default::default()
            };
            let api: Api<CoreEvent> = Api::namespaced(self.client.clone(), &namespace);
            self.call(
                "creating event",
                &shoot_key,
                api.create(&PostParams::default(), &event),
            )
            .await?
            .map_err(fail)?;
        }

        let mut series = self.series.lock().await;
        if series.len() >= MAX_SERIES
            && let Some(oldest) = series
                .iter()
                .min_by_key(|(_, s)| s.last)
                .map(|(k, _)| k.clone())
        {
            series.remove(&oldest);
        }
        series.insert(
            key,
            Series {
                event_name,
                count: 1,
                last: now,
                core_v1,
            },
        );
        Ok(())
    }

    async fn call<T>(
        &self,
        action: &'static str,
        shoot: &str,
        fut: impl Future<Output = T>,
    ) -> Result<T, ReportError> {
        tokio::time::timeout(self.timeout, fut)
            .await
            .map_err(|_| ReportError::Timeout {
                action,
                shoot: shoot.to_string(),
                limit: self.timeout,
            })
    }
}

fn to_timestamp(t: chrono::DateTime<Utc>) -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::new(t.timestamp(), t.timestamp_subsec_nanos() as i32)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_cut_on_a_char_boundary() {
        let s = "ä".repeat(600); // 1200 bytes
        let t = truncate_note(&s, MAX_NOTE_BYTES);
        assert!(t.len() <= MAX_NOTE_BYTES);
        assert!(t.ends_with('…'));
        assert_eq!(truncate_note("short", 10), "short");
    }

    #[test]
    fn the_success_note_is_upstreams_unless_priorities_or_profiles_add_to_it() {
        use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
        let mut snap = crate::snapshot::Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        snap.upsert_seed(&SeedBuilder::new("s1").build());
        let shoot = ShootBuilder::new("garden-a", "s").build();
        let profile = crate::profile::Profile::upstream_default();
        let decision = crate::schedule::schedule(&shoot, &snap, &profile, Utc::now()).unwrap();
        let cases = [
            (
                "upstream's keys alone",
                false,
                false,
                "Scheduled to seed \"s1\"",
            ),
            (
                "a profile chain names the entry",
                true,
                false,
                "Scheduled to seed \"s1\" by profile \"default\"",
            ),
        ];
        for (name, by_profile, scores, want) in cases {
            assert_eq!(success_note(&decision, by_profile, scores), want, "{name}");
        }
        let with_scores = success_note(&decision, false, true);
        assert!(
            with_scores.starts_with("Scheduled to seed \"s1\" (score ")
                && with_scores.contains("ShootCount"),
            "priorities add the score summary: {with_scores}"
        );
    }

    #[test]
    fn the_failure_description_is_worded_as_upstream() {
        let err = FitError::NoFit {
            total: 0,
            rejected: vec![],
        };
        assert_eq!(
            failure_description(&err),
            "Failed to schedule Shoot: 0/0 seeds are available: no seeds are registered."
        );
    }
}
