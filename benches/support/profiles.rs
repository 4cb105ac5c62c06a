//! Profiles the benchmarks run, built from SchedulerConfiguration text exactly as the binary
//! builds them from its config file.
//!
//! The weighted profile asks for every priority in [`WEIGHTED`]; each is included only when this
//! build registers it (`priorities::names()`), and one whose arguments this build rejects is
//! dropped with the rejection recorded. The report states which priorities each profile had.

use std::collections::BTreeMap;

use gardener_scheduler::config;
use gardener_scheduler::priorities;
use gardener_scheduler::profile::Profile;
use serde_json::{Value, json};

/// A priority the weighted profile should contain.
pub struct Wanted {
    pub name: &'static str,
    pub weight: f64,
    /// Arguments; `None` = no args. Gets the latency matrix when it needs one.
    pub args: fn(&LatencyArgs) -> Option<Value>,
}

/// What latency-aware priorities are configured with.
pub struct LatencyArgs {
    pub matrix: BTreeMap<String, BTreeMap<String, u32>>,
    pub max_latency_ms: u32,
}

/// The full weighted profile, in evaluation order: the priorities and weights of the shipped
/// `example/20-componentconfig-weighted.yaml`, with the latency matrix inline for the bench's
/// regions.
pub const WEIGHTED: &[Wanted] = &[
    Wanted {
        name: "LatencyDistance",
        weight: 10.0,
        args: |l| {
            Some(
                json!({ "matrix": l.matrix, "maxLatencyMs": l.max_latency_ms, "fallbackFactor": 10 }),
            )
        },
    },
    Wanted {
        name: "ProjectAntiAffinity",
        weight: 1.0,
        args: |_| Some(json!({ "topology": "seed" })),
    },
    Wanted {
        name: "ResourceFit",
        weight: 1.0,
        args: |_| {
            Some(json!({
                "strategy": "LeastAllocated",
                "controlPlaneRequests": [
                    { "purpose": "production", "failureTolerance": "zone", "requests": { "cpu": "6", "memory": "24Gi" } },
                    { "purpose": "production", "requests": { "cpu": "4", "memory": "16Gi" } },
                    { "purpose": "infrastructure", "requests": { "cpu": "4", "memory": "16Gi" } },
                    { "requests": { "cpu": "2", "memory": "8Gi" } },
                ],
            }))
        },
    },
    Wanted {
        name: "ShootCount",
        weight: 0.1,
        args: |_| Some(json!({ "relativeToCapacity": true })),
    },
];

/// The load of the placement-quality landscapes: what the capacity-aware profiles declare as
/// `plannedUtilisation`, the share of capacity an operator plans to fill.
pub const QUALITY_LOAD: f64 = 0.87;

/// `CapacityPressure` with the weighted profile's latency arguments, in place of
/// `LatencyDistance`, and the planned utilisation declared.
pub const CAPACITY_PRESSURE: Wanted = Wanted {
    name: "CapacityPressure",
    weight: 10.0,
    args: |l| {
        Some(json!({
            "matrix": l.matrix,
            "maxLatencyMs": l.max_latency_ms,
            "fallbackFactor": 10,
            "plannedUtilisation": QUALITY_LOAD,
        }))
    },
};

/// `CapacityPressure` as above without `plannedUtilisation` (default 1: demand may fill every slot).
pub const CAPACITY_PRESSURE_DEFAULT: Wanted = Wanted {
    name: "CapacityPressure",
    weight: 10.0,
    args: |l| {
        Some(json!({ "matrix": l.matrix, "maxLatencyMs": l.max_latency_ms, "fallbackFactor": 10 }))
    },
};

/// Latency priced with capacity and the weighted profile's tie-breaker, no spreading.
pub fn capacity_aware() -> Vec<&'static Wanted> {
    std::iter::once(&CAPACITY_PRESSURE)
        .chain(WEIGHTED.iter().filter(|w| w.name == "ShootCount"))
        .collect()
}

/// [`capacity_aware`] with `CapacityPressure`'s default `plannedUtilisation`.
pub fn capacity_aware_default() -> Vec<&'static Wanted> {
    std::iter::once(&CAPACITY_PRESSURE_DEFAULT)
        .chain(WEIGHTED.iter().filter(|w| w.name == "ShootCount"))
        .collect()
}

/// [`capacity_aware_spread`] with `CapacityPressure`'s default arguments.
pub fn capacity_aware_default_spread() -> Vec<&'static Wanted> {
    std::iter::once(&CAPACITY_PRESSURE_DEFAULT)
        .chain(WEIGHTED.iter().filter(|w| w.name != "LatencyDistance"))
        .collect()
}

/// The weighted profile with `LatencyDistance` replaced by `CapacityPressure`: the same
/// spreading (`ProjectAntiAffinity`, `ResourceFit`), to show what spreading costs.
pub fn capacity_aware_spread() -> Vec<&'static Wanted> {
    std::iter::once(&CAPACITY_PRESSURE)
        .chain(WEIGHTED.iter().filter(|w| w.name != "LatencyDistance"))
        .collect()
}

/// A compiled profile and how it came about.
pub struct BuiltProfile {
    pub profile: Profile,
    pub strategy: String,
    /// `Name×weight` of every priority in the profile.
    pub included: Vec<String>,
    /// Wanted but not registered in this build.
    pub not_registered: Vec<String>,
    /// Registered, but this build rejected the arguments: (name, errors).
    pub rejected: Vec<(String, String)>,
    pub config: String,
}

impl BuiltProfile {
    pub fn has(&self, priority: &str) -> bool {
        self.included
            .iter()
            .any(|p| p.split('×').next() == Some(priority))
    }

    /// `SameRegion; ShootCount×1` style summary.
    pub fn describe(&self) -> String {
        format!("{}; {}", self.strategy, self.included.join(", "))
    }
}

fn config_text(strategy: &str, priorities: &[(String, f64, Option<Value>)]) -> String {
    let mut shoot = serde_json::Map::new();
    shoot.insert("candidateDeterminationStrategy".into(), json!(strategy));
    if !priorities.is_empty() {
        let list: Vec<Value> = priorities
            .iter()
            .map(|(name, weight, args)| {
                let mut p = json!({ "name": name, "weight": weight });
                if let Some(a) = args {
                    p["args"] = a.clone();
                }
                p
            })
            .collect();
        shoot.insert("priorities".into(), Value::Array(list));
    }
    let doc = json!({
        "apiVersion": "scheduler.config.gardener.cloud/v1alpha1",
        "kind": "SchedulerConfiguration",
        "schedulers": { "shoot": shoot },
    });
    serde_yaml_ng::to_string(&doc).expect("config serializes")
}

fn compile(name: &str, text: &str) -> Result<Profile, Vec<config::FieldError>> {
    let cfg = gardener_scheduler::compile::load_str(text)
        .map_err(|e| match e {
            config::ConfigError::Invalid(errors) => errors,
            other => vec![config::FieldError::new("<config>", other.to_string())],
        })?
        .config;
    Profile::from_config(name, &cfg.schedulers.shoot)
}

/// A strategy with the upstream default priorities (`ShootCount`, weight 1).
pub fn upstream(strategy: &str) -> BuiltProfile {
    let config = config_text(strategy, &[]);
    let profile = compile(strategy, &config).unwrap_or_else(|e| panic!("{strategy}: {e:?}"));
    BuiltProfile {
        included: included(&profile),
        profile,
        strategy: strategy.to_string(),
        not_registered: Vec::new(),
        rejected: Vec::new(),
        config,
    }
}

/// The weighted profile over `strategy`, with whatever of [`WEIGHTED`] this build supports.
pub fn weighted(name: &str, strategy: &str, latency: &LatencyArgs) -> BuiltProfile {
    scored(
        name,
        strategy,
        &WEIGHTED.iter().collect::<Vec<_>>(),
        latency,
    )
}

/// A profile over `strategy` with whatever of `list` this build supports.
pub fn scored(name: &str, strategy: &str, list: &[&Wanted], latency: &LatencyArgs) -> BuiltProfile {
    let registered = priorities::names();
    let mut not_registered = Vec::new();
    let mut wanted: Vec<(String, f64, Option<Value>)> = Vec::new();
    for w in list {
        if registered.contains(&w.name) {
            wanted.push((w.name.to_string(), w.weight, (w.args)(latency)));
        } else {
            not_registered.push(w.name.to_string());
        }
    }
    let mut rejected = Vec::new();
    loop {
        let config = config_text(strategy, &wanted);
        match compile(name, &config) {
            Ok(profile) => {
                return BuiltProfile {
                    included: included(&profile),
                    profile,
                    strategy: strategy.to_string(),
                    not_registered,
                    rejected,
                    config,
                };
            }
            Err(errors) => {
                // Drop every priority an error points at; anything else is a bench defect.
                let mut culprits: Vec<usize> = errors
                    .iter()
                    .filter_map(|e| priority_index(&e.path))
                    .filter(|i| *i < wanted.len())
                    .collect();
                culprits.sort_unstable();
                culprits.dedup();
                assert!(!culprits.is_empty(), "{name}: config rejected: {errors:?}");
                for i in culprits.into_iter().rev() {
                    let (n, _, _) = wanted.remove(i);
                    let prefix = format!("schedulers.shoot.priorities[{i}]");
                    let msgs: Vec<String> = errors
                        .iter()
                        .filter(|e| e.path.starts_with(&prefix))
                        .map(|e| {
                            format!(
                                "{}: {}",
                                e.path.replacen(&prefix, "", 1).trim_start_matches('.'),
                                e.message
                            )
                        })
                        .collect();
                    rejected.push((n, msgs.join("; ")));
                }
            }
        }
    }
}

fn included(profile: &Profile) -> Vec<String> {
    profile
        .priorities
        .iter()
        .map(|p| format!("{}×{}", p.priority.name(), p.weight))
        .collect()
}

fn priority_index(path: &str) -> Option<usize> {
    let rest = path.strip_prefix("schedulers.shoot.priorities[")?;
    rest.split(']').next()?.parse().ok()
}
