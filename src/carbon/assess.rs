//! From sources to one expected intensity per location, and what metrics and logs need.
//!
//! Sources are consulted in a fixed order and the first that knows a location decides: exporter
//! ConfigMaps, then the points file, then the static table. A stale or malformed ConfigMap is
//! therefore visible as a neutral score instead of being silently replaced by a fallback.

use chrono::{DateTime, TimeDelta, Utc};

use super::settings::{CarbonSettings, NEUTRAL_SCORE};
use crate::forecast::{Coverage, Forecast, format_age};
use crate::snapshot::{CarbonSource, CarbonSources};

/// Where a value came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    ConfigMap {
        /// `namespace/name`
        name: String,
        /// `now` minus the heartbeat; `None` without a heartbeat.
        age: Option<TimeDelta>,
        /// How long ago the ConfigMap was deleted, while in its grace period.
        removed: Option<TimeDelta>,
    },
    PointsFile {
        path: String,
    },
    StaticTable {
        /// The table key that matched (the location or the seed's region).
        key: String,
    },
}

impl Origin {
    fn describe(&self) -> String {
        match self {
            Origin::ConfigMap { age, removed, .. } => {
                let mut s = match age {
                    Some(a) => format!("data age {}", format_age(*a)),
                    None => "data age unknown".into(),
                };
                if let Some(r) = removed {
                    s.push_str(&format!(", ConfigMap deleted {} ago", format_age(*r)));
                }
                s
            }
            Origin::PointsFile { .. } => "points file".into(),
            Origin::StaticTable { .. } => "static table".into(),
        }
    }

    pub(super) fn age(&self) -> Option<TimeDelta> {
        match self {
            Origin::ConfigMap { age, .. } => *age,
            _ => None,
        }
    }
}

/// How the expected value was obtained.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// Time-weighted mean of the points over the whole horizon.
    HorizonMean,
    /// The forecast covers only `covered` of the horizon: the current point alone.
    CurrentPoint { covered: TimeDelta },
    /// Every point has ended `ago`, within the staleness limit: the last point.
    LastPoint { ago: TimeDelta },
    /// A constant from the static table.
    Static,
}

impl From<Coverage> for Basis {
    fn from(c: Coverage) -> Self {
        match c {
            Coverage::Horizon => Basis::HorizonMean,
            Coverage::CurrentPoint { covered } => Basis::CurrentPoint { covered },
            Coverage::LastPoint { ago } => Basis::LastPoint { ago },
        }
    }
}

/// Why a location scores neutral.
#[derive(Clone, Debug, PartialEq)]
pub enum Neutral {
    NoForecast {
        /// `(namespace/name, error)` of ConfigMaps whose payload never parsed: they serve no
        /// known location, but may have been meant to serve this one.
        unreadable: Vec<(String, String)>,
    },
    Stale {
        origin: Origin,
        /// `now` minus the end of the last point.
        ended: TimeDelta,
    },
    Malformed {
        /// `namespace/name` of the ConfigMap.
        config_map: String,
        error: String,
    },
    /// `now` lies before the first point (`starts_in`) or in a gap between points.
    NotCovered {
        origin: Origin,
        starts_in: Option<TimeDelta>,
    },
}

/// The expected intensity of one location at one instant, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum Assessment {
    Expected {
        value: f64,
        basis: Basis,
        origin: Origin,
    },
    Neutral(Neutral),
}

impl Assessment {
    /// The expected gCO2eq/kWh, `None` when neutral.
    pub fn value(&self) -> Option<f64> {
        match self {
            Assessment::Expected { value, .. } => Some(*value),
            Assessment::Neutral(_) => None,
        }
    }

    /// The explanation: `212 gCO2eq/kWh (mean over 24h, data age 7m)`,
    /// `neutral: no forecast for location "eu-west-1"`.
    pub fn detail(&self, location: &str, horizon: TimeDelta) -> String {
        match self {
            Assessment::Expected {
                value,
                basis,
                origin,
            } => {
                let how = match basis {
                    Basis::HorizonMean => format!("mean over {}", format_horizon(horizon)),
                    Basis::CurrentPoint { covered } => format!(
                        "current point: forecast covers {} of {}",
                        format_age(*covered),
                        format_horizon(horizon)
                    ),
                    Basis::LastPoint { ago } => {
                        format!("last point: forecast ended {} ago", format_age(*ago))
                    }
                    Basis::Static => match origin {
                        Origin::StaticTable { key } if key != location => {
                            return format!("{value:.0} gCO2eq/kWh (static table, region {key:?})");
                        }
                        _ => return format!("{value:.0} gCO2eq/kWh (static table)"),
                    },
                };
                format!("{value:.0} gCO2eq/kWh ({how}, {})", origin.describe())
            }
            Assessment::Neutral(n) => match n {
                Neutral::NoForecast { unreadable } => {
                    let mut d = format!("neutral: no forecast for location {location:?}");
                    for (config_map, error) in unreadable {
                        d.push_str(&format!(
                            "; ConfigMap {config_map} serves no location: {error}"
                        ));
                    }
                    d
                }
                Neutral::Stale { origin, ended } => {
                    let age = origin
                        .age()
                        .map(|a| format!(", data age {}", format_age(a)))
                        .unwrap_or_default();
                    let when = if *ended >= TimeDelta::zero() {
                        format!("last point ended {} ago", format_age(*ended))
                    } else {
                        format!("last point ends in {}", format_age(-*ended))
                    };
                    format!("neutral: forecast for location {location:?} is stale ({when}{age})")
                }
                Neutral::Malformed { config_map, error } => format!(
                    "neutral: forecast for location {location:?} is malformed: ConfigMap {config_map}: {error}"
                ),
                Neutral::NotCovered { starts_in, .. } => match starts_in {
                    Some(d) => format!(
                        "neutral: no forecast point for location {location:?} covers now (forecast starts in {})",
                        format_age(*d)
                    ),
                    None => format!(
                        "neutral: no forecast point for location {location:?} covers now (gap between points)"
                    ),
                },
            },
        }
    }
}

/// `24h`, `36h`, `90m`: whole hours stay in hours, as operators configure them.
fn format_horizon(d: TimeDelta) -> String {
    if d.num_seconds() > 0 && d.num_seconds() % 3600 == 0 {
        format!("{}h", d.num_hours())
    } else {
        format_age(d)
    }
}

impl CarbonSettings {
    /// Normalised score: the absolute scale, or exactly `NEUTRAL_SCORE`.
    pub fn score(&self, a: &Assessment) -> f64 {
        match a.value() {
            Some(v) => self.scale.score(v),
            None => NEUTRAL_SCORE,
        }
    }

    /// The expected intensity of `location` at `now`. `region` is the seed's region, a second
    /// key for the static table.
    pub fn assess(
        &self,
        location: &str,
        region: &str,
        sources: &CarbonSources,
        now: DateTime<Utc>,
    ) -> Assessment {
        if let Some(src) = self.pick_source(location, sources, now) {
            let origin = Origin::ConfigMap {
                name: src.data.name.clone(),
                age: src
                    .data
                    .heartbeat()
                    .map(|h| (now - h).max(TimeDelta::zero())),
                removed: src.removed_at.map(|at| (now - at).max(TimeDelta::zero())),
            };
            return match src.data.forecasts(&self.config_map_key) {
                Err(e) => Assessment::Neutral(Neutral::Malformed {
                    config_map: src.data.name.clone(),
                    error: e.to_string(),
                }),
                Ok(f) => match f.get(location) {
                    Some(fc) => self.evaluate(fc, src.data.heartbeat(), origin, now),
                    None => Assessment::Neutral(Neutral::NoForecast {
                        unreadable: Vec::new(),
                    }),
                },
            };
        }
        if let Some((path, forecasts)) = &self.points_file
            && let Some(fc) = forecasts.get(location)
        {
            let origin = Origin::PointsFile { path: path.clone() };
            return self.evaluate(fc, None, origin, now);
        }
        for key in [location, region] {
            if let Some(v) = self.static_table.get(key) {
                return Assessment::Expected {
                    value: *v,
                    basis: Basis::Static,
                    origin: Origin::StaticTable {
                        key: key.to_string(),
                    },
                };
            }
        }
        Assessment::Neutral(Neutral::NoForecast {
            unreadable: self.unreadable(sources, now),
        })
    }

    /// ConfigMaps whose payload has never parsed (so they serve no known location), not deleted
    /// longer than the grace period ago, ordered by namespace/name.
    fn unreadable(&self, sources: &CarbonSources, now: DateTime<Utc>) -> Vec<(String, String)> {
        sources
            .iter()
            .filter(|s| s.locations.is_empty())
            .filter(|s| s.removed_at.is_none_or(|at| now - at <= self.removal_grace))
            .filter_map(|s| match s.data.forecasts(&self.config_map_key) {
                Err(e) => Some((s.data.name.clone(), e.to_string())),
                Ok(_) => None,
            })
            .collect()
    }

    /// The ConfigMap that decides for a location: among those serving it under `configMapKey`
    /// (or malformed there) and not deleted longer than the grace period ago, existing ones
    /// before deleted ones, then the newest heartbeat, then namespace/name.
    fn pick_source<'a>(
        &self,
        location: &str,
        sources: &'a CarbonSources,
        now: DateTime<Utc>,
    ) -> Option<&'a CarbonSource> {
        sources
            .for_location(location)
            .filter(|s| s.removed_at.is_none_or(|at| now - at <= self.removal_grace))
            .filter(|s| match s.data.forecasts(&self.config_map_key) {
                Ok(f) => f.contains_key(location),
                Err(_) => true,
            })
            .min_by(|a, b| {
                a.removed_at
                    .is_some()
                    .cmp(&b.removed_at.is_some())
                    .then(b.data.heartbeat().cmp(&a.data.heartbeat()))
            })
    }

    fn is_stale(
        &self,
        fc: &Forecast,
        heartbeat: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> bool {
        match self.max_staleness {
            Some(max) => heartbeat.is_some_and(|h| now - h > max) || fc.ended_before(now, max),
            None => fc.ended_before(now, fc.default_margin()),
        }
    }

    fn evaluate(
        &self,
        fc: &Forecast,
        heartbeat: Option<DateTime<Utc>>,
        origin: Origin,
        now: DateTime<Utc>,
    ) -> Assessment {
        if self.is_stale(fc, heartbeat, now) {
            return Assessment::Neutral(Neutral::Stale {
                origin,
                ended: now - fc.last().end,
            });
        }
        match fc.expected(now, self.horizon) {
            Some((value, coverage)) => Assessment::Expected {
                value,
                basis: coverage.into(),
                origin,
            },
            None => {
                let first = fc.first_start();
                Assessment::Neutral(Neutral::NotCovered {
                    origin,
                    starts_in: (now < first).then(|| first - now),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests;
