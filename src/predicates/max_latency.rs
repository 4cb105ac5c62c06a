//! `MaxLatency` (opt-in): rejects seeds whose region is farther from the shoot's region than a
//! latency bound, by the same sources `LatencyDistance` reads (matrix, region ConfigMaps, region
//! catalogue estimate).

use serde::de::MapAccess;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::plugin::latency_keys::{MATRIX, MATRIX_FILE, MAX_LATENCY_MS, USE_REGION_CONFIG_MAPS};
use crate::plugin::{LatencyArgs, OwnArgs, parse_args};
use crate::reason::{Reason, declared};
use crate::snapshot::estimate::{Estimate, LatencySources, round_ms};
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared, Verdict, Why};

pub const NAME: &str = "MaxLatency";

/// Arguments that make it keep some seeds of generated landscapes and reject others.
pub const EXAMPLE: &str = "{maxLatencyMs: 30}";

pub struct MaxLatency {
    max_ms: f64,
    sources: LatencySources,
    reject_unknown: bool,
}

/// The arguments besides the latency ones; `maxLatencyMs` is required and there is no
/// `fallbackFactor`: a latency no source knows is rejected or kept as a whole.
#[derive(Default)]
struct Own {
    /// Seeds no source knows a latency for are rejected too (default: kept).
    reject_unknown: bool,
}

impl OwnArgs for Own {
    const FIELDS: &'static [&'static str] = &[
        MAX_LATENCY_MS,
        MATRIX,
        MATRIX_FILE,
        USE_REGION_CONFIG_MAPS,
        "rejectUnknown",
    ];
    const MAX_LATENCY_MS: Option<f64> = None;

    fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "rejectUnknown" => self.reject_unknown = map.next_value()?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Predicate>, Vec<FieldError>> {
    let a: LatencyArgs<Own> = parse_args(args, path)?;
    let mut errors = Vec::new();
    let max_ms = a.max_latency_ms(path, &mut errors);
    let sources = a.sources(path, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Box::new(MaxLatency {
        max_ms,
        sources,
        reject_unknown: a.own.reject_unknown,
    }))
}

impl Predicate for MaxLatency {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        snap: &Snapshot,
        why: Why,
    ) -> Verdict {
        let estimate = self
            .sources
            .for_shoot(
                &cx.region,
                &cx.provider,
                &cx.cloud_profile.region_config_name,
                snap,
            )
            .to(seed);
        let too_far = match estimate.ms() {
            Some(ms) => ms > self.max_ms,
            None => self.reject_unknown,
        };
        if !too_far {
            return Ok(());
        }
        let latency = match &estimate {
            Estimate::Unknown => format!(
                "no latency known for {} → {}, and rejectUnknown is set",
                cx.region, seed.region
            ),
            e => e.to_string(),
        };
        why.reject(|| {
            Reason::new(TooFar {
                max_ms: round_ms(self.max_ms).to_string(),
                latency,
                region: cx.region.clone(),
            })
        })
    }
}

/// The latency (with its source) exceeds the bound.
#[derive(Debug)]
struct TooFar {
    max_ms: String,
    latency: String,
    /// The shoot's region.
    region: String,
}

declared!(TooFar {
    name: "maxLatency",
    summary: "are farther than the maximum latency",
    hint(self): Some(format!(
        "add a seed near region {} or raise maxLatencyMs of filter MaxLatency",
        self.region
    )),
    message(self, f): write!(f, "farther than {} ms ({})", self.max_ms, self.latency),
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    fn filter(args: serde_json::Value) -> Box<dyn Predicate> {
        build(&args, "f.args").unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn check(p: &dyn Predicate, shoot_region: &str, seed_region: &str) -> Result<(), Reason> {
        run(
            p,
            &ShootBuilder::new("garden-p", "s")
                .region(shoot_region)
                .build(),
            &SeedBuilder::new("s1").region(seed_region).build(),
            &[],
            &[],
        )
    }

    #[test]
    fn a_seed_within_the_bound_passes_and_one_beyond_is_rejected_with_the_estimate() {
        let p = filter(serde_json::json!({"maxLatencyMs": 15}));
        assert_eq!(check(&*p, "eu-central-1", "eu-central-2"), Ok(()));
        assert_eq!(check(&*p, "eu-central-1", "eu-central-1"), Ok(()));
        let err = check(&*p, "eu-central-1", "us-east-1").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("farther than 15 ms (≈ 100.2 ms")
                && err.to_string().contains("Frankfurt → Ashburn, Virginia"),
            "{err}"
        );
    }

    #[test]
    fn a_matrix_in_the_args_comes_before_the_catalogue() {
        let p = filter(serde_json::json!({
            "maxLatencyMs": 15,
            "matrix": {"eu-central-1": {"eu-central-2": 40}},
        }));
        assert_eq!(
            check(&*p, "eu-central-1", "eu-central-2")
                .unwrap_err()
                .to_string(),
            "farther than 15 ms (40 ms, measured (latency matrix))"
        );
    }

    #[test]
    fn unknown_latencies_pass_unless_reject_unknown_is_set() {
        let keep = filter(serde_json::json!({"maxLatencyMs": 15}));
        assert_eq!(check(&*keep, "eu-central-1", "lab-1"), Ok(()));
        let reject = filter(serde_json::json!({"maxLatencyMs": 15, "rejectUnknown": true}));
        assert!(
            check(&*reject, "eu-central-1", "lab-1")
                .unwrap_err()
                .to_string()
                .contains("no latency known for eu-central-1 → lab-1")
        );
    }

    #[test]
    fn bad_args_name_their_field() {
        let errs = |v| {
            build(&v, "f.args")
                .err()
                .unwrap()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            errs(serde_json::Value::Null),
            vec!["f.args.maxLatencyMs: is required"]
        );
        assert_eq!(
            errs(serde_json::json!({"maxLatencyMs": 10, "matrix": {"a": {"b": -1}}})),
            vec!["f.args.matrix.a.b: latency must not be negative, got -1"]
        );
        assert!(
            errs(serde_json::json!({"maxLatency": 10}))[0]
                .starts_with("f.args.maxLatency: unknown field")
        );
    }
}
