//! The decision: one pure function from a shoot and a snapshot to a seed or a reason.
//!
//! No I/O, no clock (the caller passes `now`), no globals. Production, `simulate` and the tests
//! all call [`schedule`].

use std::fmt;

use chrono::{DateTime, Utc};
use ordered_float::NotNan;
use serde::Serialize;
use tracing::debug_span;

use crate::api::Shoot;
use crate::context::ShootContext;
use crate::predicates::Stage;
use crate::profile::Profile;
use crate::reason::{Reason, summarize};
use crate::snapshot::{SeedInfo, Snapshot};

/// One priority's contribution to a seed's total.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PriorityScore {
    pub name: &'static str,
    pub weight: f64,
    /// normalised 0..=100
    pub score: f64,
    /// score × weight
    pub weighted: f64,
    pub raw: f64,
    pub detail: String,
}

/// A feasible seed with its score breakdown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedScore {
    pub seed: String,
    pub total: NotNan<f64>,
    pub priorities: Vec<PriorityScore>,
    /// Stable per (shoot, seed); the lowest wins among equal totals.
    #[serde(skip)]
    pub tie_break: u64,
}

impl SeedScore {
    /// `ShootCount=100×1 (3 shoots)`-style short summary, for events.
    pub fn short(&self) -> String {
        let parts: Vec<String> = self
            .priorities
            .iter()
            .map(|p| format!("{} {:.0}×{} ({})", p.name, p.score, p.weight, p.detail))
            .collect();
        format!("score {:.1}: {}", self.total.into_inner(), parts.join(", "))
    }
}

/// A seed rejected by a stage.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rejection {
    pub seed: String,
    pub stage: &'static str,
    #[serde(flatten)]
    pub reason: Reason,
}

/// A successful decision: the chosen seed, every feasible seed best first, and the rejections.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decision {
    pub seed: String,
    pub profile: String,
    pub ranking: Vec<SeedScore>,
    pub rejected: Vec<Rejection>,
}

impl Decision {
    pub fn winner(&self) -> &SeedScore {
        &self.ranking[0]
    }
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
        }
    }
}

/// Stable 64-bit hash of the shoot's identity with a seed name, for tie breaks.
pub fn tie_hash(shoot_key: &str, seed: &str) -> u64 {
    let mut buf = Vec::with_capacity(shoot_key.len() + seed.len() + 1);
    buf.extend_from_slice(shoot_key.as_bytes());
    buf.push(0);
    buf.extend_from_slice(seed.as_bytes());
    xxhash_rust::xxh3::xxh3_64(&buf)
}

/// Picks a seed for `shoot`: filter (stages in order), score (weighted priorities), pick the
/// highest total, ties broken by [`tie_hash`].
pub fn schedule(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Decision, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    let _span = debug_span!("schedule", shoot = %cx.key, profile = %profile.name).entered();

    let mut remaining: Vec<&SeedInfo> = snap.seeds().collect();
    let total = remaining.len();
    let mut rejected: Vec<Rejection> = Vec::new();
    for stage in &profile.stages {
        let verdicts: Vec<Option<Reason>> = match stage {
            Stage::Filter(p) => remaining
                .iter()
                .map(|s| p.filter(&cx, s, snap).err())
                .collect(),
            Stage::Narrow(step) => step.narrow(&cx, &remaining, snap)?,
        };
        let mut kept = Vec::with_capacity(remaining.len());
        for (seed, verdict) in remaining.into_iter().zip(verdicts) {
            match verdict {
                None => kept.push(seed),
                Some(reason) => rejected.push(Rejection {
                    seed: seed.name.clone(),
                    stage: stage.name(),
                    reason,
                }),
            }
        }
        remaining = kept;
        if remaining.is_empty() {
            rejected.sort_by(|a, b| a.seed.cmp(&b.seed));
            return Err(FitError::NoFit { total, rejected });
        }
    }
    rejected.sort_by(|a, b| a.seed.cmp(&b.seed));

    let mut ranking: Vec<SeedScore> = remaining
        .iter()
        .map(|s| SeedScore {
            seed: s.name.clone(),
            total: NotNan::default(),
            priorities: Vec::with_capacity(profile.priorities.len()),
            tie_break: tie_hash(&cx.key, &s.name),
        })
        .collect();
    for wp in &profile.priorities {
        let raw = wp.priority.raw(&cx, &remaining, snap);
        let normalized = wp.priority.normalize(&raw);
        for ((entry, raw), score) in ranking.iter_mut().zip(raw).zip(normalized) {
            let score = if score.is_finite() {
                score.clamp(0.0, 100.0)
            } else {
                0.0
            };
            let weighted = score * wp.weight;
            entry.total += NotNan::new(weighted).unwrap_or_default();
            entry.priorities.push(PriorityScore {
                name: wp.priority.name(),
                weight: wp.weight,
                score,
                weighted,
                raw: raw.value,
                detail: raw.detail,
            });
        }
    }
    ranking.sort_by(|a, b| b.total.cmp(&a.total).then(a.tie_break.cmp(&b.tie_break)));
    Ok(Decision {
        seed: ranking[0].seed.clone(),
        profile: profile.name.clone(),
        ranking,
        rejected,
    })
}
