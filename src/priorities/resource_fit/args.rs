//! `ResourceFit`'s arguments: the scored resources with their weights, and what each class of
//! shoot requests of a seed, each value checked and every problem reported with its path.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{FAILURE_TOLERANCES, FitStrategy, PURPOSES, RequestRule, ResourceFit, SHOOTS};
use crate::field_error::{FieldError, MAX_WEIGHT, bounded_positive};
use crate::plugin::{parse_args, unsupported_value};

/// The largest request of one resource (2^63, about 9.2 exa): a quantity beyond what any seed
/// declares keeps utilisation sums finite.
const MAX_REQUEST: f64 = 9_223_372_036_854_775_808.0;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    strategy: FitStrategy,
    resources: Option<Vec<ResourceArg>>,
    control_plane_requests: Vec<RuleArg>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ResourceArg {
    name: String,
    #[serde(default = "one")]
    weight: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RuleArg {
    purpose: Option<String>,
    failure_tolerance: Option<String>,
    /// Quantities (`"2"`, `500m`, `8Gi`), checked one by one below.
    #[serde(default)]
    requests: BTreeMap<String, serde_json::Value>,
}

pub(super) fn from_args(
    args: &serde_json::Value,
    path: &str,
) -> Result<ResourceFit, Vec<FieldError>> {
    let a: Args = parse_args(args, path)?;
    let mut errors = Vec::new();
    let mut rules = Vec::with_capacity(a.control_plane_requests.len());
    for (i, r) in a.control_plane_requests.iter().enumerate() {
        let at = format!("{path}.controlPlaneRequests[{i}]");
        for (field, value, allowed) in [
            ("purpose", &r.purpose, &PURPOSES[..]),
            (
                "failureTolerance",
                &r.failure_tolerance,
                &FAILURE_TOLERANCES[..],
            ),
        ] {
            if let Some(v) = value
                && !allowed.contains(&v.as_str())
            {
                errors.push(unsupported_value(format!("{at}.{field}"), v, allowed));
            }
        }
        let mut requests = BTreeMap::new();
        for (resource, q) in &r.requests {
            let at = format!("{at}.requests.{resource}");
            if resource == SHOOTS {
                errors.push(FieldError::new(
                    at,
                    "a shoot always demands exactly one shoot slot; remove this entry",
                ));
                continue;
            }
            let parsed = match q {
                serde_json::Value::String(s) => crate::quantity::parse(s),
                serde_json::Value::Number(n) => {
                    n.as_f64().ok_or_else(|| format!("{n} is not a quantity"))
                }
                other => Err(format!("{other} is not a quantity")),
            };
            match parsed {
                Ok(v) if v.is_finite() && (0.0..=MAX_REQUEST).contains(&v) => {
                    requests.insert(resource.clone(), v);
                }
                Ok(v) if v >= 0.0 => errors.push(FieldError::new(
                    at,
                    format!("must be at most {MAX_REQUEST:e}, got {v:e}"),
                )),
                Ok(v) => errors.push(FieldError::new(at, crate::field_error::not_negative(v))),
                Err(e) => errors.push(FieldError::new(at, e)),
            }
        }
        rules.push(RequestRule {
            purpose: r.purpose.clone(),
            failure_tolerance: r.failure_tolerance.clone(),
            requests,
        });
    }
    let priced: Vec<&String> = a
        .control_plane_requests
        .iter()
        .flat_map(|r| r.requests.keys())
        .collect();
    let resources: Vec<(String, f64)> = match &a.resources {
        Some(list) => {
            for (i, r) in list.iter().enumerate() {
                let at = format!("{path}.resources[{i}]");
                errors.extend(bounded_positive(
                    format!("{at}.weight"),
                    r.weight,
                    MAX_WEIGHT,
                ));
                if list[..i].iter().any(|q| q.name == r.name) {
                    errors.push(FieldError::new(
                        format!("{at}.name"),
                        format!("duplicate resource {:?}", r.name),
                    ));
                } else if r.name != SHOOTS && !priced.contains(&&r.name) {
                    errors.push(FieldError::new(
                        format!("{at}.name"),
                        format!(
                            "no shoot demands {:?}: add it to the requests of controlPlaneRequests",
                            r.name
                        ),
                    ));
                }
            }
            list.iter().map(|r| (r.name.clone(), r.weight)).collect()
        }
        None => {
            let mut names: Vec<String> = vec![SHOOTS.to_string()];
            for n in priced {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            names.into_iter().map(|n| (n, 1.0)).collect()
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(ResourceFit::new(a.strategy, resources, rules))
}
