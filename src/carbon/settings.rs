//! What `CarbonIntensity` is configured with, validated, and where a seed is.

use std::collections::BTreeMap;

use chrono::TimeDelta;

use crate::forecast::Forecasts;
use crate::snapshot::SeedInfo;

/// Score of a seed whose location has no usable data: neither rewarded nor punished.
pub const NEUTRAL_SCORE: f64 = 50.0;
pub const DEFAULT_CONFIG_MAP_KEY: &str = "data";
pub const DEFAULT_LOCATION_LABEL: &str = "carbon.gardener.cloud/location";
pub const DEFAULT_HORIZON: TimeDelta = TimeDelta::hours(24);
/// Long enough for the exporter's delete-and-recreate, short enough that a retired exporter's
/// data stops counting soon.
pub const DEFAULT_REMOVAL_GRACE: TimeDelta = TimeDelta::minutes(5);

/// The absolute scale intensities are mapped onto: `best` scores 100, `worst` 0, linear between
/// and clamped outside. Absolute, so that a clean seed keeps its points among clean seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub best: f64,
    pub worst: f64,
}

impl Default for Scale {
    fn default() -> Self {
        Scale {
            best: 0.0,
            worst: 800.0,
        }
    }
}

impl Scale {
    pub fn score(&self, intensity: f64) -> f64 {
        if !intensity.is_finite() {
            return NEUTRAL_SCORE;
        }
        (100.0 * (self.worst - intensity) / (self.worst - self.best)).clamp(0.0, 100.0)
    }
}

/// Everything `CarbonIntensity` is configured with, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct CarbonSettings {
    /// location or seed region -> gCO2eq/kWh
    pub static_table: BTreeMap<String, f64>,
    /// The points file as configured, and its forecasts.
    pub points_file: Option<(String, Forecasts)>,
    pub config_map_key: String,
    pub location_label: String,
    /// seed region -> location
    pub region_locations: BTreeMap<String, String>,
    pub horizon: TimeDelta,
    /// Replaces the default staleness rule (two point durations past the last point).
    pub max_staleness: Option<TimeDelta>,
    pub removal_grace: TimeDelta,
    pub scale: Scale,
}

impl Default for CarbonSettings {
    fn default() -> Self {
        CarbonSettings {
            static_table: BTreeMap::new(),
            points_file: None,
            config_map_key: DEFAULT_CONFIG_MAP_KEY.into(),
            location_label: DEFAULT_LOCATION_LABEL.into(),
            region_locations: BTreeMap::new(),
            horizon: DEFAULT_HORIZON,
            max_staleness: None,
            removal_grace: DEFAULT_REMOVAL_GRACE,
            scale: Scale::default(),
        }
    }
}

impl CarbonSettings {
    /// The seed's location: its `locationLabel` label, else `regionLocations[region]`, else its
    /// region.
    pub fn location_of<'a>(&'a self, seed: &'a SeedInfo) -> &'a str {
        if let Some(l) = seed
            .labels
            .get(&self.location_label)
            .filter(|l| !l.trim().is_empty())
        {
            return l;
        }
        self.region_locations
            .get(&seed.region)
            .map(String::as_str)
            .unwrap_or(&seed.region)
    }
}
