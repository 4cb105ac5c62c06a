//! Priorities: score the seeds that passed every filter.
//!
//! A [`Priority`] computes a raw value per seed (with a short human detail), a separate
//! [`Priority::normalize`] maps raw values onto 0..=100, and the profile multiplies by the
//! configured weight. Adding a priority = one file + one line in [`REGISTRY`].

mod capacity_pressure;
mod carbon_intensity;
mod detail;
mod latency_distance;
mod project_anti_affinity;
mod resource_fit;
mod shoot_count;

pub use capacity_pressure::CapacityPressure;
pub use carbon_intensity::CarbonIntensity;
pub use detail::Detail;
pub use latency_distance::LatencyDistance;
pub(crate) use latency_distance::sources_from_args;
pub use project_anti_affinity::{ProjectAntiAffinity, Topology};
pub use resource_fit::{FitStrategy, RequestRule, ResourceFit};
pub use shoot_count::ShootCount;

use serde::de::DeserializeOwned;

use crate::config::{FieldError, PriorityConfig};
use crate::context::ShootContext;
use crate::snapshot::{SeedInfo, SeedSet, Snapshot};

/// The best normalised score.
pub const MAX_SCORE: f64 = 100.0;

/// A raw value and what it means, for explanations (`12 shoots`, `38 ms (measured)`).
#[derive(Clone, Debug, PartialEq)]
pub struct RawScore {
    pub value: f64,
    pub detail: Detail,
}

pub trait Priority: Send + Sync {
    fn name(&self) -> &'static str;
    /// Raw values for all candidate seeds, in order. Set-level so that per-shoot work (a latency
    /// row, project counts per region) is done once per decision.
    fn raw(&self, cx: &ShootContext, seeds: &[&SeedInfo], snap: &Snapshot) -> Vec<RawScore>;
    /// The same raw values without details, from the snapshot's per-seed columns, for a
    /// decision that shows only the winner's details. `None`: only [`Priority::raw`] has them.
    fn values(&self, _cx: &ShootContext, _set: SeedSet, _snap: &Snapshot) -> Option<Vec<f64>> {
        None
    }
    /// Maps raw values onto 0..=MAX_SCORE, higher is better.
    fn normalize(&self, raw: &[RawScore]) -> Vec<f64>;
}

type Builder = fn(&serde_json::Value, &str) -> Result<Box<dyn Priority>, Vec<FieldError>>;

/// Every priority by its config name.
pub const REGISTRY: &[(&str, Builder)] = &[
    ("ShootCount", shoot_count::build),
    ("LatencyDistance", latency_distance::build),
    ("ProjectAntiAffinity", project_anti_affinity::build),
    ("ResourceFit", resource_fit::build),
    (carbon_intensity::NAME, carbon_intensity::build),
    (capacity_pressure::NAME, capacity_pressure::build),
];

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}

/// Builds a configured priority; errors carry field paths under `path`.
pub fn build(cfg: &PriorityConfig, path: &str) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    let Some((_, builder)) = REGISTRY.iter().find(|(n, _)| *n == cfg.name) else {
        return Err(vec![FieldError::new(
            format!("{path}.name"),
            format!(
                "unsupported value {:?}: supported values: {}",
                cfg.name,
                names()
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )]);
    };
    builder(&cfg.args, &format!("{path}.args"))
}

/// Parses a priority's `args` (absent = defaults), rejecting unknown keys with their path.
pub fn parse_args<T: DeserializeOwned + Default>(
    args: &serde_json::Value,
    path: &str,
) -> Result<T, Vec<FieldError>> {
    if args.is_null() {
        return Ok(T::default());
    }
    serde_path_to_error::deserialize(args.clone()).map_err(|e| {
        let inner = e.path().to_string();
        let p = if inner == "." {
            path.to_string()
        } else {
            format!("{path}.{inner}")
        };
        vec![FieldError::new(p, e.into_inner().to_string())]
    })
}

/// Linear map where the smallest raw value scores 100 and the largest 0; all equal -> 100.
pub fn lower_is_better(raw: &[RawScore]) -> Vec<f64> {
    let (min, max) = raw
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
            (lo.min(r.value), hi.max(r.value))
        });
    raw.iter()
        .map(|r| {
            if max > min {
                MAX_SCORE * (max - r.value) / (max - min)
            } else {
                MAX_SCORE
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod testing {
    use super::Priority;
    use crate::api::Shoot;
    use crate::context::ShootContext;
    use crate::snapshot::{SeedInfo, Snapshot};

    /// Normalised score and raw detail of every seed in the snapshot, in seed order.
    pub fn evaluate(p: &dyn Priority, shoot: &Shoot, snap: &Snapshot) -> Vec<(f64, String)> {
        let cx = ShootContext::new(shoot, snap, chrono::Utc::now()).unwrap();
        let infos: Vec<&SeedInfo> = snap.seeds().collect();
        let raw = p.raw(&cx, &infos, snap);
        p.normalize(&raw)
            .into_iter()
            .zip(raw.into_iter().map(|r| r.detail.to_string()))
            .collect()
    }

    /// Scores rounded to three decimals, for exact comparisons.
    pub fn rounded(got: &[(f64, String)]) -> Vec<f64> {
        got.iter()
            .map(|g| (g.0 * 1000.0).round() / 1000.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(values: &[f64]) -> Vec<RawScore> {
        values
            .iter()
            .map(|v| RawScore {
                value: *v,
                detail: Detail::default(),
            })
            .collect()
    }

    #[test]
    fn lower_is_better_edges() {
        assert_eq!(
            lower_is_better(&raw(&[0.0, 5.0, 10.0])),
            vec![100.0, 50.0, 0.0]
        );
        assert_eq!(
            lower_is_better(&raw(&[3.0, 3.0])),
            vec![100.0, 100.0],
            "all equal"
        );
        assert_eq!(lower_is_better(&raw(&[7.0])), vec![100.0], "one seed");
        assert!(lower_is_better(&raw(&[])).is_empty());
    }

    #[test]
    fn unknown_priority_name_lists_supported_values() {
        let cfg = PriorityConfig {
            name: "Nope".into(),
            weight: 1.0,
            args: serde_json::Value::Null,
        };
        let errs = build(&cfg, "schedulers.shoot.priorities[0]").err().unwrap();
        assert_eq!(errs[0].path, "schedulers.shoot.priorities[0].name");
        assert!(
            errs[0].message.contains("\"ShootCount\""),
            "{}",
            errs[0].message
        );
    }
}
