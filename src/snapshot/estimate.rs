//! The latency from a shoot's region to a seed's region, from the first source that knows it:
//! a configured matrix, the region ConfigMap of the shoot's CloudProfile, the same region
//! (0 ms), then an estimate from the region catalogue's great-circle distance. `LatencyDistance`
//! scores with it and `MaxLatency` filters with it, so both see the same number.

use std::fmt;
use std::sync::Arc;

use super::latency::{LatencyBasis, LatencyTable, Row};
use super::{SeedInfo, Snapshot};
use crate::regions::{Origin, Site, estimate_ms};

/// A latency and where it came from.
#[derive(Clone, Debug)]
pub enum Estimate {
    /// From a matrix or region ConfigMap (`source` names it).
    Listed {
        ms: f64,
        basis: LatencyBasis,
        via: Vec<String>,
        source: Arc<str>,
    },
    SameRegion,
    /// From the great-circle distance between the two regions' metro areas.
    Distance {
        ms: f64,
        km: f64,
        from: Arc<Site>,
        to: Arc<Site>,
    },
    /// No source knows the pair.
    Unknown,
}

impl Estimate {
    pub fn ms(&self) -> Option<f64> {
        match self {
            Estimate::Listed { ms, .. } | Estimate::Distance { ms, .. } => Some(*ms),
            Estimate::SameRegion => Some(0.0),
            Estimate::Unknown => None,
        }
    }
}

/// Milliseconds with at most one decimal.
pub fn round_ms(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

impl fmt::Display for Estimate {
    /// `12 ms, measured (latency matrix)`, `≈ 11.2 ms, estimated from distance Zurich →
    /// Amsterdam (≈ 610 km), region catalogue`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Estimate::Listed {
                ms,
                basis: LatencyBasis::SameRegion,
                ..
            } => write!(
                f,
                "{} ms, {}",
                round_ms(*ms),
                LatencyBasis::SameRegion.as_str()
            ),
            Estimate::Listed {
                ms,
                basis: LatencyBasis::Path,
                via,
                source,
            } => write!(
                f,
                "{} ms, {} via {} ({source})",
                round_ms(*ms),
                LatencyBasis::Path.as_str(),
                via.join(", ")
            ),
            Estimate::Listed {
                ms, basis, source, ..
            } => write!(f, "{} ms, {} ({source})", round_ms(*ms), basis.as_str()),
            Estimate::SameRegion => f.write_str("0 ms, same region"),
            Estimate::Distance { ms, km, from, to } => {
                let origin =
                    if from.origin == Origin::Configuration || to.origin == Origin::Configuration {
                        Origin::Configuration
                    } else {
                        Origin::Catalogue
                    };
                write!(
                    f,
                    "≈ {} ms, estimated from distance {} → {} (≈ {} km), {origin}",
                    round_ms(*ms),
                    from.city,
                    to.city,
                    (km / 10.0).round() * 10.0
                )
            }
            Estimate::Unknown => f.write_str("no latency known"),
        }
    }
}

/// The sources an estimator consults, fixed when the profile is built.
#[derive(Clone, Debug)]
pub struct LatencySources {
    pub matrix: Option<LatencyTable>,
    pub use_region_config_maps: bool,
}

/// One shoot's view of the sources: its rows, looked up once per decision.
pub struct ShootLatencies<'a> {
    matrix_row: Option<Row<'a>>,
    cm_row: Option<(Row<'a>, Arc<str>)>,
    /// `; data[r] of region ConfigMap x ignored: …` when the shoot's row is malformed.
    pub ignored_row: Arc<str>,
    region: &'a str,
    provider: &'a str,
    site: Option<Arc<Site>>,
    snap: &'a Snapshot,
}

impl LatencySources {
    /// The shoot's rows: `region` and `provider` of the shoot, `cloud_profile` the CloudProfile
    /// region ConfigMaps list.
    pub fn for_shoot<'a>(
        &'a self,
        region: &'a str,
        provider: &'a str,
        cloud_profile: &str,
        snap: &'a Snapshot,
    ) -> ShootLatencies<'a> {
        let region_config = self
            .use_region_config_maps
            .then(|| snap.region_config_for(cloud_profile))
            .flatten();
        let cm_row = region_config.and_then(|rc| {
            rc.latency.row(region).map(|row| {
                (
                    row,
                    Arc::<str>::from(format!("region ConfigMap {}", rc.name)),
                )
            })
        });
        let ignored_row: Arc<str> = region_config
            .and_then(|rc| match rc.rows.get(region) {
                Some(Err(e)) => Some(format!(
                    "; data[{region}] of region ConfigMap {} ignored: {e}",
                    rc.name
                )),
                _ => None,
            })
            .unwrap_or_default()
            .into();
        ShootLatencies {
            matrix_row: self.matrix.as_ref().and_then(|t| t.row(region)),
            cm_row,
            ignored_row,
            region,
            provider,
            site: snap.regions().locate(provider, region),
            snap,
        }
    }
}

impl ShootLatencies<'_> {
    /// The latency to a seed, from the first source that knows it.
    pub fn to(&self, seed: &SeedInfo) -> Estimate {
        let listed = |row: &Row, source: &Arc<str>| {
            row.to(&seed.region).ok().map(|l| Estimate::Listed {
                ms: l.ms,
                basis: l.basis,
                via: l.via.iter().map(|s| s.to_string()).collect(),
                source: Arc::clone(source),
            })
        };
        if let Some(row) = &self.matrix_row
            && let Some(e) = listed(row, &MATRIX)
        {
            return e;
        }
        if let Some((row, source)) = &self.cm_row
            && let Some(e) = listed(row, source)
        {
            return e;
        }
        let seed_site = || self.snap.regions().locate(&seed.provider, &seed.region);
        if seed.region == self.region {
            // Providers reuse names for different places; only then is the catalogue asked.
            let elsewhere = seed.provider != self.provider
                && matches!((&self.site, seed_site()), (Some(a), Some(b)) if a.city != b.city);
            if !elsewhere {
                return Estimate::SameRegion;
            }
        }
        match (&self.site, seed_site()) {
            (Some(from), Some(to)) => {
                let km = from.distance_km(&to);
                Estimate::Distance {
                    ms: estimate_ms(km),
                    km,
                    from: Arc::clone(from),
                    to,
                }
            }
            _ => Estimate::Unknown,
        }
    }
}

static MATRIX: std::sync::LazyLock<Arc<str>> =
    std::sync::LazyLock::new(|| Arc::from("latency matrix"));
