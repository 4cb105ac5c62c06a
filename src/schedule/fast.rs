//! The production decision's evaluation: the profile's stages compiled for one shoot into
//! checks on the snapshot's per-seed columns, and scores kept in flat arrays.
//!
//! A stage that keeps every seed for this shoot (no selector, no zones asked for, no access
//! restriction requested, …) is dropped; the cheap per-seed checks (usable, provider type,
//! zone count, emergency stop, capacity) read the columns; every other predicate runs as it
//! does in [`super::schedule`], returning its verdict only. Priorities give raw values without
//! details ([`crate::priorities::Priority::values`]); the winner alone gets its details.
//! `tests/fast_path.rs` checks all of it against the reference pipeline.

use std::sync::Arc;

use ordered_float::NotNan;

use super::{PriorityScore, SeedScore, tie_hash};
use crate::context::ShootContext;
use crate::predicates::{Predicate, SetStep, Stage};
use crate::priorities::RawScore;
use crate::profile::Profile;
use crate::schedule::FitError;
use crate::snapshot::{SeedColumns, SeedInfo, SeedSet, Snapshot};

/// One stage, compiled for one shoot.
enum Check<'p> {
    Usable,
    /// Allowed per provider id.
    Provider(Vec<bool>),
    AtLeastThreeZones,
    NoEmergencyStop,
    /// Seeds without taints pass; the others are asked.
    Taints(&'p dyn Predicate),
    Capacity,
    Filter(&'p dyn Predicate),
    Narrow(&'p dyn SetStep),
}

/// The checks of `stages` for this shoot, stages that keep every seed left out.
fn compile<'p>(cx: &ShootContext, stages: &'p [Stage], cols: &SeedColumns) -> Vec<Check<'p>> {
    let mut checks = Vec::with_capacity(stages.len());
    for stage in stages {
        let p = match stage {
            Stage::Narrow(step) => {
                checks.push(Check::Narrow(&**step));
                continue;
            }
            Stage::Filter(p) => &**p,
        };
        let check = match p.name() {
            "Usable" => Check::Usable,
            "CloudProfileSelector" if cx.cloud_profile_selector.is_none() => continue,
            "ShootSelector" if cx.shoot_selector.is_none() => continue,
            "Provider" => {
                let allowed = &cx.cloud_profile.provider_types;
                Check::Provider(
                    cols.providers()
                        .iter()
                        .map(|seed| {
                            if allowed.is_empty() {
                                *seed == cx.provider
                            } else {
                                allowed.iter().any(|p| p == "*" || p == seed)
                            }
                        })
                        .collect(),
                )
            }
            "HighAvailabilityZones" if !cx.zone_ha => continue,
            "HighAvailabilityZones" => Check::AtLeastThreeZones,
            "Zones" if cx.zone_ha => continue,
            "Zones" if cx.control_plane_zones.is_empty() && cx.worker_zones.is_empty() => {
                continue;
            }
            "AccessRestrictions" if cx.access_restrictions.is_empty() => continue,
            "EmergencyStop" => Check::NoEmergencyStop,
            "Networks" if !cx.nets.present => continue,
            "Taints" => Check::Taints(p),
            "SeedCapacity" => Check::Capacity,
            _ => Check::Filter(p),
        };
        checks.push(check);
    }
    checks
}

/// The positions that pass `stages`, in order. `whole` says `positions` is every seed;
/// otherwise a set step that needs the others makes this `None`.
pub(super) fn survivors(
    cx: &ShootContext,
    mut positions: Vec<u32>,
    stages: &[Stage],
    snap: &Snapshot,
    whole: bool,
) -> Result<Option<Vec<u32>>, FitError> {
    let cols = snap.columns();
    for check in compile(cx, stages, cols) {
        if positions.is_empty() {
            break;
        }
        match check {
            Check::Usable => positions.retain(|&i| cols.info(i).usable.is_ok()),
            Check::Provider(allowed) => {
                positions.retain(|&i| allowed[cols.provider(i) as usize]);
            }
            Check::AtLeastThreeZones => positions.retain(|&i| cols.info(i).zones.len() >= 3),
            Check::NoEmergencyStop => positions.retain(|&i| !cols.info(i).emergency_stop),
            Check::Taints(p) => positions.retain(|&i| {
                let seed = cols.info(i);
                seed.taints.is_empty() || p.filter(cx, seed, snap).is_ok()
            }),
            Check::Capacity => {
                positions.retain(|&i| cols.capacity(i).is_none_or(|c| cols.shoots(i) < c));
            }
            Check::Filter(p) => positions.retain(|&i| p.filter(cx, cols.info(i), snap).is_ok()),
            Check::Narrow(step) => {
                let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
                let verdicts = if whole {
                    step.narrow(cx, &seeds, snap)?
                } else {
                    match step.narrow_part(cx, &seeds, snap)? {
                        Some(v) => v,
                        None => return Ok(None),
                    }
                };
                let mut verdicts = verdicts.into_iter();
                positions.retain(|_| verdicts.next().flatten().is_none());
            }
        }
    }
    Ok(Some(positions))
}

/// The scores of the seeds that passed every stage, in flat arrays.
pub struct Scores {
    pub seeds: Vec<Arc<str>>,
    /// per seed
    pub totals: Vec<NotNan<f64>>,
    /// per seed and priority (`seed * priorities + priority`): (normalised score, raw value)
    pub scores: Vec<(f64, f64)>,
    /// per priority: the raw values with details, when the priority computes them only so
    details: Vec<Option<Vec<RawScore>>>,
    positions: Vec<u32>,
}

/// Scores `positions` (not empty) with the profile's priorities.
pub(super) fn score(
    cx: &ShootContext,
    positions: Vec<u32>,
    snap: &Snapshot,
    profile: &Profile,
) -> Scores {
    let cols = snap.columns();
    let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
    let set = SeedSet {
        seeds: &seeds,
        positions: &positions,
    };
    let n = seeds.len();
    let k = profile.priorities.len();
    let mut totals = vec![NotNan::default(); n];
    let mut scores = vec![(0.0, 0.0); n * k];
    let mut details = Vec::with_capacity(k);
    for (j, wp) in profile.priorities.iter().enumerate() {
        let raw = match wp.priority.values(cx, set, snap) {
            Some(values) => {
                details.push(None);
                values
                    .into_iter()
                    .map(|value| RawScore {
                        value,
                        detail: Default::default(),
                    })
                    .collect()
            }
            None => {
                let raw = wp.priority.raw(cx, &seeds, snap);
                details.push(Some(raw.clone()));
                raw
            }
        };
        let normalized = wp.priority.normalize(&raw);
        for (i, (raw, score)) in raw.iter().zip(normalized).enumerate() {
            let score = if score.is_finite() {
                score.clamp(0.0, 100.0)
            } else {
                0.0
            };
            totals[i] += NotNan::new(score * wp.weight).unwrap_or_default();
            scores[i * k + j] = (score, raw.value);
        }
    }
    Scores {
        seeds: seeds.iter().map(|s| Arc::clone(&s.name)).collect(),
        totals,
        scores,
        details,
        positions,
    }
}

impl Scores {
    /// The best seed: the highest total, ties broken by [`tie_hash`] (hashed only for the seeds
    /// that tie).
    pub fn winner(&self, cx: &ShootContext) -> usize {
        let Some(best) = self.totals.iter().max() else {
            return 0;
        };
        let mut winner: Option<(u64, usize)> = None;
        for (i, total) in self.totals.iter().enumerate() {
            if total == best {
                let h = tie_hash(&cx.key, &self.seeds[i]);
                if winner.is_none_or(|(w, _)| h < w) {
                    winner = Some((h, i));
                }
            }
        }
        winner.map_or(0, |(_, i)| i)
    }

    /// The full score breakdown of seed `i`, with its details.
    pub(super) fn breakdown(
        &self,
        cx: &ShootContext,
        i: usize,
        snap: &Snapshot,
        profile: &Profile,
    ) -> SeedScore {
        let cols = snap.columns();
        let k = profile.priorities.len();
        let seed = [cols.info(self.positions[i])];
        let priorities = profile
            .priorities
            .iter()
            .enumerate()
            .map(|(j, wp)| {
                let (score, raw) = self.scores[i * k + j];
                let detail = match &self.details[j] {
                    Some(details) => details[i].detail.clone(),
                    None => wp
                        .priority
                        .raw(cx, &seed, snap)
                        .pop()
                        .map(|r| r.detail)
                        .unwrap_or_default(),
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
        SeedScore {
            seed: Arc::clone(&self.seeds[i]),
            total: self.totals[i],
            priorities,
            tie_break: tie_hash(&cx.key, &self.seeds[i]),
        }
    }
}
