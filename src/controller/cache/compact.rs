//! The compact forms kept in the cache: only what a decision, an event or a bind reads, and a
//! fingerprint of it to tell relevant changes from noise (status heartbeats, managed fields).

use crate::api::{ObjectMeta, Shoot};

/// A shoot's object as the API server sent it, as the caller holds it.
pub(super) enum Sent<'a> {
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
pub fn compact_shoot(shoot: &Shoot) -> Shoot {
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
pub(super) fn scheduling_relevant_change(old: &Shoot, new: &Shoot) -> bool {
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
        || crate::api::Gates::of(&old.metadata) != crate::api::Gates::of(&new.metadata)
}
