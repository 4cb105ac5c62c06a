//! What a seed scored ([`SeedScore`], each priority's part a [`PriorityScore`]; ties broken by
//! [`tie_hash`]), and the scoring half of the decision pipeline in fast mode: each priority's raw values over
//! the kept seeds' positions ([`crate::priorities::Priority::raw`], the computation explain mode
//! runs, here recording no details), normalised and weighted into flat arrays; the totals are
//! summed in the profile's order as explain mode sums them. Only the winner's breakdown is built
//! with its details: each priority scores the winner alone again, recording its detail, except
//! one whose values depend on the other candidates, which records every seed's in its one pass.

use std::sync::Arc;

use ordered_float::NotNan;

use crate::budget::Deadline;
use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::priorities::{Detail, Details};
use crate::profile::Profile;
use crate::snapshot::Snapshot;
use serde::Serialize;

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

/// The scores of the seeds that passed every stage, in flat arrays indexed like `positions`.
pub(super) struct Scores {
    /// per seed: its position in the snapshot's columns
    pub(super) positions: Vec<u32>,
    /// per seed
    pub(super) totals: Vec<NotNan<f64>>,
    /// per priority: per seed, (normalised scores, raw values)
    pub(super) priorities: Vec<(Vec<f64>, Vec<f64>)>,
    /// per priority: every seed's detail, when its values depend on the other candidates
    details: Vec<Option<Vec<Detail>>>,
}

/// Scores `positions` (not empty) with the profile's priorities.
pub(super) fn score(
    cx: &ShootContext,
    positions: Vec<u32>,
    snap: &Snapshot,
    profile: &Profile,
    deadline: &Deadline,
) -> Result<Scores, FitError> {
    let k = profile.priorities.len();
    let mut priorities = Vec::with_capacity(k);
    let mut details = Vec::with_capacity(k);
    let mut totals: Vec<NotNan<f64>> = Vec::new();
    for wp in &profile.priorities {
        let values = if wp.priority.relative_to_candidates() {
            let mut recorded = Vec::with_capacity(positions.len());
            let values = wp
                .priority
                .raw(cx, &positions, snap, Details::record(&mut recorded));
            details.push(Some(recorded));
            values
        } else {
            details.push(None);
            wp.priority.raw(cx, &positions, snap, Details::OFF)
        };
        let mut normalized = wp.priority.normalize(&values);
        for score in &mut normalized {
            *score = if score.is_finite() {
                score.clamp(0.0, 100.0)
            } else {
                0.0
            };
        }
        // Added in the profile's order to a total that starts at 0, as explain mode does.
        let weighted = |score: f64| NotNan::new(score * wp.weight).unwrap_or_default();
        if totals.is_empty() {
            totals = normalized
                .iter()
                .map(|&score| NotNan::default() + weighted(score))
                .collect();
        } else {
            for (total, &score) in totals.iter_mut().zip(&normalized) {
                *total += weighted(score);
            }
        }
        priorities.push((normalized, values));
        deadline.check(wp.priority.name())?;
    }
    if totals.len() != positions.len() {
        totals = vec![NotNan::default(); positions.len()];
    }
    Ok(Scores {
        positions,
        totals,
        priorities,
        details,
    })
}

impl Scores {
    /// The name of seed `i`.
    pub(super) fn seed<'s>(&self, i: usize, snap: &'s Snapshot) -> &'s Arc<str> {
        &snap.columns().info(self.positions[i]).name
    }

    /// The best seed: the highest total, ties broken by [`tie_hash`] (hashed only when seeds
    /// tie); and its margin, its total less the best of the others' (`None` alone), found in
    /// the same pass.
    pub(super) fn winner(&self, cx: &ShootContext, snap: &Snapshot) -> (usize, Option<f64>) {
        let mut best = 0;
        let mut tied = false;
        let mut runner_up: Option<NotNan<f64>> = None;
        for (i, total) in self.totals.iter().enumerate().skip(1) {
            let top = self.totals[best];
            if *total > top {
                (best, tied, runner_up) = (i, false, Some(top));
            } else {
                tied |= *total == top;
                runner_up = runner_up.max(Some(*total));
            }
        }
        let margin = runner_up.map(|r| (self.totals[best] - r).into_inner());
        if !tied {
            return (best, margin);
        }
        let top = self.totals[best];
        let mut winner: Option<(u64, usize)> = None;
        for (i, total) in self.totals.iter().enumerate().skip(best) {
            if *total == top {
                let h = tie_hash(&cx.key, self.seed(i, snap));
                if winner.is_none_or(|(w, _)| h < w) {
                    winner = Some((h, i));
                }
            }
        }
        (winner.map_or(best, |(_, i)| i), margin)
    }

    /// The full score breakdown of seed `i`, with its details.
    pub(super) fn breakdown(
        &self,
        cx: &ShootContext,
        i: usize,
        snap: &Snapshot,
        profile: &Profile,
    ) -> SeedScore {
        let seed = [self.positions[i]];
        let priorities = profile
            .priorities
            .iter()
            .enumerate()
            .map(|(j, wp)| {
                let (scores, values) = &self.priorities[j];
                let (score, raw) = (scores[i], values[i]);
                let detail = match &self.details[j] {
                    Some(details) => details.get(i).cloned().unwrap_or_default(),
                    None => {
                        let mut detail = Vec::with_capacity(1);
                        wp.priority
                            .raw(cx, &seed, snap, Details::record(&mut detail));
                        detail.pop().unwrap_or_default()
                    }
                };
                PriorityScore {
                    name: wp.priority.name(),
                    weight: wp.weight,
                    score,
                    weighted: score * wp.weight,
                    raw,
                    detail,
                }
            })
            .collect();
        let name = self.seed(i, snap);
        SeedScore {
            seed: Arc::clone(name),
            total: self.totals[i],
            priorities,
            tie_break: tie_hash(&cx.key, name),
        }
    }
}
