use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::core::NamespaceResourceScope;
use serde::{Deserialize, Deserializer, Serialize};

use super::{CloudProfileReference, SeedSelector, gardener_resource};

/// A Gardener Shoot: the cluster whose control plane needs a seed.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Shoot {
    /// read without `managedFields` (see `meta`)
    #[serde(default, deserialize_with = "super::meta::without_managed_fields")]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ShootSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ShootStatus>,
}
gardener_resource!(Shoot, "Shoot", "shoots", NamespaceResourceScope);

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShootSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile: Option<CloudProfileReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ShootProvider>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_selector: Option<SeedSelector>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<ShootNetworking>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlane>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub access_restrictions: Vec<AccessRestriction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<ShootDns>,
    /// Read by plans: a hibernated shoot cannot be migrated live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hibernation: Option<Hibernation>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Hibernation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShootProvider {
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub workers: Vec<Worker>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Worker {
    #[serde(default)]
    pub name: String,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub zones: Vec<String>,
    /// Present (even as `{}`) when this pool hosts the shoot's own control plane (self-hosted).
    /// Upstream's type is an object (`WorkerControlPlane`), so `controlPlane: false` is a type
    /// error, not "self-hosted".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    #[serde(default)]
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShootNetworking {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub ip_families: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlane {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_availability: Option<HighAvailability>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub zones: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HighAvailability {
    #[serde(default)]
    pub failure_tolerance: FailureTolerance,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FailureTolerance {
    #[serde(default, rename = "type")]
    pub type_: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AccessRestriction {
    #[serde(default)]
    pub name: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShootDns {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShootStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<StatusNetworking>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_operation: Option<LastOperation>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_hibernated: bool,
}

/// `status.networking`: the CIDRs actually in use; lists (dual-stack), a single string accepted.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StatusNetworking {
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub nodes: Vec<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub pods: Vec<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub services: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LastOperation {
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub state: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
}

/// Is this shoot waiting for this scheduler? Unassigned, ours, not deleting, not self-hosted.
/// The controller's queue and `simulate` both ask it.
pub fn is_pending(shoot: &Shoot, scheduler_names: &[String]) -> bool {
    shoot.spec.seed_name.as_deref().is_none_or(str::is_empty)
        && scheduler_names.iter().any(|n| n == shoot.scheduler_name())
        && shoot.metadata.deletion_timestamp.is_none()
        && !shoot.is_self_hosted()
}

impl Shoot {
    /// The scheduler this shoot asks for (`default-scheduler` when unset).
    pub fn scheduler_name(&self) -> &str {
        self.spec
            .scheduler_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(super::DEFAULT_SCHEDULER_NAME)
    }

    /// A self-hosted shoot runs its control plane on one of its own worker pools: no seed needed.
    pub fn is_self_hosted(&self) -> bool {
        self.spec
            .provider
            .as_ref()
            .is_some_and(|p| p.workers.iter().any(|w| w.control_plane.is_some()))
    }

    /// The seeds this shoot occupies: `spec.seedName` and, during a migration, a differing
    /// `status.seedName`.
    pub fn occupied_seeds(&self) -> impl Iterator<Item = &str> {
        let spec = self.spec.seed_name.as_deref().filter(|s| !s.is_empty());
        let status = self
            .status
            .as_ref()
            .and_then(|s| s.seed_name.as_deref())
            .filter(|s| !s.is_empty() && Some(*s) != spec);
        spec.into_iter().chain(status)
    }

    /// The failure tolerance type of the control plane (`node`, `zone`), if highly available.
    pub fn failure_tolerance_type(&self) -> Option<&str> {
        self.spec
            .control_plane
            .as_ref()
            .and_then(|c| c.high_availability.as_ref())
            .map(|h| h.failure_tolerance.type_.as_str())
            .filter(|t| !t.is_empty())
    }

    /// The control plane tolerates the failure of a zone: it spreads over the seed's zones
    /// (upstream's `IsMultiZonalShootControlPlane`).
    pub fn multi_zonal_control_plane(&self) -> bool {
        self.failure_tolerance_type() == Some("zone")
    }
}

/// Treats an explicit `null` like an absent field.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}
