//! The compact forms kept in the cache: only what a decision, an event or a bind reads, and a
//! fingerprint of it to tell relevant changes from noise (status heartbeats, managed fields).

use std::sync::Arc;

use crate::api::{Gates, ObjectMeta, Shoot, is_pending};

/// A shoot's object as the API server sent it, as the caller holds it.
pub enum Sent<'a> {
    /// read outside the watch, managedFields already dropped
    Value(&'a serde_json::Value),
    /// as the watch delivered it
    Text(&'a str),
}

impl Sent<'_> {
    /// The JSON the cache keeps for a pending shoot: the object without managedFields.
    pub(super) fn kept(&self) -> Option<String> {
        match self {
            Sent::Value(v) => serde_json::to_string(v).ok(),
            Sent::Text(raw) => {
                let mut v: serde_json::Value = serde_json::from_str(raw).ok()?;
                if let Some(meta) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                    meta.remove("managedFields");
                }
                serde_json::to_string(&v).ok()
            }
        }
    }
}

/// A pending shoot as the cache keeps it: the compact form, and its gates parsed once for this
/// version (a decision and a change's check read them, never the annotation again).
#[derive(Clone, Debug)]
pub struct PendingShoot {
    pub shoot: Arc<Shoot>,
    pub gates: Arc<Gates>,
}

impl PendingShoot {
    pub fn new(shoot: &Shoot) -> PendingShoot {
        PendingShoot {
            shoot: Arc::new(compact_shoot(shoot)),
            gates: Arc::new(Gates::of(&shoot.metadata)),
        }
    }
}

/// A shoot as a watch or a read brought it, made ready for the cache before its lock is taken:
/// every parse of the object (the JSON kept to bind from, the gates) happens here, once per
/// version, so that applying it under the lock only stores what was made.
pub struct ShootUpdate<'a> {
    pub(super) shoot: &'a Shoot,
    /// `Some` when the shoot waits for this scheduler
    pub(super) pending: Option<PendingShoot>,
    /// a pending shoot's object as sent, without managedFields
    pub(super) kept: Option<Arc<str>>,
}

impl<'a> ShootUpdate<'a> {
    /// Prepares `shoot` (with the object as sent, `raw`, when there is one) for a cache whose
    /// shoots wait for `scheduler_names`.
    pub fn new(shoot: &'a Shoot, raw: Option<Sent<'_>>, scheduler_names: &[String]) -> Self {
        let pending = is_pending(shoot, scheduler_names);
        ShootUpdate {
            shoot,
            pending: pending.then(|| PendingShoot::new(shoot)),
            kept: raw
                .filter(|_| pending)
                .and_then(|r| r.kept())
                .map(Arc::from),
        }
    }
}

/// Keeps only the metadata a decision, an event or a bind needs.
pub(super) fn compact_meta(
    meta: &ObjectMeta,
    keep_labels: bool,
    keep_annotations: &[&str],
) -> ObjectMeta {
    ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        generation: meta.generation,
        creation_timestamp: meta.creation_timestamp.clone(),
        deletion_timestamp: meta.deletion_timestamp.clone(),
        labels: if keep_labels {
            meta.labels.clone()
        } else {
            None
        },
        annotations: meta.annotations.as_ref().and_then(|a| {
            let kept: std::collections::BTreeMap<String, String> = a
                .iter()
                .filter(|(k, _)| keep_annotations.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (!kept.is_empty()).then_some(kept)
        }),
        ..Default::default()
    }
}

/// The compact form of a shoot kept while it is pending.
pub(super) fn compact_shoot(shoot: &Shoot) -> Shoot {
    Shoot {
        metadata: compact_meta(
            &shoot.metadata,
            false,
            &[
                crate::api::ANNOTATION_RESIDENCY,
                crate::api::ANNOTATION_GATES,
            ],
        ),
        spec: shoot.spec.clone(),
        status: shoot.status.clone(),
    }
}

pub(super) fn fingerprint<T: serde::Serialize>(value: &T) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&serde_json::to_vec(value).unwrap_or_default())
}

/// Does the change between two versions of a pending shoot call for a new decision? Our own
/// `status.lastOperation` writes do not.
pub(super) fn scheduling_relevant_change(old: &PendingShoot, new: &PendingShoot) -> bool {
    if old.gates != new.gates {
        return true;
    }
    let (old, new) = (&*old.shoot, &*new.shoot);
    let status = |s: &Shoot| {
        let st = s.status.as_ref();
        (
            st.and_then(|st| st.seed_name.clone()),
            st.and_then(|st| st.networking.clone()),
        )
    };
    old.spec != new.spec
        || status(old) != status(new)
        || crate::api::residency_opt_out(&old.metadata)
            != crate::api::residency_opt_out(&new.metadata)
        || old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
}
