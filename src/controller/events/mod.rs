//! What people see of a decision: `events.k8s.io` Events on the shoot and, on failure,
//! `status.lastOperation`, worded as upstream words them.
//!
//! Reports leave the bind path: [`Reporter`] queues them (bounded, as client-go's event
//! broadcaster) and a few background tasks send them through the reporter's own API client,
//! which has its own rate limit. A full queue drops the report, and an event the server still
//! refuses after its retries (see `publish`) is dropped too; both are counted in
//! `gardener_scheduler_events_dropped_total`. [`Reporter::flush`] waits for the queue to empty
//! (a graceful stop).
//!
//! `notes.rs` words the notes as upstream does; `publish.rs` sends events (as `events.k8s.io`
//! series, falling back to core/v1) and `status.lastOperation`.

mod job;
mod notes;
mod publish;
mod record;
pub(in crate::controller) mod refusals;

use job::Job;
pub use job::{
    REASON_DEFERRED, REASON_FAILED, REASON_GATED, REASON_SCHEDULED, REPORTING_CONTROLLER,
    ReportError,
};
pub use notes::{failure_description, truncate_note};
use notes::{failure_note, success_note};
use publish::Publisher;
#[cfg(test)]
pub(crate) use publish::SEND_TRIES;
pub use record::record;

use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use kube::Client;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{Mutex, Notify, mpsc};

use crate::api::Shoot;
use crate::schedule::{Decision, FitError};

/// Reports waiting to be sent, at most; client-go's event broadcaster queues as many.
pub const QUEUE_CAPACITY: usize = 1000;
/// Reports sent at once. Repeats of one event are rare within a send's time; they may then
/// create two events instead of a series entry.
const SENDERS: usize = 4;
/// A full queue is logged at most this often (each drop is counted).
const DROP_LOG_EVERY: Duration = Duration::from_secs(60);

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
            publisher: Publisher::new(client, instance, timeout),
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
        let note = self.success_note(decision, name_profile);
        self.scheduled_with_note(shoot, note);
    }

    /// The note of `SchedulingSuccessful` for `decision`, for a report sent later.
    pub fn success_note(&self, decision: &Decision, name_profile: bool) -> String {
        success_note(decision, name_profile, self.publisher.score_notes)
    }

    /// Queues `SchedulingSuccessful` with a note made before.
    pub fn scheduled_with_note(&self, shoot: &Shoot, note: String) {
        self.enqueue(Job::Event {
            shoot: shoot.clone(),
            type_: "Normal",
            reason: REASON_SCHEDULED,
            note,
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

    /// Queues `SchedulingGated` with the gates that hold the shoot (and a freeze that holds it
    /// too); a `Warning` when the annotation is malformed. Nothing is written to the shoot's
    /// status: waiting is not a failure.
    pub fn gated(&self, shoot: &Shoot, reason: &str, malformed: bool) {
        self.enqueue(Job::Event {
            shoot: shoot.clone(),
            type_: if malformed { "Warning" } else { "Normal" },
            reason: REASON_GATED,
            note: format!("Scheduling gated: {reason}"),
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
    pub fn bind_failed(&self, shoot: &Shoot, err: &crate::controller::client::bind::BindError) {
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
                    if !publisher.send(job).await {
                        queue.dropped.inc();
                    }
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
