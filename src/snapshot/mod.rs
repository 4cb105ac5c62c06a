//! The scheduler's view of the landscape: compact seeds, cloud profiles, projects, region
//! distances and an index of seed usage.
//!
//! Every object is parsed once when it changes (`upsert_*`/`remove_*`), so a decision costs
//! O(seeds) and never scans shoots. The controller feeds the snapshot from watches; `simulate`
//! feeds it from manifest files; both then run the same decision pipeline ([`crate::schedule`]).

mod carbon;
mod cloud_profile;
pub mod columns;
mod config_maps;
pub mod estimate;
pub mod latency;
mod projects;
mod region_config;
mod seed;
mod selector;
mod usage;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

pub use carbon::{CarbonSource, CarbonSources, MAX_REMOVED_RETENTION, is_carbon_config_map};
pub use cloud_profile::CloudProfileInfo;
pub use columns::SeedColumns;
pub use config_maps::ParsedConfigMap;
pub use region_config::{RegionConfig, parse_region_distances};
pub use seed::{SeedInfo, SeedNets, Unusable, ZoneMode};
pub use selector::{compile_selector, selector_matches};
pub use usage::{DemandClass, SeedUsage, Usage};

use crate::regions::Regions;

use crate::api::{CloudProfile, NamespacedCloudProfile, Seed, Shoot};

/// Namespace holding the region ConfigMaps (Gardener's garden namespace).
pub const GARDEN_NAMESPACE: &str = "garden";

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
    region_configs: BTreeMap<(String, String), Arc<RegionConfig>>,
    /// Projects carrying the residency opt-out annotation.
    residency_opt_outs: BTreeSet<String>,
    /// The region catalogue with the operator's entries.
    regions: Regions,
    carbon: CarbonSources,
    usage: Usage,
    /// The seeds in flat arrays, kept in step with `seeds` and `usage` once built. Built on
    /// first use after a seed or CloudProfile comes or goes, so that loading N seeds costs one
    /// build, not N.
    columns: OnceLock<SeedColumns>,
    /// How many times the columns were built.
    column_builds: columns::BuildCount,
}

impl Snapshot {
    pub fn new() -> Self {
        Self::default()
    }

    // ---- seeds

    pub fn upsert_seed(&mut self, seed: &Seed) {
        self.upsert_seed_info(Arc::new(SeedInfo::from_seed(seed)));
    }

    /// Stores a seed compiled beforehand ([`SeedInfo::from_seed`]): what it costs to read a seed
    /// is paid before, not here.
    pub fn upsert_seed_info(&mut self, info: Arc<SeedInfo>) {
        self.ungroup(&info.name);
        self.seed_groups
            .entry(info.provider.clone())
            .or_default()
            .entry(info.region.clone())
            .or_default()
            .insert(Arc::clone(&info.name), Arc::clone(&info));
        let in_place = self.columns.get_mut().is_some_and(|c| c.replace(&info));
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

    /// Drops the flat arrays; [`Snapshot::columns`] builds them again when next asked.
    fn rebuild_columns(&mut self) {
        self.columns = OnceLock::new();
    }

    fn build_columns(&self) -> SeedColumns {
        SeedColumns::build(self.seeds.values(), &self.usage)
    }

    /// The seeds in flat arrays, positions in name order (as [`Snapshot::seeds`]).
    pub fn columns(&self) -> &SeedColumns {
        self.columns.get_or_init(|| {
            self.column_builds.add();
            self.build_columns()
        })
    }

    /// How many times [`Snapshot::columns`] has built the flat arrays so far: once per seed or
    /// CloudProfile that came or went before a decision, never once per seed loaded.
    pub fn column_builds(&self) -> usize {
        self.column_builds.get()
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
        let Some(columns) = self.columns.get_mut() else {
            return;
        };
        for seed in seeds {
            columns.refresh_usage(seed, &self.usage);
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

    // ---- the region catalogue

    /// Replaces the region catalogue (the compiled-in one with the operator's entries).
    pub fn set_regions(&mut self, regions: Regions) {
        self.regions = regions;
    }

    pub fn regions(&self) -> &Regions {
        &self.regions
    }
}
