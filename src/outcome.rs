//! Leaf vocabulary: the outcomes a stage produces. A seed is rejected with a [`Rejection`]; a
//! shoot that fits nowhere, or cannot be read, is a [`FitError`], an expected outcome rather
//! than an error of the scheduler. The context, the predicates, the strategies and the decision
//! all produce them, so they live below all of them (as kube-scheduler's framework `Status`).

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::reason::{Reason, summarize};

/// A seed rejected by a stage.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rejection {
    pub seed: Arc<str>,
    pub stage: &'static str,
    #[serde(flatten)]
    pub reason: Reason,
}

/// The shoot cannot be placed now. An expected outcome, not an error of the scheduler.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum FitError {
    /// Every seed was rejected by some stage.
    NoFit {
        total: usize,
        rejected: Vec<Rejection>,
    },
    /// The shoot itself is malformed or references something missing.
    InvalidShoot { field: String, message: String },
    /// The region ConfigMap row for the shoot's region cannot be parsed.
    InvalidRegionConfig {
        config_map: String,
        region: String,
        message: String,
    },
    /// The decision did not finish within its budget (`schedulers.shoot.decisionBudget`); it
    /// gave up in `stage`.
    OverBudget { budget_ms: u64, stage: &'static str },
}

impl FitError {
    /// Hints on what to change, deduplicated, most common first.
    pub fn hints(&self) -> Vec<String> {
        let FitError::NoFit { rejected, .. } = self else {
            return Vec::new();
        };
        let mut hints: Vec<(String, usize)> = Vec::new();
        for r in rejected {
            if let Some(h) = r.reason.hint() {
                match hints.iter_mut().find(|(x, _)| *x == h) {
                    Some((_, n)) => *n += 1,
                    None => hints.push((h, 1)),
                }
            }
        }
        hints.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        hints.into_iter().map(|(h, _)| h).take(3).collect()
    }

    /// The distinct reasons seeds were rejected for, by the `reason` names `simulate -o json`
    /// writes (`capacity`, `taints`, `otherRegion`, ..., a declared reason by its own name),
    /// sorted; `noSeeds` when there is no seed at all, and the error's own `kind`
    /// (`invalidShoot`, `invalidRegionConfig`) when the shoot could not be decided.
    pub fn reason_names(&self) -> Vec<String> {
        let FitError::NoFit { rejected, .. } = self else {
            return vec![tag(self, "kind")];
        };
        if rejected.is_empty() {
            return vec!["noSeeds".into()];
        }
        let mut seen = Vec::new();
        let mut names = Vec::new();
        for r in rejected {
            let name = match &r.reason {
                Reason::Declared(d) => d.0.name().to_string(),
                reason => {
                    let d = std::mem::discriminant(reason);
                    if seen.contains(&d) {
                        continue;
                    }
                    seen.push(d);
                    tag(reason, "reason")
                }
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.sort();
        names
    }
}

/// The name serde gives `value`'s variant under the internal tag `field`.
fn tag(value: &impl Serialize, field: &str) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| Some(v.get(field)?.as_str()?.to_string()))
        .unwrap_or_default()
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FitError::NoFit { total, rejected } => {
                f.write_str(&summarize(*total, rejected.iter().map(|r| &r.reason)))
            }
            FitError::InvalidShoot { field, message } => {
                write!(f, "invalid shoot: {field}: {message}")
            }
            FitError::InvalidRegionConfig {
                config_map,
                region,
                message,
            } => write!(
                f,
                "region ConfigMap {config_map}: data[{region}]: {message}"
            ),
            FitError::OverBudget { budget_ms, stage } => write!(
                f,
                "the decision did not finish within its budget of {budget_ms} ms \
                 (schedulers.shoot.decisionBudget; it was in stage {stage}): tried again with backoff"
            ),
        }
    }
}
