//! The kinds other than shoots and seeds: cloud profiles, projects, region and
//! carbon-intensity ConfigMaps. Each is made ready before the cache's lock is taken
//! ([`OtherUpdate`]: compacted, parsed, fingerprinted); under the lock it is only stored, in
//! work that does not grow with the object.

use crate::api::{
    ANNOTATION_CLOUDPROFILES, CloudProfile, ConfigMap, NamespacedCloudProfile, Project, object_key,
    residency_opt_out,
};
use crate::controller::cache::compact::{compact_meta, fingerprint};
use crate::controller::cache::kind::WatchedKind;
use crate::controller::cache::state::{Cache, Change, Fingerprint};
use crate::snapshot::{ParsedConfigMap, RegionConfig};

/// A cloud profile, project or ConfigMap as the cache stores it, made without the cache.
pub struct OtherUpdate {
    kind: WatchedKind,
    key: String,
    /// what the decision reads of the object, hashed: waiting shoots are retried only when it
    /// differs from the last one seen
    hash: u64,
    body: Body,
}

enum Body {
    CloudProfile(CloudProfile),
    NamespacedCloudProfile(NamespacedCloudProfile),
    Project {
        name: String,
        namespace: Option<String>,
        opt_out: bool,
    },
    ConfigMap(ParsedConfigMap),
}

impl OtherUpdate {
    pub fn cloud_profile(cp: &CloudProfile) -> OtherUpdate {
        let compact = CloudProfile {
            metadata: compact_meta(&cp.metadata, false, &[]),
            spec: cp.spec.clone(),
        };
        OtherUpdate {
            kind: WatchedKind::CloudProfile,
            key: compact.metadata.name.clone().unwrap_or_default(),
            hash: fingerprint(&compact.spec),
            body: Body::CloudProfile(compact),
        }
    }

    pub fn namespaced_cloud_profile(ncp: &NamespacedCloudProfile) -> OtherUpdate {
        let compact = NamespacedCloudProfile {
            metadata: compact_meta(&ncp.metadata, false, &[]),
            spec: ncp.spec.clone(),
            status: ncp.status.clone(),
        };
        OtherUpdate {
            kind: WatchedKind::NamespacedCloudProfile,
            key: object_key(&compact.metadata),
            hash: fingerprint(&(&compact.spec, &compact.status)),
            body: Body::NamespacedCloudProfile(compact),
        }
    }

    pub fn project(project: &Project) -> OtherUpdate {
        let name = project.metadata.name.clone().unwrap_or_default();
        let opt_out = residency_opt_out(&project.metadata);
        OtherUpdate {
            kind: WatchedKind::Project,
            key: name.clone(),
            hash: fingerprint(&(&project.spec, opt_out)),
            body: Body::Project {
                name,
                namespace: project.spec.namespace.clone(),
                opt_out,
            },
        }
    }

    /// A region ConfigMap; `previous` is the one stored under its name
    /// ([`Cache::region_config`]), whose latency table is kept when the rows did not change.
    pub fn region_config_map(cm: &ConfigMap, previous: Option<&RegionConfig>) -> OtherUpdate {
        let read = compact_meta(&cm.metadata, true, &[ANNOTATION_CLOUDPROFILES]);
        OtherUpdate {
            kind: WatchedKind::ConfigMap,
            key: object_key(&cm.metadata),
            hash: fingerprint(&(&read.labels, &read.annotations, &cm.data)),
            body: Body::ConfigMap(ParsedConfigMap::parse(cm, previous)),
        }
    }

    /// A carbon-intensity ConfigMap, its forecast parsed. A changed forecast, heartbeat or
    /// label wakes waiting shoots; an identical resync does not.
    pub fn carbon_config_map(cm: &ConfigMap) -> OtherUpdate {
        OtherUpdate {
            kind: WatchedKind::CarbonConfigMap,
            key: object_key(&cm.metadata),
            hash: fingerprint(&(&cm.metadata.labels, &cm.data, &cm.binary_data)),
            body: Body::ConfigMap(ParsedConfigMap::parse(cm, None)),
        }
    }
}

impl Cache {
    /// Stores a cloud profile, project or ConfigMap made ready by [`OtherUpdate`].
    pub fn apply_other(&mut self, update: OtherUpdate) -> Change {
        let OtherUpdate {
            kind,
            key,
            hash,
            body,
        } = update;
        match body {
            Body::CloudProfile(cp) => self.snapshot.store_cloud_profile(cp),
            Body::NamespacedCloudProfile(ncp) => self.snapshot.store_namespaced_cloud_profile(ncp),
            Body::Project {
                name,
                namespace,
                opt_out,
            } => self.snapshot.store_project(name, namespace, opt_out),
            Body::ConfigMap(parsed) => self.snapshot.upsert_parsed_config_map(parsed),
        }
        let listed = self.lists.mark(kind);
        let old = self
            .fingerprints
            .insert((kind, key), Fingerprint { hash, listed });
        Change {
            enqueue: false,
            retry_waiting: old.is_none_or(|old| old.hash != hash),
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    /// The region ConfigMap stored as `namespace/name`, for [`OtherUpdate::region_config_map`].
    pub fn region_config(&self, key: &str) -> Option<std::sync::Arc<RegionConfig>> {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        self.snapshot.region_config(ns, name)
    }

    pub fn apply_cloud_profile(&mut self, cp: &CloudProfile) -> Change {
        self.apply_other(OtherUpdate::cloud_profile(cp))
    }

    pub fn apply_namespaced_cloud_profile(&mut self, ncp: &NamespacedCloudProfile) -> Change {
        self.apply_other(OtherUpdate::namespaced_cloud_profile(ncp))
    }

    pub fn apply_project(&mut self, project: &Project) -> Change {
        self.apply_other(OtherUpdate::project(project))
    }

    pub fn apply_config_map(&mut self, cm: &ConfigMap) -> Change {
        let previous = self.region_config(&object_key(&cm.metadata));
        self.apply_other(OtherUpdate::region_config_map(cm, previous.as_deref()))
    }

    pub fn apply_carbon_config_map(&mut self, cm: &ConfigMap) -> Change {
        self.apply_other(OtherUpdate::carbon_config_map(cm))
    }
}
