use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ClusterResourceScope;
use serde::{Deserialize, Serialize};

use super::gardener_resource;
use super::shoot::{LastOperation, null_as_default};

/// A Gardener Seed: a cluster that hosts shoot control planes.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Seed {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: SeedSpec,
    #[serde(default)]
    pub status: SeedStatus,
}
gardener_resource!(Seed, "Seed", "seeds", ClusterResourceScope);

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<SeedProvider>,
    #[serde(default)]
    pub settings: SeedSettings,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub taints: Vec<SeedTaint>,
    #[serde(default)]
    pub networks: SeedNetworks,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub access_restrictions: Vec<super::AccessRestriction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<SeedDns>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<SeedBackup>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedProvider {
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub region: String,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub zones: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<SeedScheduling>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_selection: Option<ZoneSelection>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedScheduling {
    /// Invisible seeds are skipped by the scheduler. A stored seed always has it (upstream's
    /// field is not optional); only a file read as written can lack it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
}

impl SeedSettings {
    /// Whether the scheduler considers the seed. A file read as written without
    /// `scheduling.visible` counts as visible; see [`crate::api::defaults`] for how
    /// gardener-apiserver would store it.
    pub fn visible(&self) -> bool {
        self.scheduling
            .as_ref()
            .and_then(|s| s.visible)
            .unwrap_or(true)
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ZoneSelection {
    #[serde(default)]
    pub mode: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedTaint {
    #[serde(default)]
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedNetworks {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shoot_defaults: Option<ShootNetworkDefaults>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShootNetworkDefaults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedDns {
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub defaults: Vec<SeedDnsDefault>,
    /// Read by plans: a migration may not change the internal domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal: Option<SeedDnsDefault>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedDnsDefault {
    #[serde(default)]
    pub domain: String,
}

/// Only its presence matters to scheduling (it makes `BackupBucketsReady` required).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedBackup {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SeedStatus {
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_operation: Option<LastOperation>,
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub allocatable: BTreeMap<String, Quantity>,
    /// Read by plans: a live migration needs the same gardenlet version on both seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gardener: Option<Gardener>,
}

/// `status.gardener`: the gardenlet that reports for the seed.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Gardener {
    #[serde(default)]
    pub version: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// RFC 3339, as written; read by the seed-health judgement (`evacuation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// RFC 3339, as written: the gardenlet's heartbeat on `GardenletReady`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<String>,
}

impl Condition {
    /// `lastTransitionTime`, when it reads as RFC 3339.
    pub fn transition_time(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        rfc3339(self.last_transition_time.as_deref())
    }

    /// `lastUpdateTime`, when it reads as RFC 3339.
    pub fn update_time(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        rfc3339(self.last_update_time.as_deref())
    }
}

fn rfc3339(text: Option<&str>) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(text?)
        .ok()
        .map(|t| t.to_utc())
}

impl Seed {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
}
