//! Cloud profiles as a decision reads them: a `CloudProfile` or `NamespacedCloudProfile` parsed
//! once, and the one a shoot references.

use kube::core::Selector;

use super::{Snapshot, compile_selector};
use crate::api::{CloudProfile, CloudProfileSpec, NamespacedCloudProfile, Shoot};
use crate::field_error::unsupported;

/// A CloudProfile as far as scheduling is concerned.
#[derive(Clone, Debug)]
pub struct CloudProfileInfo {
    /// `CloudProfile/name` or `NamespacedCloudProfile/ns/name`, for messages.
    pub display: String,
    /// The name region ConfigMaps list the profile by: the CloudProfile's name, or, as upstream
    /// looks it up, the NamespacedCloudProfile's own name (not its parent's).
    pub region_config_name: String,
    pub provider_types: Vec<String>,
    /// `Ok(None)` when the profile has no seed selector (matches every seed).
    pub selector: Result<Option<Selector>, String>,
}

impl CloudProfileInfo {
    pub(super) fn from_spec(
        display: String,
        region_config_name: String,
        spec: Option<&CloudProfileSpec>,
    ) -> Self {
        let seed_selector = spec.and_then(|s| s.seed_selector.as_ref());
        CloudProfileInfo {
            display,
            region_config_name,
            provider_types: seed_selector
                .map(|s| s.provider_types.clone())
                .unwrap_or_default(),
            selector: match seed_selector {
                None => Ok(None),
                Some(s) => compile_selector(&s.label_selector).map(Some),
            },
        }
    }
}

impl Snapshot {
    pub fn upsert_cloud_profile(&mut self, cp: &CloudProfile) {
        self.store_cloud_profile(cp.clone());
    }

    /// Stores a cloud profile as it is, in work that does not grow with it.
    pub fn store_cloud_profile(&mut self, cp: CloudProfile) {
        let name = cp.metadata.name.clone().unwrap_or_default();
        self.cloud_profiles.insert(name, cp);
        self.rebuild_columns();
    }

    pub fn remove_cloud_profile(&mut self, name: &str) {
        if self.cloud_profiles.remove(name).is_some() {
            self.rebuild_columns();
        }
    }

    pub fn upsert_namespaced_cloud_profile(&mut self, ncp: &NamespacedCloudProfile) {
        self.store_namespaced_cloud_profile(ncp.clone());
    }

    /// Stores a namespaced cloud profile as it is, in work that does not grow with it.
    pub fn store_namespaced_cloud_profile(&mut self, ncp: NamespacedCloudProfile) {
        let key = (
            ncp.metadata.namespace.clone().unwrap_or_default(),
            ncp.metadata.name.clone().unwrap_or_default(),
        );
        self.namespaced_cloud_profiles.insert(key, ncp);
    }

    pub fn remove_namespaced_cloud_profile(&mut self, namespace: &str, name: &str) {
        self.namespaced_cloud_profiles
            .remove(&(namespace.to_string(), name.to_string()));
    }

    /// Resolves the profile a shoot references. `Err` is `(field, message)`.
    pub fn cloud_profile_for(&self, shoot: &Shoot) -> Result<CloudProfileInfo, (String, String)> {
        let (kind, name, field) = match (&shoot.spec.cloud_profile, &shoot.spec.cloud_profile_name)
        {
            (Some(r), _) if !r.name.is_empty() => (
                r.kind.as_deref().unwrap_or("CloudProfile"),
                r.name.as_str(),
                "spec.cloudProfile",
            ),
            (_, Some(n)) if !n.is_empty() => ("CloudProfile", n.as_str(), "spec.cloudProfileName"),
            _ => {
                return Err((
                    "spec.cloudProfile".into(),
                    "is required (neither spec.cloudProfile.name nor spec.cloudProfileName is set)"
                        .into(),
                ));
            }
        };
        match kind {
            "CloudProfile" => {
                let cp = self.cloud_profiles.get(name).ok_or_else(|| {
                    (
                        field.to_string(),
                        format!("CloudProfile {name:?} not found"),
                    )
                })?;
                Ok(CloudProfileInfo::from_spec(
                    format!("CloudProfile/{name}"),
                    name.to_string(),
                    Some(&cp.spec),
                ))
            }
            "NamespacedCloudProfile" => {
                let ns = shoot.metadata.namespace.clone().unwrap_or_default();
                let ncp = self
                    .namespaced_cloud_profiles
                    .get(&(ns.clone(), name.to_string()))
                    .ok_or_else(|| {
                        (
                            field.to_string(),
                            format!("NamespacedCloudProfile {ns}/{name} not found"),
                        )
                    })?;
                let parent = &ncp.spec.parent.name;
                let merged = ncp
                    .status
                    .as_ref()
                    .and_then(|s| s.cloud_profile_spec.as_ref());
                // Until gardener-controller-manager fills `status.cloudProfileSpec`, upstream
                // schedules with an empty spec, dropping the parent's seed selector; the parent's
                // spec keeps that constraint (see "Differences from upstream").
                let spec = match merged {
                    Some(spec) => Some(spec),
                    None => Some(
                        &self
                            .cloud_profiles
                            .get(parent)
                            .ok_or_else(|| {
                                (
                                    field.to_string(),
                                    format!(
                                        "NamespacedCloudProfile {ns}/{name} has no status.cloudProfileSpec and its parent CloudProfile {parent:?} was not found"
                                    ),
                                )
                            })?
                            .spec,
                    ),
                };
                Ok(CloudProfileInfo::from_spec(
                    format!("NamespacedCloudProfile/{ns}/{name}"),
                    name.to_string(),
                    spec,
                ))
            }
            other => Err((
                format!("{field}.kind"),
                unsupported(other, ["CloudProfile", "NamespacedCloudProfile"]),
            )),
        }
    }
}
