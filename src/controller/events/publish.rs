//! Sending reports: events (a repeat within [`SERIES_WINDOW`] updates the first event's series,
//! as client-go's recorder does; core/v1 Events when `events.k8s.io` is forbidden or missing)
//! and `status.lastOperation`. A write turned away for now (429, 5xx) is sent again after the
//! server's `Retry-After`, within [`SEND_TRIES`] tries and [`SEND_BUDGET`] of waiting, as
//! client-go's recorder sends an event again; an event that still fails is dropped and counted.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::api::Shoot;
use crate::controller::client::bind::FIELD_MANAGER;
use crate::controller::events::job::{Job, REASON_FAILED, REPORTING_CONTROLLER, ReportError};
use crate::controller::events::notes::{MAX_NOTE_BYTES, truncate_note};
use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use serde_json::json;
use tokio::sync::Mutex;

/// `action` of every event, upstream's `EventActionReconcile`.
const ACTION: &str = "Reconcile";
/// Repeats of the same event within this window update its series instead of adding events.
const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);
/// Bound on the series cache; the oldest entries go first.
const MAX_SERIES: usize = 4096;
/// Tries of one report write answered 429 or 5xx, the first included.
pub(crate) const SEND_TRIES: u32 = 5;
/// The most time one report write waits between its tries, in all.
pub(super) const SEND_BUDGET: Duration = Duration::from_secs(30);
/// The longest single wait, whatever `Retry-After` says.
const SEND_RETRY_MAX: Duration = Duration::from_secs(10);

/// Whether an answer says "not now": the write may succeed when sent again.
fn not_now(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 429 || (500..600).contains(&s.code))
}

/// The wait before try `n` (from 1) after `e`: the server's `Retry-After` (in the Status's
/// `details.retryAfterSeconds`, where the client stack puts a gateway's header too), else 1 s
/// doubling.
fn wait_after(e: &kube::Error, n: u32) -> Duration {
    let asked = match e {
        kube::Error::Api(s) => s
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0),
        _ => None,
    };
    asked
        .map(|s| Duration::from_secs(s.into()))
        .unwrap_or(Duration::from_secs(1) * 2u32.pow(n.saturating_sub(1).min(4)))
        .min(SEND_RETRY_MAX)
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

/// Sends events and status updates.
#[derive(Clone)]
pub(super) struct Publisher {
    client: Client,
    instance: String,
    timeout: Duration,
    series: Arc<Mutex<HashMap<SeriesKey, Series>>>,
    /// set once events.k8s.io turned out to be forbidden or missing
    core_v1_events: Arc<AtomicBool>,
    /// success notes carry the winner's score summary (priorities are configured)
    pub(super) score_notes: bool,
}

impl Publisher {
    pub(super) fn new(client: Client, instance: String, timeout: Duration) -> Self {
        Publisher {
            client,
            instance,
            timeout,
            series: Arc::default(),
            core_v1_events: Arc::default(),
            score_notes: false,
        }
    }

    /// Sends one report; whether its event was delivered (a failed event is dropped: the
    /// caller counts it).
    pub(super) async fn send(&self, job: Job) -> bool {
        match job {
            Job::Event {
                shoot,
                type_,
                reason,
                note,
            } => match self.publish(&shoot, type_, reason, note).await {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(error = %e, "publishing an event failed; dropped");
                    false
                }
            },
            Job::Failure {
                shoot,
                note,
                description,
            } => {
                let event = self.publish(&shoot, "Warning", REASON_FAILED, note).await;
                if let Err(e) = self.patch_last_operation(&shoot, &description).await {
                    tracing::warn!(error = %e, "reporting a scheduling failure failed");
                }
                match event {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!(error = %e, "reporting a scheduling failure failed; event dropped");
                        false
                    }
                }
            }
        }
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
        let merge = Patch::Merge(&patch);
        self.call("patching status.lastOperation", &key, || {
            api.patch_status(name, &pp, &merge)
        })
        .await?
        .map(|_| ())
        .map_err(|source| ReportError::PatchStatus { shoot: key, source })
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
                self.call("patching event count", &shoot_key, || async {
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
                self.call("patching event series", &shoot_key, || async {
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
        let pp = PostParams::default();
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
                .call("creating event", &shoot_key, || api.create(&pp, &event))
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
            self.call("creating event", &shoot_key, || api.create(&pp, &event))
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

    /// One write, each try within the timeout; sent again while the server answers "not now"
    /// (429, 5xx), within [`SEND_TRIES`] and [`SEND_BUDGET`].
    async fn call<T, F, Fut>(
        &self,
        action: &'static str,
        shoot: &str,
        write: F,
    ) -> Result<Result<T, kube::Error>, ReportError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, kube::Error>>,
    {
        let mut waited = Duration::ZERO;
        for n in 1.. {
            let answer = tokio::time::timeout(self.timeout, write())
                .await
                .map_err(|_| ReportError::Timeout {
                    action,
                    shoot: shoot.to_string(),
                    limit: self.timeout,
                })?;
            match answer {
                Err(e) if not_now(&e) && n < SEND_TRIES => {
                    let wait = wait_after(&e, n);
                    if waited + wait > SEND_BUDGET {
                        return Ok(Err(e));
                    }
                    tracing::debug!(action, shoot, error = %crate::controller::client::brief::brief(&e), retry_in = ?wait, "sending again");
                    tokio::time::sleep(wait).await;
                    waited += wait;
                }
                other => return Ok(other),
            }
        }
        unreachable!("the loop returns by its last try")
    }
}

fn to_timestamp(t: chrono::DateTime<Utc>) -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::new(t.timestamp(), t.timestamp_subsec_nanos() as i32)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}
