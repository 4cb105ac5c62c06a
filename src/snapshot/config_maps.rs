//! ConfigMaps the snapshot keeps: region distances (in `garden`) and carbon-intensity forecasts.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use std::sync::Arc;

use super::{CarbonSources, RegionConfig, Snapshot, is_carbon_config_map};
use crate::api::ConfigMap;
use crate::forecast::ExporterData;

/// A ConfigMap read for the snapshot, without it: a region ConfigMap's rows and latency table,
/// a carbon-intensity forecast's payload.
#[derive(Debug)]
pub struct ParsedConfigMap {
    key: (String, String),
    /// a forecast's payload and the locations it serves
    carbon: Option<(ExporterData, BTreeSet<String>)>,
    region: Option<Arc<RegionConfig>>,
}

impl ParsedConfigMap {
    /// Parses any ConfigMap. `previous` is the region ConfigMap stored under the same name: its
    /// latency table is kept when the rows did not change, so that a resync does not redo it.
    pub fn parse(cm: &ConfigMap, previous: Option<&RegionConfig>) -> ParsedConfigMap {
        ParsedConfigMap {
            key: (
                cm.metadata.namespace.clone().unwrap_or_default(),
                cm.metadata.name.clone().unwrap_or_default(),
            ),
            carbon: is_carbon_config_map(cm).then(|| {
                let data = ExporterData::from_config_map(cm);
                let locations = data.locations().cloned().collect();
                (data, locations)
            }),
            region: RegionConfig::parse(cm, previous).map(Arc::new),
        }
    }
}

impl Snapshot {
    /// Accepts any ConfigMap; only those in `garden` labelled as region config are kept, and
    /// carbon-intensity forecasts (see [`Snapshot::upsert_carbon_config_map`]).
    pub fn upsert_config_map(&mut self, cm: &ConfigMap) {
        let previous = self.region_config(
            cm.metadata.namespace.as_deref().unwrap_or_default(),
            cm.metadata.name.as_deref().unwrap_or_default(),
        );
        self.upsert_parsed_config_map(ParsedConfigMap::parse(cm, previous.as_deref()));
    }

    /// Stores a ConfigMap parsed by [`ParsedConfigMap::parse`]: in work that does not grow with
    /// the ConfigMap, so that the controller parses it before taking its cache's lock.
    pub fn upsert_parsed_config_map(&mut self, parsed: ParsedConfigMap) {
        let ParsedConfigMap {
            key,
            carbon,
            region,
        } = parsed;
        match carbon {
            Some((data, locations)) => self.carbon.upsert_parsed(key.clone(), data, locations),
            None => self.carbon.forget(&key.0, &key.1),
        }
        match region {
            Some(rc) => {
                self.region_configs.insert(key, rc);
            }
            None => {
                self.region_configs.remove(&key);
            }
        }
    }

    /// The region ConfigMap stored as `namespace/name`, shared: what [`ParsedConfigMap::parse`]
    /// compares a new version with.
    pub fn region_config(&self, namespace: &str, name: &str) -> Option<Arc<RegionConfig>> {
        self.region_configs
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
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
            .map(|rc| &**rc)
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
            .map(|rc| &**rc)
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
                .map(|rc| &**rc)
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
        self.region_configs.values().map(|rc| &**rc)
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
