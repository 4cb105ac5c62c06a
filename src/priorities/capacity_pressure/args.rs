//! `CapacityPressure`'s arguments: the latency sources, the latency scale, the declared demand
//! and the planning targets, each value checked and every problem reported with its path.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use serde::Deserialize;

use super::CapacityPressure;
use crate::field_error::{
    FieldError, MAX_FALLBACK_FACTOR, MAX_LATENCY_MS, MAX_WEIGHT, bounded_non_negative,
    bounded_positive,
};
use crate::plugin::{parse_args, sources_from_args};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    matrix: Option<serde_json::Value>,
    matrix_file: Option<String>,
    use_region_config_maps: bool,
    max_latency_ms: f64,
    fallback_factor: f64,
    /// `{region: weight}`, checked entry by entry.
    demand: Option<serde_json::Value>,
    planned_utilisation: f64,
    replan_threshold: f64,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            matrix: None,
            matrix_file: None,
            use_region_config_maps: true,
            max_latency_ms: 300.0,
            fallback_factor: 10.0,
            demand: None,
            planned_utilisation: 1.0,
            replan_threshold: 0.02,
        }
    }
}

impl CapacityPressure {
    /// Builds from `args` found at `path`; errors name the field.
    pub fn from_args(args: &serde_json::Value, path: &str) -> Result<Self, Vec<FieldError>> {
        let a: Args = parse_args(args, path)?;
        let mut errors = Vec::new();
        errors.extend(bounded_positive(
            format!("{path}.maxLatencyMs"),
            a.max_latency_ms,
            MAX_LATENCY_MS,
        ));
        errors.extend(bounded_non_negative(
            format!("{path}.fallbackFactor"),
            a.fallback_factor,
            MAX_FALLBACK_FACTOR,
        ));
        let mut check = |ok: bool, field: &str, what: &str, got: f64| {
            if !ok {
                errors.push(FieldError::new(
                    format!("{path}.{field}"),
                    format!("must be {what}, got {got}"),
                ));
            }
        };
        check(
            a.planned_utilisation.is_finite()
                && a.planned_utilisation > 0.0
                && a.planned_utilisation <= 10.0,
            "plannedUtilisation",
            "a number above 0 and at most 10",
            a.planned_utilisation,
        );
        check(
            (0.0..=1.0).contains(&a.replan_threshold),
            "replanThreshold",
            "a number from 0 to 1",
            a.replan_threshold,
        );
        let forecast = a
            .demand
            .as_ref()
            .map(|d| parse_demand(d, &format!("{path}.demand"), &mut errors));
        let sources = sources_from_args(
            a.matrix.as_ref(),
            a.matrix_file.as_deref(),
            a.use_region_config_maps,
            path,
            &mut errors,
        );
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(CapacityPressure {
            sources,
            max_latency_ms: a.max_latency_ms,
            fallback_factor: a.fallback_factor,
            forecast,
            planned_utilisation: a.planned_utilisation,
            replan_threshold: a.replan_threshold,
            plans: Mutex::default(),
            solves: AtomicU64::new(0),
        })
    }
}

fn parse_demand(
    value: &serde_json::Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Some(map) = value.as_object() else {
        errors.push(FieldError::new(
            path,
            "must be a mapping of region to expected demand (a weight)",
        ));
        return out;
    };
    for (region, w) in map {
        if region.is_empty() {
            errors.push(FieldError::new(path, "region names must not be empty"));
            continue;
        }
        match w.as_f64() {
            Some(v) if v.is_finite() && (0.0..=MAX_WEIGHT).contains(&v) => {
                out.insert(region.clone(), v);
            }
            _ => errors.push(FieldError::new(
                format!("{path}.{region}"),
                format!("must be a number from 0 to {MAX_WEIGHT}, got {w}"),
            )),
        }
    }
    if errors.is_empty() && out.values().sum::<f64>() <= 0.0 {
        errors.push(FieldError::new(
            path,
            "must give at least one region a positive demand",
        ));
    }
    out
}
