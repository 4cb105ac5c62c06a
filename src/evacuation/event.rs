//! One event on a seed: `events.k8s.io/v1`, or core/v1 where that is forbidden or missing, as
//! the reporter sends the shoots' events. Seeds are cluster-scoped, so their events live in
//! `default`, as Kubernetes keeps the events of Nodes.

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use kube::api::{Api, PostParams};
use kube::{Client, Resource};

use crate::api::Seed;

/// The namespace of a cluster-scoped object's events.
pub const NAMESPACE: &str = "default";
/// `reportingController` of the seed events.
pub const REPORTING_CONTROLLER: &str = "seed-evacuation";

/// Reasons of the seed events: PascalCase and stable.
pub const REASON_PUBLISHED: &str = "EvacuationPlanPublished";
pub const REASON_UPDATED: &str = "EvacuationPlanUpdated";
pub const REASON_RECOVERED: &str = "SeedRecovered";
pub const REASON_STOPPED: &str = "EvacuationStopped";

fn timestamp(t: DateTime<Utc>) -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::from_microsecond(t.timestamp_micros())
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}

/// Creates one event on `seed`.
pub async fn post(
    client: &Client,
    instance: &str,
    seed: &Seed,
    (type_, reason): (&str, &str),
    note: &str,
    now: DateTime<Utc>,
) -> Result<(), kube::Error> {
    let name = seed.name().to_string();
    let regarding = ObjectReference {
        api_version: Some(Seed::api_version(&()).into()),
        kind: Some(Seed::kind(&()).into()),
        name: Some(name.clone()),
        uid: seed.metadata.uid.clone(),
        resource_version: seed.metadata.resource_version.clone(),
        ..Default::default()
    };
    let metadata = kube::api::ObjectMeta {
        name: Some(format!(
            "{name}.{:x}",
            now.timestamp_nanos_opt().unwrap_or_default()
        )),
        namespace: Some(NAMESPACE.into()),
        ..Default::default()
    };
    let pp = PostParams::default();
    let event = Event {
        metadata: metadata.clone(),
        action: Some("Evacuate".into()),
        reason: Some(reason.into()),
        note: Some(note.into()),
        type_: Some(type_.into()),
        event_time: Some(MicroTime(timestamp(now))),
        reporting_controller: Some(REPORTING_CONTROLLER.into()),
        reporting_instance: Some(instance.into()),
        regarding: Some(regarding.clone()),
        ..Default::default()
    };
    match Api::<Event>::namespaced(client.clone(), NAMESPACE)
        .create(&pp, &event)
        .await
    {
        Ok(_) => return Ok(()),
        Err(kube::Error::Api(s)) if s.code == 403 || s.code == 404 => {}
        Err(e) => return Err(e),
    }
    let time = Time(timestamp(now));
    let event = CoreEvent {
        metadata,
        involved_object: regarding,
        action: Some("Evacuate".into()),
        reason: Some(reason.into()),
        message: Some(note.into()),
        type_: Some(type_.into()),
        count: Some(1),
        first_timestamp: Some(time.clone()),
        last_timestamp: Some(time),
        reporting_component: Some(REPORTING_CONTROLLER.into()),
        reporting_instance: Some(instance.into()),
        source: Some(EventSource {
            component: Some(REPORTING_CONTROLLER.into()),
            host: None,
        }),
        ..Default::default()
    };
    Api::<CoreEvent>::namespaced(client.clone(), NAMESPACE)
        .create(&pp, &event)
        .await
        .map(|_| ())
}
