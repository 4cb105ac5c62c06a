//! The filtering half of the one decision pipeline, in its two modes.
//!
//! Each stage is prepared once per decision ([`Predicate::prepare`]) and says, for this shoot,
//! how it can be answered from the snapshot's per-seed columns ([`FastCheck`], [`SetCheck`]):
//! left out (`Skip`), a flag, a bitmap, the provider index, capacity, or asked per seed. The
//! pipeline knows this vocabulary, never which plugin speaks it.
//!
//! [`Mode::Explain`] runs every seed through every stage and keeps, for each rejected seed, the
//! first stage that rejected it with that stage's reason. [`Mode::Fast`] runs the same stages on
//! the same checks, but first only on the region strategy's candidates ([`SetStep::candidates`],
//! tier by tier: kube-scheduler's PreFilter narrowing the nodes), and records no reason: when no
//! candidate is left, it runs every seed through every stage as explain mode does, noting only
//! which stage rejected each seed; the reasons are asked for only when no seed fits at all, from
//! the stage that rejected the seed.
//!
//! [`Predicate::prepare`]: crate::predicates::Predicate::prepare
//! [`SetStep::candidates`]: crate::predicates::SetStep::candidates

use std::sync::Arc;

use super::{FitError, Rejection};
use crate::budget::Deadline;
use crate::context::ShootContext;
use crate::predicates::{FastCheck, Prepared, SetCheck, Stage};
use crate::reason::{Counter, Reason};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};
use candidates::{compact, compact_within, from_candidates};

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

/// The stages of a profile prepared for one shoot: each filter's state, once per decision.
pub(super) struct Prepare<'p> {
    stages: &'p [Stage],
    states: Vec<Prepared>,
}

impl<'p> Prepare<'p> {
    pub(super) fn new(cx: &ShootContext, stages: &'p [Stage]) -> Self {
        let states = stages
            .iter()
            .map(|stage| match stage {
                Stage::Filter(p) => p.prepare(cx),
                Stage::Narrow(_) => Prepared::default(),
            })
            .collect();
        Prepare { stages, states }
    }
}

mod candidates;

/// How one stage is answered for one shoot.
enum Check<'a> {
    Filter(FastCheck<'a>),
    Set(SetCheck<'a>),
}

/// One stage, prepared and checked for one shoot.
struct Step<'a> {
    stage: &'a Stage,
    state: &'a Prepared,
    check: Check<'a>,
}

impl Step<'_> {
    /// A per-seed stage's verdict on the seed at position `i`.
    fn passes(&self, cx: &ShootContext, i: u32, cols: &SeedColumns, snap: &Snapshot) -> bool {
        let (Stage::Filter(p), Check::Filter(check)) = (self.stage, &self.check) else {
            return true;
        };
        let ask = || p.passes(cx, self.state, cols.info(i), snap);
        match check {
            FastCheck::Skip => true,
            FastCheck::Flag(flag) => cols.flags(i) & flag != 0 || ask(),
            FastCheck::Providers(allowed) => allowed[cols.provider(i) as usize],
            FastCheck::Bitmap(matches) => matches[i as usize],
            FastCheck::SharedBitmap(matches) => matches[i as usize],
            FastCheck::AccessBits {
                required,
                requested,
            } => cols.offers_access(i, *required, *requested),
            FastCheck::Capacity => cols.has_room(i),
            FastCheck::Ask => ask(),
        }
    }

    /// Why the stage rejects the seed at position `i` (a per-seed stage asks its filter).
    fn reason(
        &self,
        cx: &ShootContext,
        i: u32,
        cols: &SeedColumns,
        snap: &Snapshot,
    ) -> Option<Reason> {
        match self.stage {
            Stage::Filter(p) => p.filter(cx, self.state, cols.info(i), snap).err(),
            Stage::Narrow(_) => None,
        }
    }
}

/// The stages' checks for this shoot, stages that keep every seed left out. `every_seed`: the
/// decision evaluates every seed (a check may then compute something for all of them).
fn compile<'a>(
    cx: &'a ShootContext,
    prepared: &'a Prepare,
    stages: usize,
    cols: &'a SeedColumns,
    every_seed: bool,
) -> Vec<Step<'a>> {
    let mut steps = Vec::with_capacity(stages);
    for (stage, state) in prepared.stages[..stages].iter().zip(&prepared.states) {
        let check = match stage {
            Stage::Filter(p) => match p.fast_check(cx, state, cols, every_seed) {
                FastCheck::Skip => continue,
                check => Check::Filter(check),
            },
            Stage::Narrow(step) => match step.fast_check(cx, cols) {
                SetCheck::Skip => continue,
                check => Check::Set(check),
            },
        };
        steps.push(Step {
            stage,
            state,
            check,
        });
    }
    steps
}

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
    let (kept, rejected_by) = every_seed(cx, &steps, snap, mode, deadline)?;
    if mode == Mode::Fast && !kept.is_empty() {
        return Ok(Filtered {
            kept,
            rejected: Vec::new(),
        });
    }
    if kept.is_empty() && mode == Mode::Fast {
        let mut counter = Counter::default();
        each_rejection(cx, &steps, rejected_by, snap, |i, _, reason| {
            counter.add(&cols.info(i).name, reason)
        });
        return Err(FitError::NoFit {
            total: cols.len(),
            tally: counter.finish(),
            rejected: Vec::new(),
        });
    }
    let mut rejected = Vec::with_capacity(cols.len() - kept.len());
    each_rejection(cx, &steps, rejected_by, snap, |i, stage, reason| {
        rejected.push(Rejection {
            seed: Arc::clone(&cols.info(i).name),
            stage,
            reason: reason.clone(),
        })
    });
    if kept.is_empty() {
        return Err(FitError::no_fit(cols.len(), rejected));
    }
    Ok(Filtered { kept, rejected })
}

/// Per seed that a stage rejected: that stage (its index among `steps`) and, from a set step or
/// in explain mode, its reason.
type RejectedBy = Vec<Option<(usize, Option<Reason>)>>;

/// Every seed through `steps` (every stage, the region strategy included): the positions that
/// pass, and per seed the stage that rejected it. Stage by stage, each over the seeds still
/// left, so a seed's stage is the first that rejects it; a per-seed stage answers from the
/// columns where it can (one tight loop per stage), and asks its filter otherwise. Explain mode
/// asks a rejecting filter for its reason at once (a seed its filter then keeps goes on); fast
/// mode leaves that to [`each_rejection`], needed only when no seed is left.
fn every_seed(
    cx: &ShootContext,
    steps: &[Step],
    snap: &Snapshot,
    mode: Mode,
    deadline: &Deadline,
) -> Result<(Vec<u32>, RejectedBy), FitError> {
    let cols = snap.columns();
    let total = cols.len();
    let mut positions: Vec<u32> = (0..total as u32).collect();
    let mut rejected: RejectedBy = Vec::new();
    rejected.resize_with(total, || None);
    for (k, step) in steps.iter().enumerate() {
        if positions.is_empty() {
            break;
        }
        match (step.stage, &step.check) {
            (Stage::Filter(_), Check::Filter(check)) => {
                let mut reject = |i: u32| match mode {
                    Mode::Fast => {
                        rejected[i as usize] = Some((k, None));
                        false
                    }
                    Mode::Explain => match step.reason(cx, i, cols, snap) {
                        None => true,
                        reason => {
                            rejected[i as usize] = Some((k, reason));
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
                    FastCheck::Providers(allowed) => {
                        compact(pos, |i| allowed[cols.provider(i) as usize] || reject(i))
                    }
                    FastCheck::Bitmap(matches) => {
                        compact(pos, |i| matches[i as usize] || reject(i))
                    }
                    FastCheck::SharedBitmap(matches) => {
                        compact(pos, |i| matches[i as usize] || reject(i))
                    }
                    FastCheck::AccessBits {
                        required,
                        requested,
                    } => compact(pos, |i| {
                        cols.offers_access(i, *required, *requested) || reject(i)
                    }),
                    FastCheck::Capacity => compact(pos, |i| cols.has_room(i) || reject(i)),
                    FastCheck::Flag(flag) => compact_within(
                        pos,
                        |i| cols.flags(i) & flag != 0 || ask(i) || reject(i),
                        within,
                    )?,
                    FastCheck::Ask => compact_within(pos, |i| ask(i) || reject(i), within)?,
                }
            }
            (
                Stage::Narrow(_),
                Check::Set(SetCheck::Prefer {
                    flag,
                    otherwise,
                    reason,
                }),
            ) => {
                let preferred = |i: u32| cols.flags(i) & flag != 0 || otherwise(i);
                if positions.iter().any(|&i| preferred(i)) {
                    positions.retain(|&i| {
                        preferred(i) || {
                            rejected[i as usize] = Some((k, Some(reason.clone())));
                            false
                        }
                    });
                }
            }
            (Stage::Narrow(set), _) => {
                let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
                let mut verdicts = set.narrow(cx, &seeds, snap)?.into_iter();
                positions.retain(|&i| match verdicts.next().flatten() {
                    None => true,
                    Some(reason) => {
                        rejected[i as usize] = Some((k, Some(reason)));
                        false
                    }
                });
            }
            _ => {}
        }
        deadline.check(step.stage.name())?;
    }
    Ok((positions, rejected))
}

/// Each rejected seed in name order (its position), with its stage's name and reason (asked
/// now when not yet known; a stage answered from the provider types is asked once per type).
fn each_rejection(
    cx: &ShootContext,
    steps: &[Step],
    rejected_by: RejectedBy,
    snap: &Snapshot,
    mut each: impl FnMut(u32, &'static str, &Reason),
) {
    let cols = snap.columns();
    let mut by_provider: Vec<Option<Option<Reason>>> = Vec::new();
    let mut by_provider_step = usize::MAX;
    for (i, r) in rejected_by.into_iter().enumerate() {
        let Some((k, known)) = r else {
            continue;
        };
        let i = i as u32;
        let step = &steps[k];
        let asked;
        let reason = match &known {
            Some(reason) => reason,
            None if matches!(step.check, Check::Filter(FastCheck::Providers(_))) => {
                if by_provider_step != k {
                    (by_provider, by_provider_step) = (vec![None; cols.providers().len()], k);
                }
                match by_provider[cols.provider(i) as usize]
                    .get_or_insert_with(|| step.reason(cx, i, cols, snap))
                {
                    Some(reason) => reason,
                    None => continue,
                }
            }
            None => match step.reason(cx, i, cols, snap) {
                Some(reason) => {
                    asked = reason;
                    &asked
                }
                None => continue,
            },
        };
        each(i, step.stage.name(), reason);
    }
}

/// Every seed where a stage's check for this shoot (columns, flags, [`Predicate::passes`])
/// disagrees with its filter's [`Predicate::filter`]: `(stage, seed, check's verdict)`. Empty
/// when each plugin's fast answers are its filter's (a test hook: the `test-util` feature).
///
/// [`Predicate::passes`]: crate::predicates::Predicate::passes
/// [`Predicate::filter`]: crate::predicates::Predicate::filter
#[cfg(any(test, feature = "test-util"))]
pub(super) fn disagreements(
    cx: &ShootContext,
    stages: &[Stage],
    snap: &Snapshot,
) -> Vec<super::Disagreement> {
    let cols = snap.columns();
    let prepared = Prepare::new(cx, stages);
    let mut found = Vec::new();
    for every_seed in [true, false] {
        for step in compile(cx, &prepared, stages.len(), cols, every_seed) {
            let Stage::Filter(p) = step.stage else {
                continue;
            };
            for i in 0..cols.len() as u32 {
                let check = step.passes(cx, i, cols, snap);
                let asked = p.passes(cx, step.state, cols.info(i), snap);
                let filter = p.filter(cx, step.state, cols.info(i), snap).is_ok();
                if check != filter || asked != filter {
                    found.push((p.name(), Arc::clone(&cols.info(i).name), check));
                }
            }
        }
    }
    found
}
