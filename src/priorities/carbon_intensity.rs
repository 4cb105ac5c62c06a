use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::TimeDelta;
use serde::Deserialize;

use crate::carbon::{CarbonSettings, Scale, read_points_file};
use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::snapshot::{MAX_REMOVED_RETENTION, Snapshot};

use super::framework::{Detail, Details, Priority};
use crate::plugin::{ClusterData, GREATER_THAN_ZERO, parse_args};

/// The config name.
pub const NAME: &str = "CarbonIntensity";

/// Arguments that build it, for the generated profiles of the tests.
pub const EXAMPLE: &str = "{pointsFile: example/carbon-forecast.json, regionLocations: {eu-west-1: IE, eu-central-1: DE}}";
/// Longest accepted horizon: forecasts rarely reach further.
const MAX_HORIZON: TimeDelta = TimeDelta::days(7);
/// The largest carbon intensity an argument takes, gCO2eq/kWh (the dirtiest grids are near 1,000).
const MAX_INTENSITY: f64 = 100_000.0;

/// Lower expected grid carbon intensity scores higher, on an absolute scale. A preference, never
/// a filter: a seed without usable data scores exactly 50, neither rewarded nor punished.
pub struct CarbonIntensity {
    settings: CarbonSettings,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    regions: BTreeMap<String, f64>,
    points_file: Option<String>,
    config_map_key: Option<String>,
    location_label: Option<String>,
    region_locations: BTreeMap<String, String>,
    #[serde(deserialize_with = "crate::go_duration::serde::option")]
    horizon: Option<Duration>,
    #[serde(deserialize_with = "crate::go_duration::serde::option")]
    max_staleness: Option<Duration>,
    #[serde(deserialize_with = "crate::go_duration::serde::option")]
    removal_grace_period: Option<Duration>,
    scale: Option<ScaleArgs>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ScaleArgs {
    best: f64,
    worst: f64,
}

impl Default for ScaleArgs {
    fn default() -> Self {
        let s = Scale::default();
        ScaleArgs {
            best: s.best,
            worst: s.worst,
        }
    }
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    Ok(Box::new(CarbonIntensity::from_args(args, path)?))
}

impl CarbonIntensity {
    pub fn new(settings: CarbonSettings) -> Self {
        CarbonIntensity { settings }
    }

    /// Parses and validates `args` (reading `pointsFile`); every problem carries its path.
    pub fn from_args(args: &serde_json::Value, path: &str) -> Result<Self, Vec<FieldError>> {
        let a: Args = parse_args(args, path)?;
        let mut errors = Vec::new();
        let mut err = |field: &str, msg: String| {
            errors.push(FieldError::new(format!("{path}.{field}"), msg));
        };
        let mut s = CarbonSettings::default();

        for (region, v) in &a.regions {
            if !(v.is_finite() && (0.0..=MAX_INTENSITY).contains(v)) {
                err(
                    &format!("regions.{region}"),
                    format!("must be a number of gCO2eq/kWh from 0 to {MAX_INTENSITY}, got {v}"),
                );
            }
        }
        s.static_table = a.regions;

        if let Some(key) = a.config_map_key {
            let valid = !key.is_empty()
                && key.len() <= 253
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !valid {
                err(
                    "configMapKey",
                    format!("{key:?} is not a valid ConfigMap key (alphanumerics, '-', '_', '.')"),
                );
            }
            s.config_map_key = key;
        }
        if let Some(label) = a.location_label {
            if label.trim().is_empty() {
                err("locationLabel", "must not be empty".into());
            }
            s.location_label = label;
        }
        for (region, location) in &a.region_locations {
            if location.trim().is_empty() {
                err(
                    &format!("regionLocations.{region}"),
                    "must not be empty".into(),
                );
            }
        }
        s.region_locations = a.region_locations;

        let delta = |d: Duration| TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX);
        if let Some(h) = a.horizon.map(delta) {
            if h <= TimeDelta::zero() {
                err("horizon", GREATER_THAN_ZERO.into());
            } else if h > MAX_HORIZON {
                err(
                    "horizon",
                    format!("must be at most {}h", MAX_HORIZON.num_hours()),
                );
            }
            s.horizon = h;
        }
        if let Some(m) = a.max_staleness.map(delta) {
            if m <= TimeDelta::zero() {
                err("maxStaleness", GREATER_THAN_ZERO.into());
            }
            s.max_staleness = Some(m);
        }
        if let Some(g) = a.removal_grace_period.map(delta) {
            if g > MAX_REMOVED_RETENTION {
                err(
                    "removalGracePeriod",
                    format!("must be at most {}h", MAX_REMOVED_RETENTION.num_hours()),
                );
            }
            s.removal_grace = g;
        }
        let scale = a.scale.unwrap_or_default();
        for (field, v) in [("scale.best", scale.best), ("scale.worst", scale.worst)] {
            if !(v.is_finite() && (0.0..=MAX_INTENSITY).contains(&v)) {
                err(
                    field,
                    format!("must be a number of gCO2eq/kWh from 0 to {MAX_INTENSITY}, got {v}"),
                );
            }
        }
        if scale.worst <= scale.best {
            err(
                "scale.worst",
                format!(
                    "must be greater than scale.best ({} <= {})",
                    scale.worst, scale.best
                ),
            );
        }
        s.scale = Scale {
            best: scale.best,
            worst: scale.worst,
        };
        if let Some(file) = a.points_file {
            if file.trim().is_empty() {
                err("pointsFile", "must not be empty".into());
            } else {
                match read_points_file(Path::new(&file)) {
                    Ok(f) => s.points_file = Some((file, f)),
                    Err(e) => err("pointsFile", e.to_string()),
                }
            }
        }
        if errors.is_empty() {
            Ok(CarbonIntensity { settings: s })
        } else {
            Err(errors)
        }
    }

    pub fn settings(&self) -> &CarbonSettings {
        &self.settings
    }
}

impl Priority for CarbonIntensity {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Assessed once per (location, region) among the seeds.
    fn raw(
        &self,
        cx: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        mut details: Details<'_>,
    ) -> Vec<f64> {
        let sources = snap.carbon_sources();
        let cols = snap.columns();
        let recording = details.on();
        let mut seen: BTreeMap<(&str, &str), (f64, Detail)> = BTreeMap::new();
        positions
            .iter()
            .map(|&i| {
                let seed = cols.info(i);
                let location = self.settings.location_of(seed);
                let (value, detail) =
                    seen.entry((location, seed.region.as_str()))
                        .or_insert_with(|| {
                            let a = self
                                .settings
                                .assess(location, &seed.region, sources, cx.now);
                            let detail = if recording {
                                a.detail(location, self.settings.horizon).into()
                            } else {
                                Detail::default()
                            };
                            (a.value().unwrap_or(f64::NAN), detail)
                        });
                details.put(|| detail.clone());
                *value
            })
            .collect()
    }

    /// The absolute scale; a raw value of NaN (no usable data) scores exactly 50.
    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        values
            .iter()
            .map(|&v| self.settings.scale.score(v))
            .collect()
    }

    /// The labelled carbon-intensity ConfigMaps, read with this priority's settings.
    fn cluster_data(&self) -> Vec<ClusterData> {
        vec![ClusterData::CarbonConfigMaps(self.settings.clone())]
    }
}

#[cfg(test)]
mod tests;
