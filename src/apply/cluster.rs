//! The writes of `plan apply`, each one request: the binding (with the shoot's current
//! resourceVersion, so a changed shoot is refused rather than overwritten), an Event on the
//! shoot, and the Lease that keeps a second apply off the same garden. With `dry_run` every
//! write is sent with `dryRun=All`: the API server checks it and stores nothing.

use std::time::Duration;

use chrono::Utc;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Client;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use serde_json::{Value, json};

use super::saved::Planned;
use crate::api::Shoot;
use crate::controller::permissions::denied_by_authorizer;
use crate::controller::{FIELD_MANAGER, brief, raw_shoots};
use crate::plan::migration::ANNOTATION_LIVE_MIGRATE;
use crate::simulate::with_causes;

/// `reportingController` of the Events on the shoots.
pub const REPORTING_CONTROLLER: &str = "gardener-scheduler/plan-apply";

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The shoot changed since it was read: read it again and check again.
    #[error("the shoot changed since it was read (409 Conflict)")]
    Conflict,
    #[error("{action}: forbidden: {message} (the chart's planApplier ClusterRole grants it)")]
    Forbidden {
        action: &'static str,
        message: String,
    },
    /// The API server refused the write; nothing was written.
    #[error("{action}: {message}")]
    Refused {
        action: &'static str,
        message: String,
    },
    /// No connection to the API server could be made: nothing was sent.
    #[error("{action}: the API server could not be reached, nothing was sent: {message}")]
    Unreachable {
        action: &'static str,
        message: String,
    },
    /// No answer that proves the write was refused: read the shoot to learn what happened.
    #[error("{action}: outcome unknown: {message}")]
    Unknown {
        action: &'static str,
        message: String,
    },
    #[error(
        "lease {lease} is held by {holder} (renewed {renewed}): another plan apply runs \
         against this garden; wait for it to end, or for the lease to expire after {seconds}s"
    )]
    Busy {
        lease: String,
        holder: String,
        renewed: String,
        seconds: i32,
    },
}

fn classify(action: &'static str, write: bool, e: kube::Error) -> WriteError {
    match &e {
        kube::Error::Api(s) if s.code == 409 => WriteError::Conflict,
        // the authorizer's 403; an admission plugin's is about this shoot: refused
        kube::Error::Api(s) if s.code == 403 && denied_by_authorizer(&s.message) => {
            WriteError::Forbidden {
                action,
                message: s.message.clone(),
            }
        }
        kube::Error::Api(s) if s.code < 500 || !write => WriteError::Refused {
            action,
            message: brief(&e),
        },
        kube::Error::Api(_) => WriteError::Unknown {
            action,
            message: brief(&e),
        },
        _ if never_connected(&e) => WriteError::Unreachable {
            action,
            message: with_causes(&e),
        },
        _ if !write => WriteError::Refused {
            action,
            message: format!("{}; nothing was written", answer_text(&e)),
        },
        _ => WriteError::Unknown {
            action,
            message: answer_text(&e),
        },
    }
}

/// What came instead of a readable answer: one over its cap or one that is not the API
/// server's JSON, said as such; else no answer, with its causes.
fn answer_text(e: &kube::Error) -> String {
    match e {
        kube::Error::SerdeError(_) | kube::Error::FromUtf8(_) => brief(e),
        _ if crate::controller::in_chain::<crate::controller::TooLarge>(e).is_some() => brief(e),
        _ => format!("no answer: {}", with_causes(e)),
    }
}

/// Whether the request failed before a connection was made (refused, unreachable, no such
/// host): the request was never sent.
fn never_connected(e: &kube::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.downcast_ref::<hyper_util::client::legacy::Error>()
            .is_some_and(hyper_util::client::legacy::Error::is_connect)
        {
            return true;
        }
        source = s.source();
    }
    false
}

async fn timed<T>(
    action: &'static str,
    write: bool,
    limit: Duration,
    fut: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, WriteError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r.map_err(|e| classify(action, write, e)),
        Err(_) => Err(WriteError::Unknown {
            action,
            message: format!("no answer within {limit:?}"),
        }),
    }
}

fn post_params(dry_run: bool) -> PostParams {
    PostParams {
        dry_run,
        field_manager: Some(FIELD_MANAGER.into()),
    }
}

/// Reads a shoot: typed, and as the API server sent it (for the binding). `None`: gone.
pub async fn read(
    client: &Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> Result<Option<(Shoot, Value)>, WriteError> {
    crate::controller::read_shoot(client, namespace, name, timeout)
        .await
        .map_err(|e| WriteError::Refused {
            action: "reading the shoot",
            message: match e {
                crate::controller::BindError::ReadFailed { message, .. } => {
                    format!("{message}; nothing was written")
                }
                other => other.to_string(),
            },
        })
}

/// The binding body: the shoot as read (`current`, with its resourceVersion), `spec.seedName`
/// set to `to`, and for a live move the annotation that asks for a live migration.
pub fn binding_body(current: &Value, to: &str, live: bool) -> Value {
    let mut body = current.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        if live {
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if !annotations.is_object() {
                *annotations = json!({});
            }
            annotations[ANNOTATION_LIVE_MIGRATE] = json!("true");
        }
    }
    match body.get_mut("spec") {
        Some(Value::Object(spec)) => {
            spec.insert("seedName".into(), json!(to));
        }
        _ => body["spec"] = json!({ "seedName": to }),
    }
    body
}

/// Writes the binding of `current` (the shoot as read) for `planned`:
/// `PUT .../shoots/NAME/binding` with `spec.seedName` set to the destination.
pub async fn bind(
    client: &Client,
    planned: &Planned,
    current: &Value,
    dry_run: bool,
    timeout: Duration,
) -> Result<(), WriteError> {
    let body = binding_body(current, &planned.to, planned.live());
    let body: kube::api::DynamicObject =
        serde_json::from_value(body).map_err(|e| WriteError::Refused {
            action: "updating shoots/binding",
            message: format!("the shoot as read is not an object: {e}"),
        })?;
    let api = raw_shoots(client, &planned.namespace);
    timed(
        "updating shoots/binding",
        true,
        timeout,
        api.replace_subresource("binding", &planned.name, &post_params(dry_run), &body),
    )
    .await
    .map(drop)
}

/// Publishes an events.k8s.io Event on the shoot. Failing to is logged, never fatal: the
/// move's outcome does not depend on it.
pub async fn event(
    client: &Client,
    shoot: &Shoot,
    reason: &str,
    type_: &str,
    note: &str,
    dry_run: bool,
    timeout: Duration,
) {
    let kind = (type_, reason);
    event_as(
        REPORTING_CONTROLLER,
        client,
        shoot,
        kind,
        note,
        dry_run,
        timeout,
    )
    .await;
}

/// [`event`] reported by `controller` (the automatic evacuation moves shoots too).
pub async fn event_as(
    controller: &str,
    client: &Client,
    shoot: &Shoot,
    (type_, reason): (&str, &str),
    note: &str,
    dry_run: bool,
    timeout: Duration,
) {
    let namespace = shoot.metadata.namespace.clone().unwrap_or_default();
    let name = shoot.metadata.name.clone().unwrap_or_default();
    let now = Utc::now();
    let event = Event {
        metadata: ObjectMeta {
            name: Some(format!(
                "{name}.{:x}",
                now.timestamp_nanos_opt().unwrap_or_default()
            )),
            namespace: Some(namespace.clone()),
            ..Default::default()
        },
        action: Some("Migrate".into()),
        reason: Some(reason.into()),
        note: Some(truncate(note, 1024)),
        type_: Some(type_.into()),
        event_time: Some(MicroTime(
            k8s_openapi::jiff::Timestamp::from_microsecond(now.timestamp_micros())
                .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        )),
        reporting_controller: Some(controller.into()),
        reporting_instance: Some(crate::controller::default_identity()),
        regarding: Some(k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some("core.gardener.cloud/v1beta1".into()),
            kind: Some("Shoot".into()),
            namespace: Some(namespace.clone()),
            name: Some(name),
            uid: shoot.metadata.uid.clone(),
            resource_version: shoot.metadata.resource_version.clone(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let api: Api<Event> = Api::namespaced(client.clone(), &namespace);
    if let Err(e) = timed(
        "creating an event",
        true,
        timeout,
        api.create(&post_params(dry_run), &event),
    )
    .await
    {
        tracing::warn!(error = %e, reason, "the event on the shoot was not published");
    }
}

/// The Lease an apply holds while it runs.
pub struct LeaseRef {
    pub namespace: String,
    pub name: String,
    pub holder: String,
    pub duration: Duration,
}

impl LeaseRef {
    fn label(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// Takes the Lease, or renews it when `self` holds it already: refused while another holder's
/// renewal is younger than the lease duration. Every write carries the resourceVersion read, so
/// two applies racing for it cannot both win.
pub async fn hold(
    client: &Client,
    lease: &LeaseRef,
    dry_run: bool,
    timeout: Duration,
) -> Result<(), WriteError> {
    let api: Api<Lease> = Api::namespaced(client.clone(), &lease.namespace);
    let now = Utc::now();
    let micro = MicroTime(
        k8s_openapi::jiff::Timestamp::from_microsecond(now.timestamp_micros())
            .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
    );
    let seconds = lease.duration.as_secs().clamp(1, i32::MAX as u64) as i32;
    let current = timed(
        "reading the lease",
        false,
        timeout,
        api.get_opt(&lease.name),
    )
    .await?;
    let spec = LeaseSpec {
        holder_identity: Some(lease.holder.clone()),
        lease_duration_seconds: Some(seconds),
        renew_time: Some(micro.clone()),
        ..Default::default()
    };
    match current {
        None => {
            let new = Lease {
                metadata: ObjectMeta {
                    name: Some(lease.name.clone()),
                    namespace: Some(lease.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    acquire_time: Some(micro),
                    ..spec
                }),
            };
            timed(
                "creating the lease",
                true,
                timeout,
                api.create(&post_params(dry_run), &new),
            )
            .await
            .map(drop)
        }
        Some(mut old) => {
            let s = old.spec.clone().unwrap_or_default();
            let holder = s.holder_identity.clone().unwrap_or_default();
            let held_for = s.lease_duration_seconds.unwrap_or(seconds);
            let renewed = s.renew_time.as_ref().map(|t| t.0.as_microsecond());
            let fresh = renewed
                .is_some_and(|r| now.timestamp_micros() - r < i64::from(held_for) * 1_000_000);
            if !holder.is_empty() && holder != lease.holder && fresh {
                return Err(WriteError::Busy {
                    lease: lease.label(),
                    holder,
                    renewed: s
                        .renew_time
                        .map(|t| t.0.to_string())
                        .unwrap_or_else(|| "never".into()),
                    seconds: held_for,
                });
            }
            let acquire = if holder == lease.holder {
                s.acquire_time
            } else {
                Some(micro)
            };
            old.spec = Some(LeaseSpec {
                acquire_time: acquire,
                ..spec
            });
            match timed(
                "updating the lease",
                true,
                timeout,
                api.replace(&lease.name, &post_params(dry_run), &old),
            )
            .await
            {
                // someone else wrote it in between: they hold it now
                Err(WriteError::Conflict) => Err(WriteError::Busy {
                    lease: lease.label(),
                    holder: "another apply".into(),
                    renewed: "just now".into(),
                    seconds: held_for,
                }),
                other => other.map(drop),
            }
        }
    }
}

/// Gives the Lease up at the end, so the next apply need not wait for it to expire.
pub async fn release(client: &Client, lease: &LeaseRef, dry_run: bool, timeout: Duration) {
    let api: Api<Lease> = Api::namespaced(client.clone(), &lease.namespace);
    let Ok(Ok(Some(current))) = tokio::time::timeout(timeout, api.get_opt(&lease.name)).await
    else {
        return;
    };
    let ours = current
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        == Some(lease.holder.as_str());
    if !ours {
        return;
    }
    let dp = DeleteParams {
        dry_run,
        preconditions: Some(kube::api::Preconditions {
            resource_version: current.metadata.resource_version.clone(),
            uid: None,
        }),
        ..Default::default()
    };
    if let Err(e) = timed(
        "releasing the lease",
        true,
        timeout,
        api.delete(&lease.name, &dp),
    )
    .await
    {
        tracing::warn!(error = %e, lease = %lease.label(), "the lease was not released; it expires");
    }
}

/// At most `max` bytes of `s`, cut on a char boundary (an Event's note holds 1 KiB).
fn truncate(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (A read over its cap: `controller::tests::answers`, through the client stack.)
    #[test]
    fn a_read_that_is_not_json_is_said_so_not_as_no_answer() {
        let html = serde_json::from_str::<Value>("<!DOCTYPE html>").unwrap_err();
        assert_eq!(
            classify("reading the lease", false, kube::Error::SerdeError(html)).to_string(),
            "reading the lease: the answer is not JSON (expected value at line 1 column 1), as a \
             proxy's or a login page's; nothing was written"
        );
    }
}
