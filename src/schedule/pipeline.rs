//! The filtering half of the one decision pipeline, in its two modes.
//!
//! Each stage is prepared once per decision ([`Predicate::prepare`]) and says, for this shoot,
//! how it can be answered from the snapshot's per-seed columns ([`FastCheck`], [`SetCheck`]):
//! left out (`Skip`), a flag, a bitmap, a verdict per group, a read of the columns, a preference
//! or a claim over positions, or asked per seed. The pipeline knows this vocabulary, never which plugin
//! speaks it.
//!
//! [`Mode::Explain`] runs every seed through every stage and keeps, for each rejected seed, the
//! first stage that rejected it with that stage's reason. [`Mode::Fast`] runs the same stages on
//! the same checks, but first only on the region strategy's candidates ([`SetStep::candidates`],
//! tier by tier: kube-scheduler's PreFilter narrowing the nodes), and records no reason: when no
//! candidate is left, it runs every seed through every stage as explain mode does, noting only
//! the seeds each stage rejected. Only when no seed fits at all are the rejections counted by
//! reason ([`counted`]): a shared reason once for all its seeds (a set step's, or a filter's
//! [`Predicate::shared_reason`]), a stage answered per group once per group, the other seeds
//! asked one by one.
//!
//! The files call one way: this one runs the stages, `candidates.rs` narrows fast mode's start
//! to the region strategy's candidates, and both run the steps of `steps.rs` (each stage
//! prepared and answered for one shoot), which calls neither; `candidates.rs` goes back to a
//! step once per stage and tier, which is the one return on a decision's way.
//!
//! [`Predicate::prepare`]: crate::predicates::Predicate::prepare
//! [`Predicate::shared_reason`]: crate::predicates::Predicate::shared_reason
//! [`SetStep::candidates`]: crate::predicates::SetStep::candidates

use std::sync::Arc;

use crate::budget::Deadline;
use crate::context::ShootContext;
use crate::outcome::{FitError, Rejection};
use crate::predicates::{FastCheck, SetCheck, Stage};
use crate::reason::{Counter, Reason, Tally};
use crate::snapshot::{SeedInfo, Snapshot};
use candidates::{compact, compact_within, from_candidates, over_positions};

/// A filter (its stage name), a seed, and the verdict of the filter's fast answer on it.
#[cfg(any(test, feature = "test-util"))]
pub type Disagreement = (&'static str, Arc<str>, bool);

/// What a decision records besides its verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// Verdicts and totals only: reasons are built only when no seed fits.
    Fast,
    /// Every rejection with its reason, every score with its detail.
    Explain,
}

/// The seeds that passed every stage (positions in the columns, in order) and, in explain
/// mode, the rejected ones in name order.
pub(super) struct Filtered {
    pub(super) kept: Vec<u32>,
    pub(super) rejected: Vec<Rejection>,
}

mod candidates;
mod steps;

pub(super) use steps::Prepare;
use steps::{Check, Step, compile};

/// Filters the snapshot's seeds through the prepared stages in `mode`: the seeds kept, or the
/// error of a shoot no seed fits (every seed under the first stage that rejected it, with that
/// stage's reason).
pub(super) fn filter(
    cx: &ShootContext,
    prepared: &Prepare,
    snap: &Snapshot,
    mode: Mode,
    deadline: &Deadline,
) -> Result<Filtered, FitError> {
    let cols = snap.columns();
    if mode == Mode::Fast
        && let Some(kept) = from_candidates(cx, prepared, snap, deadline)?
        && !kept.is_empty()
    {
        return Ok(Filtered {
            kept,
            rejected: Vec::new(),
        });
    }
    let steps = compile(cx, prepared, prepared.stages.len(), cols, true);
    let (kept, dropped) = every_seed(cx, &steps, snap, mode, deadline)?;
    match mode {
        Mode::Fast if kept.is_empty() => Err(FitError::NoFit {
            total: cols.len(),
            tally: counted(cx, &steps, &dropped, snap),
            rejected: Vec::new(),
        }),
        Mode::Fast => Ok(Filtered {
            kept,
            rejected: Vec::new(),
        }),
        Mode::Explain => {
            let rejected = listed(cx, &steps, dropped, snap);
            if kept.is_empty() {
                return Err(FitError::no_fit(cols.len(), rejected));
            }
            Ok(Filtered { kept, rejected })
        }
    }
}

/// The seeds one stage rejected (positions, in order) and their reasons.
struct Dropped {
    /// The stage's index among the steps.
    step: usize,
    seeds: Vec<u32>,
    reasons: Reasons,
}

/// The reasons of the seeds a stage rejected.
enum Reasons {
    /// Not asked yet (fast mode's per-seed stages): asked only when no seed is left.
    Later,
    /// One reason for every seed (a set step's shared reason).
    Shared(Reason),
    /// One per seed, in the order of the seeds.
    Each(Vec<Reason>),
}

/// Every seed through `steps` (every stage, the region strategy included): the positions that
/// pass, and per stage the seeds it rejected, so a seed's stage is the first that rejects it.
/// Stage by stage, each over the seeds still left; a per-seed stage answers from the columns
/// where it can (one tight loop per stage), and asks its filter otherwise. Explain mode asks a
/// rejecting filter for its reason at once (a seed its filter then keeps goes on); fast mode
/// leaves that to [`counted`], needed only when no seed is left.
fn every_seed(
    cx: &ShootContext,
    steps: &[Step],
    snap: &Snapshot,
    mode: Mode,
    deadline: &Deadline,
) -> Result<(Vec<u32>, Vec<Dropped>), FitError> {
    let cols = snap.columns();
    let mut positions: Vec<u32> = (0..cols.len() as u32).collect();
    let mut dropped = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        if positions.is_empty() {
            break;
        }
        // Room for every seed left: growing it seed by seed costs more than the allocation.
        let mut seeds = Vec::with_capacity(positions.len());
        let reasons = match (step.stage, &step.check) {
            (Stage::Filter(_), Check::Filter(check)) => {
                let mut reasons = Vec::new();
                let mut reject = |i: u32| match mode {
                    Mode::Fast => {
                        seeds.push(i);
                        false
                    }
                    Mode::Explain => match step.reason(cx, i, cols, snap) {
                        None => true,
                        Some(reason) => {
                            seeds.push(i);
                            reasons.push(reason);
                            false
                        }
                    },
                };
                let ask = |i: u32| step.passes(cx, i, cols, snap);
                let pos = &mut positions;
                let within = || deadline.check(step.stage.name());
                // One loop per kind of check, so each is a tight loop over the columns; a seed
                // the check does not keep is kept only if its filter, asked for the reason,
                // keeps it after all.
                match check {
                    FastCheck::Skip => {}
                    FastCheck::Groups(allowed) => {
                        compact(pos, |i| allowed[cols.group(i) as usize] || reject(i))
                    }
                    FastCheck::Bitmap(matches) => {
                        compact(pos, |i| matches[i as usize] || reject(i))
                    }
                    FastCheck::SharedBitmap(matches) => {
                        compact(pos, |i| matches[i as usize] || reject(i))
                    }
                    FastCheck::Read(read) => compact(pos, |i| read(cols, i) || reject(i)),
                    FastCheck::FlagOnly(flag) => {
                        compact(pos, |i| cols.flags(i) & flag != 0 || reject(i))
                    }
                    FastCheck::FlagOr { flag, marked } => compact(pos, |i| {
                        cols.flags(i) & flag != 0 || marked[i as usize] || reject(i)
                    }),
                    FastCheck::Flag(flag) => compact_within(
                        pos,
                        |i| cols.flags(i) & flag != 0 || ask(i) || reject(i),
                        within,
                    )?,
                    FastCheck::Ask => compact_within(pos, |i| ask(i) || reject(i), within)?,
                }
                match mode {
                    Mode::Fast => Reasons::Later,
                    Mode::Explain => Reasons::Each(reasons),
                }
            }
            (
                Stage::Narrow(_),
                Check::Set(
                    check @ (SetCheck::Prefer { reason, .. } | SetCheck::Claim { reason, .. }),
                ),
            ) => {
                over_positions(check, cols, &mut positions, |i| seeds.push(i));
                Reasons::Shared(reason.clone())
            }
            (Stage::Narrow(set), _) => {
                let infos: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
                let mut verdicts = set.narrow(cx, &infos, snap)?.into_iter();
                let mut reasons = Vec::new();
                compact(&mut positions, |i| match verdicts.next().flatten() {
                    None => true,
                    Some(reason) => {
                        seeds.push(i);
                        reasons.push(reason);
                        false
                    }
                });
                Reasons::Each(reasons)
            }
            (Stage::Filter(_), Check::Set(_)) => unreachable!("a set check belongs to a set step"),
        };
        if !seeds.is_empty() {
            dropped.push(Dropped {
                step: k,
                seeds,
                reasons,
            });
        }
        deadline.check(step.stage.name())?;
    }
    Ok((positions, dropped))
}

/// The rejections of a shoot no seed fits, counted by reason: a shared reason once for its
/// seeds (a set step's, or the one reason a filter rejects every seed for), a stage answered
/// per group once per group (one seed of each asked for the reason), the other seeds one by one
/// (their stage asked now).
fn counted(cx: &ShootContext, steps: &[Step], dropped: &[Dropped], snap: &Snapshot) -> Tally {
    let cols = snap.columns();
    let name = |i: &u32| &cols.info(*i).name;
    let mut counter = Counter::default();
    for d in dropped {
        let step = &steps[d.step];
        match &d.reasons {
            Reasons::Shared(reason) => {
                counter.add_many(reason, d.seeds.len(), d.seeds.iter().map(name))
            }
            Reasons::Each(reasons) => {
                for (i, reason) in d.seeds.iter().zip(reasons) {
                    counter.add(name(i), reason);
                }
            }
            Reasons::Later if let Some(reason) = step.shared_reason(cx) => {
                counter.add_many(&reason, d.seeds.len(), d.seeds.iter().map(name))
            }
            Reasons::Later if matches!(step.check, Check::Filter(FastCheck::Groups(_))) => {
                // Per group: its seeds and the first of them.
                let mut per_group = vec![(0usize, 0u32); cols.groups().len()];
                for &i in &d.seeds {
                    let (n, first) = &mut per_group[cols.group(i) as usize];
                    if *n == 0 {
                        *first = i;
                    }
                    *n += 1;
                }
                for (g, &(n, first)) in per_group.iter().enumerate() {
                    if n == 0 {
                        continue;
                    }
                    if let Some(reason) = step.reason(cx, first, cols, snap) {
                        let of_group = d.seeds.iter().filter(|&&i| cols.group(i) as usize == g);
                        counter.add_many(&reason, n, of_group.map(name));
                    }
                }
            }
            Reasons::Later => {
                for &i in &d.seeds {
                    if let Some(reason) = step.reason(cx, i, cols, snap) {
                        counter.add(name(&i), &reason);
                    }
                }
            }
        }
    }
    counter.finish()
}

/// Every rejected seed with its stage's name and reason, in name order (position order).
fn listed(
    cx: &ShootContext,
    steps: &[Step],
    dropped: Vec<Dropped>,
    snap: &Snapshot,
) -> Vec<Rejection> {
    let cols = snap.columns();
    let mut all: Vec<(u32, &'static str, Reason)> = Vec::new();
    for d in dropped {
        let step = &steps[d.step];
        let stage = step.stage.name();
        match d.reasons {
            Reasons::Shared(reason) => {
                all.extend(d.seeds.iter().map(|&i| (i, stage, reason.clone())))
            }
            Reasons::Each(reasons) => {
                all.extend(d.seeds.into_iter().zip(reasons).map(|(i, r)| (i, stage, r)))
            }
            Reasons::Later => all.extend(
                d.seeds
                    .into_iter()
                    .filter_map(|i| Some((i, stage, step.reason(cx, i, cols, snap)?))),
            ),
        }
    }
    all.sort_unstable_by_key(|r| r.0);
    all.into_iter()
        .map(|(i, stage, reason)| Rejection {
            seed: Arc::clone(&cols.info(i).name),
            stage,
            reason,
        })
        .collect()
}

/// Every seed where a stage's check for this shoot (columns, flags, its verdict alone)
/// disagrees with its filter's reason ([`Predicate::check`]), or a set step's preference or claim with
/// its [`SetStep::narrow`]: `(stage, seed, check's verdict)`. Empty when each plugin's fast
/// answers are its filter's (a test hook: the `test-util` feature).
///
/// [`SetStep::narrow`]: crate::predicates::SetStep::narrow
///
/// [`Predicate::check`]: crate::predicates::Predicate::check
#[cfg(any(test, feature = "test-util"))]
pub(super) fn disagreements(
    cx: &ShootContext,
    stages: &[Stage],
    snap: &Snapshot,
) -> Result<Vec<Disagreement>, FitError> {
    let cols = snap.columns();
    let prepared = Prepare::new(cx, stages)?;
    let mut found = Vec::new();
    for every_seed in [true, false] {
        for step in compile(cx, &prepared, stages.len(), cols, every_seed) {
            let Stage::Filter(p) = step.stage else {
                continue;
            };
            let shared = step.shared_reason(cx);
            for i in 0..cols.len() as u32 {
                let check = step.passes(cx, i, cols, snap);
                let asked = p.passes(cx, step.state, cols.info(i), snap);
                let filter = p.filter(cx, step.state, cols.info(i), snap);
                // A shared reason must be the reason of every seed the filter rejects.
                let other_reason = shared
                    .as_ref()
                    .is_some_and(|s| filter.as_ref().is_err_and(|r| r != s));
                if check != filter.is_ok() || asked != filter.is_ok() || other_reason {
                    found.push((p.name(), Arc::clone(&cols.info(i).name), check));
                }
            }
        }
    }
    // A set step's check against its `narrow`, on every seed and on two halves of them (as the
    // seeds left by the stages before it).
    for step in compile(cx, &prepared, stages.len(), cols, true) {
        let (Stage::Narrow(set), Check::Set(check)) = (step.stage, &step.check) else {
            continue;
        };
        for part in [
            |_: u32| true,
            |i: u32| i.is_multiple_of(2),
            |i: u32| !i.is_multiple_of(2),
        ] {
            let seeds: Vec<u32> = (0..cols.len() as u32).filter(|&i| part(i)).collect();
            if matches!(check, SetCheck::Narrow | SetCheck::Skip) {
                continue;
            }
            let mut kept = seeds.clone();
            over_positions(check, cols, &mut kept, |_| {});
            let infos: Vec<&SeedInfo> = seeds.iter().map(|&i| cols.info(i)).collect();
            let Ok(verdicts) = set.narrow(cx, &infos, snap) else {
                continue;
            };
            for (&i, verdict) in seeds.iter().zip(verdicts) {
                let check = kept.binary_search(&i).is_ok();
                if check != verdict.is_none() {
                    found.push((set.name(), Arc::clone(&cols.info(i).name), check));
                }
            }
        }
    }
    Ok(found)
}

/// How many seeds each stage rejected for this shoot, by stage name, in stage order (stages
/// that rejected none left out): the same pass as fast mode's full filter (every seed, every
/// stage, each seed counted under the first stage that rejects it), without any reason.
pub(super) fn stage_counts(
    cx: &ShootContext,
    prepared: &Prepare,
    snap: &Snapshot,
) -> Result<Vec<(&'static str, usize)>, FitError> {
    let cols = snap.columns();
    let steps = compile(cx, prepared, prepared.stages.len(), cols, true);
    let (_, dropped) = every_seed(cx, &steps, snap, Mode::Fast, &Deadline::NONE)?;
    Ok(dropped
        .iter()
        .filter(|d| !d.seeds.is_empty())
        .map(|d| (steps[d.step].stage.name(), d.seeds.len()))
        .collect())
}

/// Every stage's verdict on every seed, not only the first stage that rejects it: per seed
/// (positions in order) the rejections of all stages, in stage order. What stands between a
/// shoot and each seed, for `explain`'s nearest seed. Every filter is asked with its reason.
pub(super) fn every_rejection(
    cx: &ShootContext,
    prepared: &Prepare,
    snap: &Snapshot,
) -> Result<Vec<Vec<Rejection>>, FitError> {
    let cols = snap.columns();
    let seeds: Vec<&SeedInfo> = (0..cols.len() as u32).map(|i| cols.info(i)).collect();
    let mut out: Vec<Vec<Rejection>> = vec![Vec::new(); seeds.len()];
    for (stage, state) in prepared.stages.iter().zip(&prepared.states) {
        let verdicts: Vec<Option<Reason>> = match stage {
            Stage::Filter(p) => seeds
                .iter()
                .map(|s| p.filter(cx, state, s, snap).err())
                .collect(),
            Stage::Narrow(step) => step.narrow(cx, &seeds, snap)?,
        };
        for ((rejections, seed), verdict) in out.iter_mut().zip(&seeds).zip(verdicts) {
            if let Some(reason) = verdict {
                rejections.push(Rejection {
                    seed: Arc::clone(&seed.name),
                    stage: stage.name(),
                    reason,
                });
            }
        }
    }
    Ok(out)
}
