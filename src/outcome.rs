//! Leaf vocabulary: the outcomes a stage produces. A seed is rejected with a [`Rejection`]; a
//! shoot that fits nowhere, or cannot be read, is a [`FitError`], an expected outcome rather
//! than an error of the scheduler. The context, the predicates, the strategies and the decision
//! all produce them, so they live below all of them (as kube-scheduler's framework `Status`).
//!
//! [`Rejection`]: crate::outcome::Rejection
//! [`FitError`]: crate::outcome::FitError

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::reason::{Reason, Tally, tally};

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
        /// The rejections counted by phrase, hint and room: what the message, the hints, the
        /// reason names and capacity refusals read (both modes of the decision).
        tally: Tally,
        /// Every rejected seed with its stage and reason, in name order: explain mode lists
        /// them; fast mode, which only counts them, leaves this empty.
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
    /// Scheduling gates hold the shoot (the annotation `scheduling.gardener.cloud/gates`): it
    /// is not decided until they are removed. `reason` names them.
    Gated { reason: String },
}

impl FitError {
    /// The error of a shoot no seed fits, with every rejection listed (and counted).
    pub fn no_fit(total: usize, rejected: Vec<Rejection>) -> FitError {
        FitError::NoFit {
            total,
            tally: tally(rejected.iter().map(|r| (&r.seed, &r.reason))),
            rejected,
        }
    }

    /// The same error with its rejections counted but no longer listed, as fast mode reports
    /// it.
    pub fn counted_only(self) -> FitError {
        match self {
            FitError::NoFit { total, tally, .. } => FitError::NoFit {
                total,
                tally,
                rejected: Vec::new(),
            },
            other => other,
        }
    }

    /// Hints on what to change, deduplicated, most common first.
    pub fn hints(&self) -> Vec<String> {
        match self {
            FitError::NoFit { tally, .. } => tally.hints(),
            _ => Vec::new(),
        }
    }

    /// The seeds that turned the shoot away for lack of room (a slot freed there may let it
    /// in).
    pub fn full_seeds(&self) -> &[Arc<str>] {
        match self {
            FitError::NoFit { tally, .. } => tally.full(),
            _ => &[],
        }
    }

    /// The distinct reasons seeds were rejected for, by the `reason` names `simulate -o json`
    /// writes (`capacity`, `taints`, `otherRegion`, ..., as each plugin declares them), sorted;
    /// `noSeeds` when there is no seed at all, and the error's own `kind` (`invalidShoot`,
    /// `invalidRegionConfig`) when the shoot could not be decided.
    pub fn reason_names(&self) -> Vec<String> {
        let FitError::NoFit { tally, .. } = self else {
            return vec![tag(self, "kind")];
        };
        if tally.seeds() == 0 {
            return vec!["noSeeds".into()];
        }
        tally.names()
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
            FitError::NoFit { total, tally, .. } => f.write_str(&tally.message(*total)),
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
            FitError::Gated { reason } => write!(f, "scheduling gated: {reason}"),
        }
    }
}
