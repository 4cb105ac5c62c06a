//! Object metadata read without `managedFields`: on a real shoot they are the largest part of the
//! metadata (one entry per manager, each a tree of field paths), and nothing here reads them.
//! Skipping them while parsing, instead of building and then dropping them, is most of what
//! decoding a listed shoot costs.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::{Deserialize, Deserializer};

/// `ObjectMeta` as sent, every field but `managedFields` (which serde skips unread).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaWithoutManagedFields {
    annotations: Option<BTreeMap<String, String>>,
    creation_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    generate_name: Option<String>,
    generation: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<OwnerReference>>,
    resource_version: Option<String>,
    self_link: Option<String>,
    uid: Option<String>,
}

/// Reads `metadata` as [`ObjectMeta`] with `managedFields` left out (an explicit `null` is read
/// as empty metadata).
pub(crate) fn without_managed_fields<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<ObjectMeta, D::Error> {
    let Some(m) = Option::<MetaWithoutManagedFields>::deserialize(d)? else {
        return Ok(ObjectMeta::default());
    };
    Ok(ObjectMeta {
        annotations: m.annotations,
        creation_timestamp: m.creation_timestamp,
        deletion_grace_period_seconds: m.deletion_grace_period_seconds,
        deletion_timestamp: m.deletion_timestamp,
        finalizers: m.finalizers,
        generate_name: m.generate_name,
        generation: m.generation,
        labels: m.labels,
        managed_fields: None,
        name: m.name,
        namespace: m.namespace,
        owner_references: m.owner_references,
        resource_version: m.resource_version,
        self_link: m.self_link,
        uid: m.uid,
    })
}

#[cfg(test)]
mod tests {
    use crate::api::Shoot;

    #[test]
    fn a_shoot_is_read_without_its_managed_fields_and_with_everything_else() {
        let shoot: Shoot = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "a", "namespace": "garden-p", "uid": "u-1", "resourceVersion": "7",
                "generation": 3, "labels": {"l": "v"}, "annotations": {"k": "v"},
                "finalizers": ["gardener"], "creationTimestamp": "2026-01-01T00:00:00Z",
                "managedFields": [{"manager": "gardenlet", "operation": "Update",
                                   "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]
            },
            "spec": {"region": "eu-1"}
        }))
        .unwrap();
        let m = &shoot.metadata;
        assert!(m.managed_fields.is_none());
        assert_eq!(m.name.as_deref(), Some("a"));
        assert_eq!(m.namespace.as_deref(), Some("garden-p"));
        assert_eq!(m.uid.as_deref(), Some("u-1"));
        assert_eq!(m.resource_version.as_deref(), Some("7"));
        assert_eq!(m.generation, Some(3));
        assert_eq!(m.labels.as_ref().unwrap()["l"], "v");
        assert_eq!(m.annotations.as_ref().unwrap()["k"], "v");
        assert_eq!(m.finalizers.as_deref(), Some(&["gardener".to_string()][..]));
        assert!(m.creation_timestamp.is_some());
    }

    #[test]
    fn metadata_of_the_wrong_type_is_an_error_naming_it() {
        let err = serde_json::from_value::<Shoot>(serde_json::json!({
            "metadata": {"name": 5}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }
}
