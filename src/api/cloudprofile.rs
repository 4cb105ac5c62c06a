use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use serde::{Deserialize, Serialize};

use super::gardener_resource;
use super::shoot::null_as_default;

/// A label selector over seeds plus, on CloudProfiles, the provider types the profile's shoots may
/// be placed on (`*` for any).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
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

/// `spec.cloudProfile` of a Shoot: a CloudProfile or a NamespacedCloudProfile in its namespace.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileReference {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub name: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfile {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CloudProfileSpec,
}
gardener_resource!(
    CloudProfile,
    "CloudProfile",
    "cloudprofiles",
    ClusterResourceScope
);

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileSpec {
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_selector: Option<SeedSelector>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedCloudProfile {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: NamespacedCloudProfileSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NamespacedCloudProfileStatus>,
}
gardener_resource!(
    NamespacedCloudProfile,
    "NamespacedCloudProfile",
    "namespacedcloudprofiles",
    NamespaceResourceScope
);

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedCloudProfileSpec {
    #[serde(default)]
    pub parent: CloudProfileReference,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NamespacedCloudProfileStatus {
    /// The parent's spec merged with this profile's additions, as computed by Gardener.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile_spec: Option<CloudProfileSpec>,
}
