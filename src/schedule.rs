//! The decision: one pure function from a shoot and a snapshot to a seed or a reason.
//!
//! No I/O, no clock (the caller passes `now`), no globals. Production, `simulate` and the tests
//! all call [`schedule`].

use std::sync::Arc;

use chrono::{DateTime, Utc};
use ordered_float::NotNan;
use serde::Serialize;
use tracing::debug_span;

use crate::api::Shoot;
use crate::budget::Deadline;
use crate::context::ShootContext;
pub use crate::outcome::{FitError, Rejection};
use crate::predicates::Stage;
use crate::priorities::Detail;
use crate::profile::Profile;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};
use crate::strategies::{Candidates, RegionStrategy};

mod fast;

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
    pub detail: Detail,
}

/// A feasible seed with its score breakdown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedScore {
    pub seed: Arc<str>,
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

/// Stable 64-bit hash of the shoot's identity with a seed name, for tie breaks.
pub fn tie_hash(shoot_key: &str, seed: &str) -> u64 {
    let n = shoot_key.len() + seed.len() + 1;
    let mut stack = [0u8; 256];
    let mut heap = Vec::new();
    let buf = if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.resize(n, 0);
        &mut heap[..]
    };
    buf[..shoot_key.len()].copy_from_slice(shoot_key.as_bytes());
    buf[shoot_key.len()] = 0;
    buf[shoot_key.len() + 1..].copy_from_slice(seed.as_bytes());
    xxhash_rust::xxh3::xxh3_64(buf)
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

    // Seeds come in name order; a seed's position orders the rejections by name cheaply, and
    // each stage adds its rejections in that order: a stable sort merges these runs.
    let mut remaining: Vec<&SeedInfo> = snap.seeds().collect();
    let mut positions: Vec<u32> = (0..remaining.len() as u32).collect();
    let total = remaining.len();
    let mut rejected: Vec<(u32, Rejection)> = Vec::new();
    let by_name = |mut rejected: Vec<(u32, Rejection)>| -> Vec<Rejection> {
        rejected.sort_by_key(|(position, _)| *position);
        rejected.into_iter().map(|(_, r)| r).collect()
    };
    for stage in &profile.stages {
        let verdicts: Vec<Option<Reason>> = match stage {
            Stage::Filter(p) => {
                let state = p.prepare(&cx);
                remaining
                    .iter()
                    .map(|s| p.filter(&cx, &state, s, snap).err())
                    .collect()
            }
            Stage::Narrow(step) => step.narrow(&cx, &remaining, snap)?,
        };
        let mut kept = Vec::with_capacity(remaining.len());
        let mut kept_positions = Vec::with_capacity(remaining.len());
        for ((seed, position), verdict) in remaining.into_iter().zip(positions).zip(verdicts) {
            match verdict {
                None => {
                    kept.push(seed);
                    kept_positions.push(position);
                }
                Some(reason) => rejected.push((
                    position,
                    Rejection {
                        seed: Arc::clone(&seed.name),
                        stage: stage.name(),
                        reason,
                    },
                )),
            }
        }
        (remaining, positions) = (kept, kept_positions);
        if remaining.is_empty() {
            return Err(FitError::NoFit {
                total,
                rejected: by_name(rejected),
            });
        }
    }
    let rejected = by_name(rejected);
    let ranking = rank(&cx, &remaining, snap, profile);
    Ok(Decision {
        seed: ranking[0].seed.to_string(),
        profile: profile.name.clone(),
        ranking,
        rejected,
    })
}

/// The production decision: the same seed as [`schedule`] with the same score breakdown, or
/// on failure exactly its error, but without evaluating seeds the region strategy cannot keep,
/// without building the rejections of a successful decision (`rejected` is left empty) and
/// with only the winner in `ranking` ([`schedule`] lists every feasible seed and every
/// rejection, for explanations; with the `test-util` feature, `decide_scores` has every
/// feasible seed's scores).
///
/// The profile's strategy names its candidates from the snapshot's provider/region index
/// ([`RegionStrategy::candidates`]); only those go through the other stages, compiled for the
/// shoot into checks on the snapshot's per-seed columns (`fast`), tier by tier until one has
/// seeds left. When no tier has seeds left, or a set step would need seeds outside the tier,
/// every seed goes through every stage as in [`schedule`]: the seeds that pass are scored
/// the same way, and a failure is reported as [`schedule`] reports it (every seed under the
/// first stage that rejects it, with that stage's reason).
pub fn decide(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Decision, FitError> {
    decide_within(shoot, snap, profile, now, &Deadline::NONE)
}

/// [`decide`], giving up with [`FitError::OverBudget`] once `deadline` has passed (looked at
/// after each stage and every few seeds of a stage that asks its filter per seed): the
/// scheduler process's decision.
pub fn decide_within(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
    deadline: &Deadline,
) -> Result<Decision, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    let _span = debug_span!("decide", shoot = %cx.key, profile = %profile.name).entered();
    let scores = fast_scores(&cx, snap, profile, deadline)??;
    let winner = scores.breakdown(&cx, scores.winner(&cx, snap), snap, profile);
    Ok(Decision {
        seed: winner.seed.to_string(),
        profile: profile.name.clone(),
        ranking: vec![winner],
        rejected: Vec::new(),
    })
}

/// Every feasible seed's scores as [`decide`] computes them, in flat arrays (a test hook).
#[cfg(any(test, feature = "test-util"))]
pub struct Scores {
    pub seeds: Vec<Arc<str>>,
    /// per seed
    pub totals: Vec<NotNan<f64>>,
    /// per seed and priority (`seed * priorities + priority`): (normalised score, raw value)
    pub scores: Vec<(f64, f64)>,
}

/// The scores of every feasible seed as [`decide`] computes them: for checking the
/// production path against the reference (a test hook: the `test-util` feature).
#[cfg(any(test, feature = "test-util"))]
pub fn decide_scores(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Scores, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    let scores = fast_scores(&cx, snap, profile, &Deadline::NONE)??;
    Ok(Scores {
        seeds: (0..scores.positions.len())
            .map(|i| Arc::clone(scores.seed(i, snap)))
            .collect(),
        scores: (0..scores.positions.len())
            .flat_map(|i| scores.priorities.iter().map(move |(s, v)| (s[i], v[i])))
            .collect(),
        totals: scores.totals,
    })
}

/// The feasible seeds' scores, or (inner `Err`) the reference's error when there is none.
fn fast_scores(
    cx: &ShootContext,
    snap: &Snapshot,
    profile: &Profile,
    deadline: &Deadline,
) -> Result<Result<fast::Scores, FitError>, FitError> {
    let kept = candidates_kept(cx, snap, profile, deadline)?;
    let kept = match kept {
        Some(kept) if !kept.is_empty() => kept,
        // No tier has a seed left, or a set step needs the whole set: every seed goes through
        // every stage, rejections kept for the error.
        _ => match fast::whole(cx, &profile.stages, snap, deadline)? {
            Ok(kept) => kept,
            Err(no_fit) => return Ok(Err(no_fit)),
        },
    };
    Ok(Ok(fast::score(cx, kept, snap, profile, deadline)?))
}

/// The seeds that pass every stage among the region strategy's candidates, tier by tier;
/// `None` when the candidates alone cannot say.
fn candidates_kept(
    cx: &ShootContext,
    snap: &Snapshot,
    profile: &Profile,
    deadline: &Deadline,
) -> Result<Option<Vec<u32>>, FitError> {
    // The region strategy is the last stage; its candidates replace it.
    let before = match profile.stages.split_last() {
        Some((Stage::Narrow(step), before)) if step.name() == profile.strategy.as_str() => before,
        _ => return Ok(None),
    };
    let kept = match RegionStrategy::new(profile.strategy).candidates(cx, snap) {
        Candidates::All => fast::survivors(cx, None, before, snap, deadline)?,
        Candidates::Tiers(tiers) => {
            let mut kept = Some(Vec::new());
            for positions in tiers {
                kept = fast::survivors(cx, Some(positions), before, snap, deadline)?;
                if kept.as_ref().is_none_or(|k| !k.is_empty()) {
                    break;
                }
            }
            kept
        }
        Candidates::Unknown => None,
    };
    Ok(kept)
}

/// Scores the seeds that passed every stage and orders them best first.
fn rank(
    cx: &ShootContext,
    remaining: &[&SeedInfo],
    snap: &Snapshot,
    profile: &Profile,
) -> Vec<SeedScore> {
    let mut ranking: Vec<SeedScore> = remaining
        .iter()
        .map(|s| SeedScore {
            seed: Arc::clone(&s.name),
            total: NotNan::default(),
            priorities: Vec::with_capacity(profile.priorities.len()),
            tie_break: tie_hash(&cx.key, &s.name),
        })
        .collect();
    for wp in &profile.priorities {
        let raw = wp.priority.raw(cx, remaining, snap);
        let values: Vec<f64> = raw.iter().map(|r| r.value).collect();
        let normalized = wp.priority.normalize(&values);
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
    ranking
}

#[cfg(test)]
mod tests;
