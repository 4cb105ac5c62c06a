use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::core::NamespaceResourceScope;
use serde::{Deserialize, Deserializer, Serialize};

use super::{CloudProfileReference, SeedSelector, api_types, gardener_resource};

api_types! {
    /// A Gardener Shoot: the cluster whose control plane needs a seed.
    pub struct Shoot {
        /// read without `managedFields` (see `meta`)
        #[serde(deserialize_with = "super::meta::without_managed_fields")]
        pub metadata: ObjectMeta,
        pub spec: ShootSpec,
        pub status: Option<ShootStatus>,
    }

    pub struct ShootSpec {
        pub seed_name: Option<String>,
        pub scheduler_name: Option<String>,
        pub cloud_profile: Option<CloudProfileReference>,
        pub cloud_profile_name: Option<String>,
        pub region: Option<String>,
        pub provider: Option<ShootProvider>,
        pub purpose: Option<String>,
        pub seed_selector: Option<SeedSelector>,
        pub tolerations: Vec<Toleration>,
        pub networking: Option<ShootNetworking>,
        pub control_plane: Option<ControlPlane>,
        pub access_restrictions: Vec<AccessRestriction>,
        pub dns: Option<ShootDns>,
        /// Read by plans: a hibernated shoot cannot be migrated live.
        pub hibernation: Option<Hibernation>,
    }

    pub struct Hibernation {
        pub enabled: Option<bool>,
    }

    pub struct ShootProvider {
        #[serde(rename = "type")]
        pub type_: String,
        pub workers: Vec<Worker>,
    }

    pub struct Worker {
        pub name: String,
        pub zones: Vec<String>,
        /// Present (even as `{}`) when this pool hosts the shoot's own control plane
        /// (self-hosted). Upstream's type is an object (`WorkerControlPlane`), so
        /// `controlPlane: false` is a type error, not "self-hosted".
        pub control_plane: Option<serde_json::Map<String, serde_json::Value>>,
    }

    pub struct Toleration {
        pub key: String,
        pub value: Option<String>,
    }

    pub struct ShootNetworking {
        pub nodes: Option<String>,
        pub pods: Option<String>,
        pub services: Option<String>,
        pub ip_families: Vec<String>,
    }

    pub struct ControlPlane {
        pub high_availability: Option<HighAvailability>,
        pub zones: Vec<String>,
    }

    pub struct HighAvailability {
        pub failure_tolerance: FailureTolerance,
    }

    pub struct FailureTolerance {
        #[serde(rename = "type")]
        pub type_: String,
    }

    pub struct AccessRestriction {
        pub name: String,
    }

    pub struct ShootDns {
        pub domain: Option<String>,
    }

    pub struct ShootStatus {
        pub seed_name: Option<String>,
        pub networking: Option<StatusNetworking>,
        pub last_operation: Option<LastOperation>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub is_hibernated: bool,
    }

    pub struct LastOperation {
        #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
        pub type_: String,
        #[serde(skip_serializing_if = "String::is_empty")]
        pub state: String,
        #[serde(skip_serializing_if = "String::is_empty")]
        pub description: String,
        pub last_update_time: Option<Time>,
    }
}
gardener_resource!(Shoot, "Shoot", "shoots", NamespaceResourceScope);

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
