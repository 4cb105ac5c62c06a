use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ClusterResourceScope;

use super::shoot::LastOperation;
use super::{api_types, gardener_resource};

api_types! {
    /// A Gardener Seed: a cluster that hosts shoot control planes.
    pub struct Seed {
        pub metadata: ObjectMeta,
        pub spec: SeedSpec,
        pub status: SeedStatus,
    }

    pub struct SeedSpec {
        pub provider: Option<SeedProvider>,
        pub settings: SeedSettings,
        pub taints: Vec<SeedTaint>,
        pub networks: SeedNetworks,
        pub access_restrictions: Vec<super::AccessRestriction>,
        pub dns: Option<SeedDns>,
        pub backup: Option<SeedBackup>,
    }

    pub struct SeedProvider {
        #[serde(rename = "type")]
        pub type_: String,
        pub region: String,
        pub zones: Vec<String>,
    }

    pub struct SeedSettings {
        pub scheduling: Option<SeedScheduling>,
        pub zone_selection: Option<ZoneSelection>,
    }

    pub struct SeedScheduling {
        /// Invisible seeds are skipped by the scheduler. A stored seed always has it (upstream's
        /// field is not optional); only a file read as written can lack it.
        pub visible: Option<bool>,
    }

    pub struct ZoneSelection {
        pub mode: String,
    }

    pub struct SeedTaint {
        pub key: String,
        pub value: Option<String>,
    }

    pub struct SeedNetworks {
        pub nodes: Option<String>,
        pub pods: Option<String>,
        pub services: Option<String>,
        pub shoot_defaults: Option<ShootNetworkDefaults>,
    }

    pub struct ShootNetworkDefaults {
        pub pods: Option<String>,
        pub services: Option<String>,
    }

    pub struct SeedDns {
        pub defaults: Vec<SeedDnsDefault>,
        /// Read by plans: a migration may not change the internal domain.
        pub internal: Option<SeedDnsDefault>,
    }

    pub struct SeedDnsDefault {
        pub domain: String,
    }

    /// Only its presence matters to scheduling (it makes `BackupBucketsReady` required).
    pub struct SeedBackup {
        pub provider: Option<String>,
    }

    pub struct SeedStatus {
        pub conditions: Vec<Condition>,
        pub last_operation: Option<LastOperation>,
        pub allocatable: BTreeMap<String, Quantity>,
        /// Read by plans: a live migration needs the same gardenlet version on both seeds.
        pub gardener: Option<Gardener>,
    }

    /// `status.gardener`: the gardenlet that reports for the seed.
    pub struct Gardener {
        pub version: String,
    }

    pub struct Condition {
        #[serde(rename = "type")]
        pub type_: String,
        pub status: String,
        pub reason: Option<String>,
        pub message: Option<String>,
        /// RFC 3339, as written; read by the seed-health judgement (`evacuation`).
        pub last_transition_time: Option<String>,
        /// RFC 3339, as written: the gardenlet's heartbeat on `GardenletReady`.
        pub last_update_time: Option<String>,
    }
}
gardener_resource!(Seed, "Seed", "seeds", ClusterResourceScope);

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
