use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use serde::{Deserialize, Serialize};

use super::{api_types, gardener_resource, null_as_default};

/// A label selector over seeds plus, on CloudProfiles, the provider types the profile's shoots may
/// be placed on (`*` for any).
///
/// A type error is reported with its full path (`spec.seedSelector.matchLabels.env`). Unknown
/// keys are ignored here, as for every API object read from the API server (a newer Gardener may
/// add fields); `simulate` refuses them in manifests ([`SEED_SELECTOR_KEYS`]).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", from = "RawSeedSelector")]
pub struct SeedSelector {
    #[serde(flatten)]
    pub label_selector: LabelSelector,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub provider_types: Vec<String>,
}

/// The keys a `seedSelector` may hold, and those of one of its `matchExpressions`.
pub const SEED_SELECTOR_KEYS: &[&str] = &["matchLabels", "matchExpressions", "providerTypes"];
pub const SELECTOR_REQUIREMENT_KEYS: &[&str] = &["key", "operator", "values"];

/// The fields of a [`SeedSelector`] as written.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSeedSelector {
    #[serde(default)]
    match_labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    match_expressions: Option<Vec<RawRequirement>>,
    #[serde(default, deserialize_with = "null_as_default")]
    provider_types: Vec<String>,
}

#[derive(Deserialize)]
struct RawRequirement {
    #[serde(default)]
    key: String,
    #[serde(default)]
    operator: String,
    #[serde(default)]
    values: Option<Vec<String>>,
}

impl From<RawSeedSelector> for SeedSelector {
    fn from(raw: RawSeedSelector) -> Self {
        SeedSelector {
            label_selector: LabelSelector {
                match_labels: raw.match_labels,
                match_expressions: raw.match_expressions.map(|exprs| {
                    exprs
                        .into_iter()
                        .map(|r| LabelSelectorRequirement {
                            key: r.key,
                            operator: r.operator,
                            values: r.values,
                        })
                        .collect()
                }),
            },
            provider_types: raw.provider_types,
        }
    }
}

api_types! {
    /// `spec.cloudProfile` of a Shoot: a CloudProfile or a NamespacedCloudProfile in its
    /// namespace.
    pub struct CloudProfileReference {
        pub kind: Option<String>,
        pub name: String,
    }

    pub struct CloudProfile {
        pub metadata: ObjectMeta,
        pub spec: CloudProfileSpec,
    }

    pub struct CloudProfileSpec {
        #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
        pub type_: String,
        pub seed_selector: Option<SeedSelector>,
    }

    pub struct NamespacedCloudProfile {
        pub metadata: ObjectMeta,
        pub spec: NamespacedCloudProfileSpec,
        pub status: Option<NamespacedCloudProfileStatus>,
    }

    pub struct NamespacedCloudProfileSpec {
        pub parent: CloudProfileReference,
    }

    pub struct NamespacedCloudProfileStatus {
        /// The parent's spec merged with this profile's additions, as computed by Gardener.
        pub cloud_profile_spec: Option<CloudProfileSpec>,
    }
}
gardener_resource!(
    CloudProfile,
    "CloudProfile",
    "cloudprofiles",
    ClusterResourceScope
);
gardener_resource!(
    NamespacedCloudProfile,
    "NamespacedCloudProfile",
    "namespacedcloudprofiles",
    NamespaceResourceScope
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_selector_from_the_api_server_may_carry_fields_added_later() {
        let s: SeedSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"env": "prod"},
            "providerTypes": ["aws"],
            "addedLater": true,
        }))
        .unwrap();
        assert_eq!(
            s.label_selector
                .match_labels
                .unwrap()
                .get("env")
                .map(String::as_str),
            Some("prod")
        );
        assert_eq!(s.provider_types, ["aws"]);
    }

    #[test]
    fn a_type_error_in_a_seed_selector_names_the_label() {
        let err = serde_path_to_error::deserialize::<_, SeedSelector>(serde_json::json!({
            "matchLabels": {"env": ["prod"]},
        }))
        .unwrap_err();
        assert_eq!(err.path().to_string(), "matchLabels.env");
    }
}
