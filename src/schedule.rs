//! The decision: one pure pipeline from a shoot and a snapshot to a seed or a reason, in two
//! modes of the same stages in the same order.
//!
//! No I/O, no clock (the caller passes `now`), no globals. [`decide_within`] (fast mode:
//! verdicts and totals, the winner's breakdown) is what the scheduler process runs;
//! [`schedule`] (explain mode: every rejection with its reason, every feasible seed with its
//! score details) is what `simulate`, `plan` and `--explain` run. Filtering is
//! `pipeline`, fast-mode scoring `scores`.
//!
//! [`decide_within`]: crate::schedule::decide_within
//! [`schedule`]: crate::schedule::schedule

use std::sync::Arc;

use chrono::{DateTime, Utc};
use ordered_float::NotNan;
use serde::Serialize;
use tracing::debug_span;

use crate::api::Shoot;
use crate::budget::Deadline;
use crate::context::ShootContext;
pub use crate::outcome::{FitError, Rejection};
use crate::priorities::Details;
use crate::profile::Profile;
use crate::snapshot::Snapshot;
use pipeline::{Filtered, Mode, Prepare};

mod pipeline;
mod scores;

#[cfg(any(test, feature = "test-util"))]
pub use pipeline::Disagreement;
pub use scores::{PriorityScore, SeedScore, tie_hash};

/// A successful decision: the chosen seed, every feasible seed best first, and the rejections.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decision {
    pub seed: String,
    pub profile: String,
    pub ranking: Vec<SeedScore>,
    pub rejected: Vec<Rejection>,
    /// How far the chosen seed's total is ahead of the next feasible seed's (0 on a tie);
    /// `None` when it was the only feasible seed. Both modes compute it.
    #[serde(skip)]
    pub margin: Option<f64>,
    /// How many seeds each stage rejected, by stage name in stage order (stages that rejected
    /// none left out). Explain mode counts `rejected`; fast mode leaves it empty unless the
    /// caller asks [`rejections_by_stage`] (the decision record does).
    #[serde(skip)]
    pub rejected_by_stage: Vec<(&'static str, usize)>,
}

impl Decision {
    pub fn winner(&self) -> &SeedScore {
        &self.ranking[0]
    }
}

/// Picks a seed for `shoot` in explain mode: filter (stages in order), score (weighted
/// priorities), pick the highest total, ties broken by [`tie_hash`]. The decision lists every
/// feasible seed with its score details and every rejected seed with its stage and reason, as
/// `simulate`, `plan` and `--explain` show them.
pub fn schedule(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Decision, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    let _span = debug_span!("schedule", shoot = %cx.key, profile = %profile.name).entered();
    let prepared = Prepare::new(&cx, &profile.stages)?;
    let Filtered { kept, rejected } =
        pipeline::filter(&cx, &prepared, snap, Mode::Explain, &Deadline::NONE)?;
    let ranking = rank(&cx, &kept, snap, profile);
    let margin = ranking
        .get(1)
        .map(|next| (ranking[0].total - next.total).into_inner());
    let mut rejected_by_stage: Vec<(&'static str, usize)> = Vec::new();
    for stage in profile.stages.iter().map(|s| s.name()) {
        let n = rejected.iter().filter(|r| r.stage == stage).count();
        if n > 0 {
            rejected_by_stage.push((stage, n));
        }
    }
    Ok(Decision {
        seed: ranking[0].seed.to_string(),
        profile: profile.name.clone(),
        ranking,
        rejected,
        margin,
        rejected_by_stage,
    })
}

/// The same decision in fast mode, as the scheduler process makes it: the same seed as
/// [`schedule`] with the same score breakdown, or on failure exactly its error, without
/// recording what only an explanation shows (`rejected` is left empty; `ranking` holds the
/// winner alone; with the `test-util` feature, `decide_scores` has every feasible seed's
/// scores).
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
    let scores = fast_scores(&cx, snap, profile, deadline)?;
    let (w, margin) = scores.winner(&cx, snap);
    let winner = scores.breakdown(&cx, w, snap, profile);
    Ok(Decision {
        seed: winner.seed.to_string(),
        profile: profile.name.clone(),
        ranking: vec![winner],
        rejected: Vec::new(),
        margin,
        rejected_by_stage: Vec::new(),
    })
}

/// How many seeds each stage rejected for `shoot`, by stage name in stage order (stages that
/// rejected none left out): each seed counted once, under the first stage that rejects it, as
/// both modes see it. For the decision record of a bound shoot; costs a fast-mode pass over
/// every seed.
pub fn rejections_by_stage(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Vec<(&'static str, usize)>, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    let prepared = Prepare::new(&cx, &profile.stages)?;
    pipeline::stage_counts(&cx, &prepared, snap)
}

/// A seed's name and every rejection of it.
pub type SeedRejections = (Arc<str>, Vec<Rejection>);

/// What every stage says of every seed for `shoot`, not only the first stage that rejects it:
/// per seed (by name, in the snapshot's order) the rejections of all stages, none for a seed
/// that fits. For `explain`: the nearest seed is the one with the fewest.
pub fn every_rejection(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Vec<SeedRejections>, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    let prepared = Prepare::new(&cx, &profile.stages)?;
    let all = pipeline::every_rejection(&cx, &prepared, snap)?;
    let cols = snap.columns();
    Ok(all
        .into_iter()
        .enumerate()
        .map(|(i, r)| (Arc::clone(&cols.info(i as u32).name), r))
        .collect())
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

/// The scores of every feasible seed as [`decide`] computes them: for checking fast mode
/// against explain mode (a test hook: the `test-util` feature).
#[cfg(any(test, feature = "test-util"))]
pub fn decide_scores(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Scores, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    let scores = fast_scores(&cx, snap, profile, &Deadline::NONE)?;
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

/// Every seed where a filter's fast answer for this shoot (its check over the columns, or
/// `passes`) differs from its `filter`, or a set step's check over positions (a preference, a
/// claim) from its `narrow`, as `(stage, seed, fast verdict)`: empty when every plugin's fast
/// check is its filter (a test hook: the `test-util` feature).
#[cfg(any(test, feature = "test-util"))]
pub fn check_disagreements(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Vec<Disagreement>, FitError> {
    let cx = ShootContext::new(shoot, snap, now)?;
    pipeline::disagreements(&cx, &profile.stages, snap)
}

/// The feasible seeds' scores in fast mode.
fn fast_scores(
    cx: &ShootContext,
    snap: &Snapshot,
    profile: &Profile,
    deadline: &Deadline,
) -> Result<scores::Scores, FitError> {
    let prepared = Prepare::new(cx, &profile.stages)?;
    let Filtered { kept, .. } = pipeline::filter(cx, &prepared, snap, Mode::Fast, deadline)?;
    scores::score(cx, kept, snap, profile, deadline)
}

/// Scores the seeds that passed every stage (positions in the snapshot's columns), with every
/// seed's details, and orders them best first.
fn rank(cx: &ShootContext, kept: &[u32], snap: &Snapshot, profile: &Profile) -> Vec<SeedScore> {
    let cols = snap.columns();
    let mut ranking: Vec<SeedScore> = kept
        .iter()
        .map(|&i| {
            let name = &cols.info(i).name;
            SeedScore {
                seed: Arc::clone(name),
                total: NotNan::default(),
                priorities: Vec::with_capacity(profile.priorities.len()),
                tie_break: tie_hash(&cx.key, name),
            }
        })
        .collect();
    for wp in &profile.priorities {
        let mut details = Vec::with_capacity(kept.len());
        let values = wp
            .priority
            .raw(cx, kept, snap, Details::record(&mut details));
        debug_assert_eq!(details.len(), kept.len(), "{}", wp.priority.name());
        let normalized = wp.priority.normalize(&values);
        for (((entry, raw), detail), score) in
            ranking.iter_mut().zip(values).zip(details).zip(normalized)
        {
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
                raw,
                detail,
            });
        }
    }
    ranking.sort_by(|a, b| b.total.cmp(&a.total).then(a.tie_break.cmp(&b.tie_break)));
    ranking
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_differences;
