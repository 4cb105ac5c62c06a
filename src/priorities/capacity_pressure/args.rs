//! `CapacityPressure`'s arguments: the latency sources, the latency scale, the declared demand
//! and the planning targets, each value checked and every problem reported with its path.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use serde::de::MapAccess;

use super::CapacityPressure;
use crate::field_error::{FieldError, MAX_WEIGHT};
use crate::plugin::latency_keys::{
    FALLBACK_FACTOR, MATRIX, MATRIX_FILE, MAX_LATENCY_MS, USE_REGION_CONFIG_MAPS,
};
use crate::plugin::{LatencyArgs, OwnArgs, parse_args};

/// The arguments besides the latency ones.
struct Own {
    /// `{region: weight}`, checked entry by entry.
    demand: Option<serde_json::Value>,
    planned_utilisation: f64,
    replan_threshold: f64,
}

impl Default for Own {
    fn default() -> Self {
        Self {
            demand: None,
            planned_utilisation: 1.0,
            replan_threshold: 0.02,
        }
    }
}

impl OwnArgs for Own {
    const FIELDS: &'static [&'static str] = &[
        MATRIX,
        MATRIX_FILE,
        USE_REGION_CONFIG_MAPS,
        MAX_LATENCY_MS,
        FALLBACK_FACTOR,
        "demand",
        "plannedUtilisation",
        "replanThreshold",
    ];

    fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "demand" => self.demand = map.next_value()?,
            "plannedUtilisation" => self.planned_utilisation = map.next_value()?,
            "replanThreshold" => self.replan_threshold = map.next_value()?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl CapacityPressure {
    /// Builds from `args` found at `path`; errors name the field.
    pub fn from_args(args: &serde_json::Value, path: &str) -> Result<Self, Vec<FieldError>> {
        let a: LatencyArgs<Own> = parse_args(args, path)?;
        let mut errors = Vec::new();
        let max_latency_ms = a.max_latency_ms(path, &mut errors);
        let fallback_factor = a.fallback_factor(path, &mut errors);
        let own = &a.own;
        let mut check = |ok: bool, field: &str, what: &str, got: f64| {
            if !ok {
                errors.push(FieldError::new(
                    format!("{path}.{field}"),
                    format!("must be {what}, got {got}"),
                ));
            }
        };
        check(
            own.planned_utilisation.is_finite()
                && own.planned_utilisation > 0.0
                && own.planned_utilisation <= 10.0,
            "plannedUtilisation",
            "a number above 0 and at most 10",
            own.planned_utilisation,
        );
        check(
            (0.0..=1.0).contains(&own.replan_threshold),
            "replanThreshold",
            "a number from 0 to 1",
            own.replan_threshold,
        );
        let forecast = own
            .demand
            .as_ref()
            .map(|d| parse_demand(d, &format!("{path}.demand"), &mut errors));
        let sources = a.sources(path, &mut errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(CapacityPressure {
            sources,
            max_latency_ms,
            fallback_factor,
            forecast,
            planned_utilisation: own.planned_utilisation,
            replan_threshold: own.replan_threshold,
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
