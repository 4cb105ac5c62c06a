//! The scheduler's view of the landscape: compact seeds, cloud profiles, projects, region
//! distances and an index of seed usage.
//!
//! Every object is parsed once when it changes (`upsert_*`/`remove_*`), so a decision costs
//! O(seeds) and never scans shoots. The controller feeds the snapshot from watches; `simulate`
//! feeds it from manifest files; both then call the same [`crate::schedule::schedule`].

mod carbon;
pub mod columns;
pub mod estimate;
pub mod latency;
mod region_config;
mod seed;
mod usage;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use kube::core::{Selector, SelectorExt};

pub use carbon::{CarbonSource, CarbonSources, MAX_REMOVED_RETENTION, is_carbon_config_map};
pub use columns::{SeedColumns, SeedSet};
pub use region_config::{RegionConfig, parse_region_distances};
pub use seed::{SeedInfo, SeedNets, ZoneMode};
pub use usage::{DemandClass, SeedUsage, Usage};

use crate::field_error::unsupported;
use crate::regions::Regions;

use crate::api::{
    CloudProfile, CloudProfileSpec, ConfigMap, LabelSelector, NamespacedCloudProfile, Project,
    Seed, Shoot,
};

/// Namespace holding the region ConfigMaps (Gardener's garden namespace).
pub const GARDEN_NAMESPACE: &str = "garden";

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
    fn from_spec(
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

/// Compiles a label selector, rejecting unknown operators and malformed requirements.
pub fn compile_selector(ls: &LabelSelector) -> Result<Selector, String> {
    for (i, req) in ls.match_expressions.iter().flatten().enumerate() {
        let has_values = req.values.as_ref().is_some_and(|v| !v.is_empty());
        match req.operator.as_str() {
            "In" | "NotIn" if !has_values => {
                return Err(format!(
                    "matchExpressions[{i}]: operator {} needs at least one value",
                    req.operator
                ));
            }
            "Exists" | "DoesNotExist" if has_values => {
                return Err(format!(
                    "matchExpressions[{i}]: operator {} takes no values",
                    req.operator
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => {
                return Err(format!(
                    "matchExpressions[{i}].operator: {}",
                    unsupported(other, ["In", "NotIn", "Exists", "DoesNotExist"])
                ));
            }
        }
        if req.key.is_empty() {
            return Err(format!("matchExpressions[{i}].key: is required"));
        }
    }
    Selector::try_from(ls.clone()).map_err(|e| e.to_string())
}

/// Does the selector match these labels? (`None` matches all.)
pub fn selector_matches(sel: Option<&Selector>, labels: &BTreeMap<String, String>) -> bool {
    sel.is_none_or(|s| s.matches(labels))
}

/// The seeds of one provider type in one region, by name.
pub type SeedGroup = BTreeMap<Arc<str>, Arc<SeedInfo>>;

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    seeds: BTreeMap<String, Arc<SeedInfo>>,
    /// provider type -> region -> the seeds there by name: the candidates of the region
    /// strategies, kept in step with `seeds`.
    seed_groups: BTreeMap<String, BTreeMap<String, SeedGroup>>,
    cloud_profiles: BTreeMap<String, CloudProfile>,
    namespaced_cloud_profiles: BTreeMap<(String, String), NamespacedCloudProfile>,
    /// namespace -> project name
    projects: BTreeMap<String, String>,
    /// project name -> namespace, to keep `projects` right when a project changes namespace
    project_namespaces: BTreeMap<String, String>,
    region_configs: BTreeMap<(String, String), RegionConfig>,
    /// Projects carrying the residency opt-out annotation.
    residency_opt_outs: BTreeSet<String>,
    /// The region catalogue with the operator's entries.
    regions: Regions,
    carbon: CarbonSources,
    usage: Usage,
    /// The seeds in flat arrays, kept in step with `seeds` and `usage`.
    columns: SeedColumns,
}

impl Snapshot {
    pub fn new() -> Self {
        Self::default()
    }

    // ---- seeds

    pub fn upsert_seed(&mut self, seed: &Seed) {
        let info = Arc::new(SeedInfo::from_seed(seed));
        self.ungroup(&info.name);
        self.seed_groups
            .entry(info.provider.clone())
            .or_default()
            .entry(info.region.clone())
            .or_default()
            .insert(Arc::clone(&info.name), Arc::clone(&info));
        let in_place = self.columns.replace(&info);
        self.seeds.insert(info.name.to_string(), info);
        if !in_place {
            self.rebuild_columns();
        }
    }

    pub fn remove_seed(&mut self, name: &str) {
        self.ungroup(name);
        if self.seeds.remove(name).is_some() {
            self.rebuild_columns();
        }
    }

    fn rebuild_columns(&mut self) {
        // The seed selectors of the CloudProfiles, matched once per seed or profile change.
        let selectors: Vec<(String, Selector)> = self
            .cloud_profiles
            .iter()
            .filter_map(|(name, cp)| {
                let info = CloudProfileInfo::from_spec(
                    format!("CloudProfile/{name}"),
                    name.clone(),
                    Some(&cp.spec),
                );
                Some((info.display, info.selector.ok()??))
            })
            .collect();
        self.columns = SeedColumns::build(self.seeds.values(), &self.usage, &selectors);
    }

    /// The seeds in flat arrays, positions in name order (as [`Snapshot::seeds`]).
    pub fn columns(&self) -> &SeedColumns {
        &self.columns
    }

    /// Drops a seed from the provider/region index, before it changes or goes.
    fn ungroup(&mut self, name: &str) {
        let Some(old) = self.seeds.get(name) else {
            return;
        };
        if let Some(regions) = self.seed_groups.get_mut(&old.provider) {
            if let Some(names) = regions.get_mut(&old.region) {
                names.remove(name);
                if names.is_empty() {
                    regions.remove(&old.region);
                }
            }
            if regions.is_empty() {
                self.seed_groups.remove(&old.provider);
            }
        }
    }

    /// The seeds of one provider type in one region, ordered by name.
    pub fn seeds_in<'a>(
        &'a self,
        provider: &str,
        region: &str,
    ) -> impl Iterator<Item = &'a SeedInfo> + 'a {
        self.seed_groups
            .get(provider)
            .and_then(|regions| regions.get(region))
            .into_iter()
            .flat_map(|seeds| seeds.values().map(|s| &**s))
    }

    /// Every (provider type, region) that has seeds, with the names of its seeds.
    pub fn seed_groups(&self) -> impl Iterator<Item = (&str, &str, &SeedGroup)> {
        self.seed_groups.iter().flat_map(|(provider, regions)| {
            regions
                .iter()
                .map(move |(region, names)| (provider.as_str(), region.as_str(), names))
        })
    }

    /// The regions with seeds of one provider type, with the names of their seeds.
    pub fn regions_of(&self, provider: &str) -> impl Iterator<Item = (&str, &SeedGroup)> {
        self.seed_groups
            .get(provider)
            .into_iter()
            .flatten()
            .map(|(region, names)| (region.as_str(), names))
    }

    /// All seeds, ordered by name.
    pub fn seeds(&self) -> impl ExactSizeIterator<Item = &SeedInfo> {
        self.seeds.values().map(|s| &**s)
    }

    pub fn seed(&self, name: &str) -> Option<&SeedInfo> {
        self.seeds.get(name).map(|s| &**s)
    }

    // ---- shoots (usage only)

    /// Records where a shoot runs. Idempotent; call it again on every change.
    pub fn upsert_shoot(&mut self, shoot: &Shoot) {
        let key = crate::api::object_key(&shoot.metadata);
        let before: Vec<Box<str>> = self
            .usage
            .seeds_of(&key)
            .into_iter()
            .map(Into::into)
            .collect();
        self.usage.upsert(shoot);
        self.refresh_usage(before.iter().map(|s| &**s).chain(shoot.occupied_seeds()));
    }

    /// Forgets a shoot by `namespace/name`.
    pub fn remove_shoot(&mut self, key: &str) {
        let before: Vec<Box<str>> = self
            .usage
            .seeds_of(key)
            .into_iter()
            .map(Into::into)
            .collect();
        self.usage.remove(key);
        self.refresh_usage(before.iter().map(|s| &**s));
    }

    fn refresh_usage<'a>(&mut self, seeds: impl Iterator<Item = &'a str>) {
        for seed in seeds {
            self.columns.refresh_usage(seed, &self.usage);
        }
    }

    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// Swaps in a usage index built elsewhere (a recount of a full shoot list) and returns the
    /// previous one, so a recount can be checked against, or replace, the incremental index.
    pub fn replace_usage(&mut self, usage: Usage) -> Usage {
        let old = std::mem::replace(&mut self.usage, usage);
        self.rebuild_columns();
        old
    }

    // ---- cloud profiles

    pub fn upsert_cloud_profile(&mut self, cp: &CloudProfile) {
        let name = cp.metadata.name.clone().unwrap_or_default();
        self.cloud_profiles.insert(name, cp.clone());
        self.rebuild_columns();
    }

    pub fn remove_cloud_profile(&mut self, name: &str) {
        if self.cloud_profiles.remove(name).is_some() {
            self.rebuild_columns();
        }
    }

    pub fn upsert_namespaced_cloud_profile(&mut self, ncp: &NamespacedCloudProfile) {
        let key = (
            ncp.metadata.namespace.clone().unwrap_or_default(),
            ncp.metadata.name.clone().unwrap_or_default(),
        );
        self.namespaced_cloud_profiles.insert(key, ncp.clone());
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

    // ---- the region catalogue

    /// Replaces the region catalogue (the compiled-in one with the operator's entries).
    pub fn set_regions(&mut self, regions: Regions) {
        self.regions = regions;
    }

    pub fn regions(&self) -> &Regions {
        &self.regions
    }

    // ---- projects

    pub fn upsert_project(&mut self, project: &Project) {
        let name = project.metadata.name.clone().unwrap_or_default();
        if crate::api::residency_opt_out(&project.metadata) {
            self.residency_opt_outs.insert(name.clone());
        } else {
            self.residency_opt_outs.remove(&name);
        }
        if let Some(old_ns) = self.project_namespaces.remove(&name) {
            self.projects.remove(&old_ns);
        }
        if let Some(ns) = project.spec.namespace.clone().filter(|n| !n.is_empty()) {
            self.projects.insert(ns.clone(), name.clone());
            self.project_namespaces.insert(name, ns);
        }
    }

    pub fn remove_project(&mut self, name: &str) {
        self.residency_opt_outs.remove(name);
        if let Some(ns) = self.project_namespaces.remove(name) {
            self.projects.remove(&ns);
        }
    }

    /// The namespaces whose shoots belong to `project` under [`Snapshot::project_of`]: at most
    /// the one its Project object claims, `garden-<project>` and `<project>` itself.
    pub fn namespaces_of_project(&self, project: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(3);
        let candidates = [
            self.project_namespaces.get(project).cloned(),
            Some(format!("garden-{project}")),
            Some(project.to_string()),
        ];
        for ns in candidates.into_iter().flatten() {
            if !out.contains(&ns) && self.project_of(&ns) == project {
                out.push(ns);
            }
        }
        out
    }

    /// Does the project carry the residency opt-out annotation?
    pub fn project_opts_out_of_residency(&self, project: &str) -> bool {
        self.residency_opt_outs.contains(project)
    }

    /// The project owning a namespace: from a Project object, else `garden-X` -> `X`, else the
    /// namespace itself.
    pub fn project_of(&self, namespace: &str) -> String {
        if let Some(p) = self.projects.get(namespace) {
            return p.clone();
        }
        namespace
            .strip_prefix("garden-")
            .filter(|p| !p.is_empty())
            .unwrap_or(namespace)
            .to_string()
    }

    // ---- region ConfigMaps

    /// Accepts any ConfigMap; only those in `garden` labelled as region config are kept, and
    /// carbon-intensity forecasts (see [`Snapshot::upsert_carbon_config_map`]).
    pub fn upsert_config_map(&mut self, cm: &ConfigMap) {
        let key = (
            cm.metadata.namespace.clone().unwrap_or_default(),
            cm.metadata.name.clone().unwrap_or_default(),
        );
        if is_carbon_config_map(cm) {
            self.upsert_carbon_config_map(cm);
        } else {
            self.carbon.forget(&key.0, &key.1);
        }
        match RegionConfig::parse(cm, self.region_configs.get(&key)) {
            Some(rc) => {
                self.region_configs.insert(key, rc);
            }
            None => {
                self.region_configs.remove(&key);
            }
        }
    }

    /// Forgets a region ConfigMap. Carbon-intensity ConfigMaps are removed with
    /// [`Snapshot::remove_carbon_config_map`], which keeps their data for a grace period.
    pub fn remove_config_map(&mut self, namespace: &str, name: &str) {
        self.region_configs
            .remove(&(namespace.to_string(), name.to_string()));
    }

    /// The region ConfigMap for a CloudProfile: the first by namespace/name that lists it.
    pub fn region_config_for(&self, cloud_profile: &str) -> Option<&RegionConfig> {
        self.region_configs
            .values()
            .find(|rc| rc.cloud_profiles.iter().any(|p| p == cloud_profile))
    }

    /// The distances from `region` for a CloudProfile's shoots: the row of the first region
    /// ConfigMap (by namespace/name) that lists the profile and has a well-formed row for the
    /// region; when every such row is malformed, the first one's error. `None` when no
    /// ConfigMap listing the profile has a row for the region.
    #[allow(clippy::type_complexity)]
    pub fn region_row_for(
        &self,
        cloud_profile: &str,
        region: &str,
    ) -> Option<(&RegionConfig, Result<BTreeMap<String, i64>, String>)> {
        let mut malformed = None;
        for rc in self
            .region_configs
            .values()
            .filter(|rc| rc.cloud_profiles.iter().any(|p| p == cloud_profile))
        {
            match rc.distances_from(region) {
                Some(Ok(row)) => return Some((rc, Ok(row))),
                Some(Err(e)) => {
                    malformed.get_or_insert((rc, Err(e)));
                }
                None => {}
            }
        }
        malformed
    }

    /// Region ConfigMaps that name the same CloudProfile and disagree: a row that is malformed
    /// in one while another has it well-formed (the well-formed one is used), or two
    /// well-formed rows with different distances (the first by namespace/name is used). Upstream
    /// takes the first ConfigMap its cache lists, so which one applies there is not defined.
    pub fn region_config_conflicts(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut profiles: Vec<&str> = self
            .region_configs
            .values()
            .flat_map(|rc| rc.cloud_profiles.iter().map(String::as_str))
            .collect();
        profiles.sort_unstable();
        profiles.dedup();
        for profile in profiles {
            let configs: Vec<&RegionConfig> = self
                .region_configs
                .values()
                .filter(|rc| rc.cloud_profiles.iter().any(|p| p == profile))
                .collect();
            if configs.len() < 2 {
                continue;
            }
            let mut regions: Vec<&str> = configs
                .iter()
                .flat_map(|rc| rc.rows.keys().map(String::as_str))
                .collect();
            regions.sort_unstable();
            regions.dedup();
            for region in regions {
                let Some((used, Ok(row))) = self.region_row_for(profile, region) else {
                    continue;
                };
                for rc in configs.iter().filter(|rc| rc.name != used.name) {
                    match rc.rows.get(region) {
                        Some(Err(e)) => out.push(format!(
                            "region ConfigMap {}: data[{region}]: {e}; CloudProfile {profile} uses the row of {} instead",
                            rc.name, used.name
                        )),
                        Some(Ok(_)) if rc.distances_from(region) != Some(Ok(row.clone())) => {
                            out.push(format!(
                                "region ConfigMaps {} and {} both list CloudProfile {profile} and disagree on data[{region}]; {} is used",
                                used.name, rc.name, used.name
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
        out
    }

    pub fn region_configs(&self) -> impl Iterator<Item = &RegionConfig> {
        self.region_configs.values()
    }

    // ---- carbon-intensity ConfigMaps

    /// Stores an exporter ConfigMap (any namespace), parsed once; malformed content is kept as
    /// an error for the locations it served.
    pub fn upsert_carbon_config_map(&mut self, cm: &ConfigMap) {
        self.carbon.upsert(cm);
    }

    /// Records that an exporter ConfigMap was deleted at `now`. Its data keeps counting for the
    /// priority's grace period, because the exporter deletes and recreates it on every refresh.
    pub fn remove_carbon_config_map(&mut self, namespace: &str, name: &str, now: DateTime<Utc>) {
        self.carbon.remove(namespace, name, now);
    }

    pub fn carbon_sources(&self) -> &CarbonSources {
        &self.carbon
    }
}
