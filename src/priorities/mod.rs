//! Priorities: score the seeds that passed every filter.
//!
//! A [`Priority`] computes a raw value per seed over positions in the snapshot's per-seed
//! columns, in one computation that also records each seed's short human detail when asked
//! ([`Details`]: explain mode), a separate [`Priority::normalize`] maps raw values onto 0..=100,
//! and the profile multiplies by the configured weight. Adding a priority = one file + its `mod`
//! line + one line in [`REGISTRY`] (its name, builder and example arguments).
//!
//! [`Priority`]: crate::priorities::Priority
//! [`Details`]: crate::priorities::Details
//! [`Priority::normalize`]: crate::priorities::Priority::normalize
//! [`REGISTRY`]: crate::priorities::REGISTRY

mod capacity_pressure;
mod carbon_intensity;
mod detail;
pub mod framework;
mod latency_distance;
mod project_anti_affinity;
mod resource_fit;
mod shoot_count;
#[cfg(any(test, feature = "test-util"))]
mod test_prefer_label;

pub use capacity_pressure::CapacityPressure;
pub use carbon_intensity::CarbonIntensity;
pub use detail::Detail;
pub use latency_distance::LatencyDistance;
pub use project_anti_affinity::{ProjectAntiAffinity, Topology};
pub use resource_fit::{FitStrategy, RequestRule, ResourceFit};
pub use shoot_count::ShootCount;

pub use framework::{Details, MAX_SCORE, Priority, lower_is_better};

use crate::config::PriorityConfig;
use crate::field_error::FieldError;
pub use crate::plugin::parse_args;
use crate::plugin::unsupported_value;

type Builder = fn(&serde_json::Value, &str) -> Result<Box<dyn Priority>, Vec<FieldError>>;

/// A priority: its config name, its builder and arguments that build it (YAML), from which the
/// tests generate profiles.
type Entry = (&'static str, Builder, &'static str);

/// Every priority by its config name.
pub const REGISTRY: &[Entry] = &[
    (shoot_count::NAME, shoot_count::build, shoot_count::EXAMPLE),
    (
        latency_distance::NAME,
        latency_distance::build,
        latency_distance::EXAMPLE,
    ),
    (
        project_anti_affinity::NAME,
        project_anti_affinity::build,
        project_anti_affinity::EXAMPLE,
    ),
    (
        resource_fit::NAME,
        resource_fit::build,
        resource_fit::EXAMPLE,
    ),
    (
        carbon_intensity::NAME,
        carbon_intensity::build,
        carbon_intensity::EXAMPLE,
    ),
    (
        capacity_pressure::NAME,
        capacity_pressure::build,
        capacity_pressure::EXAMPLE,
    ),
];

/// Priorities for the tests only (the `test-util` feature).
#[cfg(any(test, feature = "test-util"))]
const TEST_ONLY: &[Entry] = &[(
    test_prefer_label::NAME,
    test_prefer_label::build,
    test_prefer_label::EXAMPLE,
)];
#[cfg(not(any(test, feature = "test-util")))]
const TEST_ONLY: &[Entry] = &[];

/// The names operators may configure (the test-only priorities left out).
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, ..)| *n).collect()
}

/// Every priority that can be configured (the test-only ones with `test-util`): its name and
/// example arguments.
pub fn configurable() -> impl Iterator<Item = (&'static str, &'static str)> {
    REGISTRY.iter().chain(TEST_ONLY).map(|(n, _, e)| (*n, *e))
}

/// Builds a configured priority; errors carry field paths under `path`.
pub fn build(cfg: &PriorityConfig, path: &str) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    let Some((_, builder, _)) = REGISTRY
        .iter()
        .chain(TEST_ONLY)
        .find(|(n, ..)| *n == cfg.name)
    else {
        return Err(vec![unsupported_value(
            format!("{path}.name"),
            &cfg.name,
            names(),
        )]);
    };
    builder(&cfg.args, &format!("{path}.args"))
}

#[cfg(test)]
pub(crate) mod testing {
    use super::{Details, Priority};
    use crate::api::Shoot;
    use crate::context::ShootContext;
    use crate::snapshot::Snapshot;

    /// Normalised score and raw detail of every seed in the snapshot, in seed order.
    pub fn evaluate(p: &dyn Priority, shoot: &Shoot, snap: &Snapshot) -> Vec<(f64, String)> {
        let cx = ShootContext::new(shoot, snap, chrono::Utc::now()).unwrap();
        let positions: Vec<u32> = (0..snap.columns().len() as u32).collect();
        let mut details = Vec::new();
        let values = p.raw(&cx, &positions, snap, Details::record(&mut details));
        assert_eq!(
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.raw(&cx, &positions, snap, Details::OFF)
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            "the same values with and without details"
        );
        p.normalize(&values)
            .into_iter()
            .zip(details.iter().map(ToString::to_string))
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

    #[test]
    fn lower_is_better_edges() {
        assert_eq!(lower_is_better(&([0.0, 5.0, 10.0])), vec![100.0, 50.0, 0.0]);
        assert_eq!(
            lower_is_better(&([3.0, 3.0])),
            vec![100.0, 100.0],
            "all equal"
        );
        assert_eq!(lower_is_better(&([7.0])), vec![100.0], "one seed");
        assert!(lower_is_better(&([])).is_empty());
    }

    #[test]
    fn every_priority_builds_from_its_example_arguments() {
        let all: Vec<_> = configurable().collect();
        assert!(all.len() > REGISTRY.len(), "the test-only priorities too");
        for (name, example) in all {
            let args: serde_json::Value = serde_yaml_ng::from_str(example)
                .unwrap_or_else(|e| panic!("{name}: EXAMPLE is not YAML: {e}"));
            let cfg = PriorityConfig {
                name: name.into(),
                weight: 1.0,
                args,
            };
            let built = build(&cfg, "p").unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(built.name(), name);
        }
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
