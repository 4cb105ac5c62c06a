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

use std::sync::Arc;

use super::{FitError, Rejection};
use crate::budget::Deadline;
use crate::context::ShootContext;
use crate::predicates::{Candidates, FastCheck, Prepared, SetCheck, SetStep, Stage};
use crate::reason::Reason;
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

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
    let rejected = rejections(cx, &steps, rejected_by, snap);
    if kept.is_empty() {
        return Err(FitError::NoFit {
            total: cols.len(),
            rejected,
        });
    }
    Ok(Filtered { kept, rejected })
}

/// The seeds that pass every stage among the region strategy's candidates, tier by tier;
/// `None` when the candidates alone cannot say (the strategy does not end the pipeline, needs
/// the whole set, or a set step needs seeds outside a tier).
fn from_candidates(
    cx: &ShootContext,
    prepared: &Prepare,
    snap: &Snapshot,
    deadline: &Deadline,
) -> Result<Option<Vec<u32>>, FitError> {
    let Some((Stage::Narrow(strategy), before)) = prepared.stages.split_last() else {
        return Ok(None);
    };
    let Some(candidates) = strategy.candidates(cx, snap) else {
        return Ok(None);
    };
    let cols = snap.columns();
    let every_seed = matches!(candidates, Candidates::All);
    // The strategy's candidates replace it.
    let steps = compile(cx, prepared, before.len(), cols, every_seed);
    match candidates {
        Candidates::All => survivors(cx, None, &steps, snap, deadline),
        Candidates::Tiers(tiers) => {
            let mut kept = Some(Vec::new());
            for positions in tiers {
                kept = survivors(cx, Some(positions), &steps, snap, deadline)?;
                if kept.as_ref().is_none_or(|k| !k.is_empty()) {
                    break;
                }
            }
            Ok(kept)
        }
        Candidates::Unknown => Ok(None),
    }
}

/// The positions that pass `steps`, in order, from `start` (`None`: every seed). Starting
/// from every seed, a set step sees the set explain mode sees; from a tier, a set step that
/// needs the seeds outside the tier makes this `None`.
fn survivors(
    cx: &ShootContext,
    start: Option<Vec<u32>>,
    steps: &[Step],
    snap: &Snapshot,
    deadline: &Deadline,
) -> Result<Option<Vec<u32>>, FitError> {
    let cols = snap.columns();
    let whole = start.is_none();
    let mut kept = start;
    // Per-seed stages between two set steps do not depend on each other's order: each run of
    // them is one pass over the seeds still kept, plus a pass per stage that must ask.
    for run in steps.split_inclusive(|s| matches!(s.check, Check::Set(_))) {
        let (filters, set_step) = match run.split_last() {
            Some((last, filters)) if matches!(last.check, Check::Set(_)) => (filters, Some(last)),
            _ => (run, None),
        };
        let (mut positions, by_provider) = match kept.take() {
            Some(positions) => (positions, false),
            None => from_index(filters, cols),
        };
        keep_passing(cx, &mut positions, filters, by_provider, snap, deadline)?;
        if positions.is_empty() {
            return Ok(Some(positions));
        }
        if let Some(step) = set_step {
            let (Stage::Narrow(set), Check::Set(check)) = (step.stage, &step.check) else {
                unreachable!("a set check belongs to a set step");
            };
            match check {
                SetCheck::Prefer(preferred) => {
                    if positions.iter().any(|&i| preferred(i)) {
                        compact(&mut positions, preferred);
                    } else if !whole {
                        // The seeds outside the tier may hold a preferred one.
                        return Ok(None);
                    }
                }
                SetCheck::Narrow | SetCheck::Skip => {
                    match narrowed(cx, set.as_ref(), &positions, whole, snap)? {
                        Some(verdicts) => {
                            let mut verdicts = verdicts.into_iter();
                            positions.retain(|_| verdicts.next().flatten().is_none());
                        }
                        None => return Ok(None),
                    }
                }
            }
            deadline.check(set.name())?;
        }
        kept = Some(positions);
    }
    Ok(Some(
        kept.unwrap_or_else(|| (0..cols.len() as u32).collect()),
    ))
}

/// A set step's verdicts on `positions`: the whole remaining set, or a part of it (`None` when
/// the step cannot decide from the part).
fn narrowed(
    cx: &ShootContext,
    set: &dyn SetStep,
    positions: &[u32],
    whole: bool,
    snap: &Snapshot,
) -> Result<Option<Vec<Option<Reason>>>, FitError> {
    let cols = snap.columns();
    let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
    if whole {
        set.narrow(cx, &seeds, snap).map(Some)
    } else {
        set.narrow_part(cx, &seeds, snap)
    }
}

/// Every seed, or when one of `filters` answers from the provider types, only the seeds of the
/// allowed types, read from the columns' index (`true`: that check is done).
fn from_index(filters: &[Step], cols: &SeedColumns) -> (Vec<u32>, bool) {
    let allowed = filters.iter().find_map(|f| match &f.check {
        Check::Filter(FastCheck::Providers(allowed)) => Some(allowed),
        _ => None,
    });
    let Some(allowed) = allowed else {
        return ((0..cols.len() as u32).collect(), false);
    };
    let mut ids = (0..allowed.len() as u32).filter(|&p| allowed[p as usize]);
    let positions = match (ids.next(), ids.next()) {
        (None, _) => Vec::new(),
        (Some(only), None) => cols.of_provider(only).to_vec(),
        (Some(a), Some(b)) => {
            let mut positions: Vec<u32> = [a, b]
                .into_iter()
                .chain(ids)
                .flat_map(|p| cols.of_provider(p).iter().copied())
                .collect();
            positions.sort_unstable();
            positions
        }
    };
    (positions, true)
}

/// Keeps the positions that pass every one of `filters` (per-seed stages): one pass over the
/// positions reads the columns (provider types, bitmaps, access bits, capacity, the seed
/// flags); a seed lacking a flag is asked only by the stages of the flags it lacks. Stages that
/// ask every seed get a pass of their own, the deadline looked at every few seeds.
fn keep_passing(
    cx: &ShootContext,
    positions: &mut Vec<u32>,
    filters: &[Step],
    by_provider: bool,
    snap: &Snapshot,
    deadline: &Deadline,
) -> Result<(), FitError> {
    let cols = snap.columns();
    let mut provider: Option<&[bool]> = None;
    let mut bitmaps: Vec<&[bool]> = Vec::new();
    let mut capacity = false;
    let mut access: Option<(u64, usize)> = None;
    let mut mask = 0u8;
    let mut flagged: Vec<(u8, &Step)> = Vec::new();
    let mut asked: Vec<&Step> = Vec::new();
    let mut other: Vec<&Step> = Vec::new();
    for f in filters {
        let Check::Filter(check) = &f.check else {
            continue;
        };
        match check {
            FastCheck::Flag(flag) => {
                mask |= flag;
                flagged.push((*flag, f));
            }
            FastCheck::Providers(_) if by_provider && provider.is_none() => {
                // Started from the index of the allowed types.
                provider = Some(&[]);
            }
            FastCheck::Providers(allowed) if provider.is_none() => provider = Some(allowed),
            FastCheck::Bitmap(matches) => bitmaps.push(matches),
            FastCheck::SharedBitmap(matches) => bitmaps.push(matches),
            FastCheck::Capacity => capacity = true,
            FastCheck::AccessBits {
                required,
                requested,
            } if access.is_none() => access = Some((*required, *requested)),
            FastCheck::Ask => asked.push(f),
            FastCheck::Skip => {}
            // A second check of a kind already in its slot.
            FastCheck::Providers(_) | FastCheck::AccessBits { .. } => other.push(f),
        }
    }
    let provider = provider.filter(|allowed| !allowed.is_empty());
    compact(positions, |i| {
        provider.is_none_or(|allowed| allowed[cols.provider(i) as usize])
            && bitmaps.iter().all(|m| m[i as usize])
            && access.is_none_or(|(required, requested)| cols.offers_access(i, required, requested))
            && (!capacity || cols.has_room(i))
            && other.iter().all(|f| f.passes(cx, i, cols, snap))
            && {
                let missing = mask & !cols.flags(i);
                missing == 0
                    || flagged
                        .iter()
                        .all(|(flag, f)| flag & missing == 0 || f.passes(cx, i, cols, snap))
            }
    });
    if let Some(last) = filters.last() {
        deadline.check(last.stage.name())?;
    }
    for f in asked {
        compact_within(
            positions,
            |i| f.passes(cx, i, cols, snap),
            || deadline.check(f.stage.name()),
        )?;
    }
    Ok(())
}

/// Per seed that a stage rejected: that stage (its index among `steps`) and, from a set step or
/// in explain mode, its reason.
type RejectedBy = Vec<Option<(usize, Option<Reason>)>>;

/// Every seed through `steps` (every stage, the region strategy included): the positions that
/// pass, and per seed the stage that rejected it. The per-seed stages between two set steps are
/// one pass over the seeds, each seed asked stage by stage until one rejects it (the stages of
/// flags it carries not asked at all). Explain mode asks a rejecting filter for its reason at
/// once (a seed its filter then keeps goes on); fast mode leaves that to [`rejections`], needed
/// only when no seed is left.
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
    let mut first = 0;
    for run in steps.split_inclusive(|s| matches!(s.check, Check::Set(_))) {
        let (filters, set_step) = match run.split_last() {
            Some((last, filters)) if matches!(last.check, Check::Set(_)) => (filters, Some(last)),
            _ => (run, None),
        };
        let mask = filters.iter().fold(0, |mask, f| match f.check {
            Check::Filter(FastCheck::Flag(flag)) => mask | flag,
            _ => mask,
        });
        let mut seen = 0usize;
        let mut asked = filters.first().map(|f| f.stage.name());
        let mut over = Ok(());
        positions.retain(|&i| {
            seen += 1;
            if over.is_err() {
                return true;
            }
            if seen.is_multiple_of(CHECK_EVERY)
                && let Some(name) = asked
            {
                over = deadline.check(name);
            }
            let flagged = mask & !cols.flags(i) == 0;
            for (k, step) in filters.iter().enumerate() {
                if flagged && matches!(step.check, Check::Filter(FastCheck::Flag(_))) {
                    continue;
                }
                asked = Some(step.stage.name());
                if step.passes(cx, i, cols, snap) {
                    continue;
                }
                let reason = match mode {
                    Mode::Fast => None,
                    Mode::Explain => match step.reason(cx, i, cols, snap) {
                        None => continue,
                        reason => reason,
                    },
                };
                rejected[i as usize] = Some((first + k, reason));
                return false;
            }
            true
        });
        over?;
        if let Some(last) = filters.last() {
            deadline.check(last.stage.name())?;
        }
        first += filters.len();
        if let Some(step) = set_step
            && let Stage::Narrow(set) = step.stage
            && !positions.is_empty()
        {
            let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
            let mut verdicts = set.narrow(cx, &seeds, snap)?.into_iter();
            positions.retain(|&i| match verdicts.next().flatten() {
                None => true,
                Some(reason) => {
                    rejected[i as usize] = Some((first, Some(reason)));
                    false
                }
            });
            deadline.check(set.name())?;
        }
        first += usize::from(set_step.is_some());
    }
    Ok((positions, rejected))
}

/// The rejections in name order, each with its stage's reason (asked now when not yet known;
/// a stage answered from the provider types is asked once per type).
fn rejections(
    cx: &ShootContext,
    steps: &[Step],
    rejected_by: RejectedBy,
    snap: &Snapshot,
) -> Vec<Rejection> {
    let cols = snap.columns();
    let mut by_provider: Vec<Option<Option<Reason>>> = Vec::new();
    let mut by_provider_step = usize::MAX;
    let mut rejections = Vec::with_capacity(rejected_by.iter().flatten().count());
    rejections.extend(rejected_by.into_iter().enumerate().filter_map(|(i, r)| {
        let (k, reason) = r?;
        let i = i as u32;
        let step = &steps[k];
        let reason = match reason {
            Some(reason) => reason,
            None if matches!(step.check, Check::Filter(FastCheck::Providers(_))) => {
                if by_provider_step != k {
                    (by_provider, by_provider_step) = (vec![None; cols.providers().len()], k);
                }
                by_provider[cols.provider(i) as usize]
                    .get_or_insert_with(|| step.reason(cx, i, cols, snap))
                    .clone()?
            }
            None => step.reason(cx, i, cols, snap)?,
        };
        Some(Rejection {
            seed: Arc::clone(&cols.info(i).name),
            stage: step.stage.name(),
            reason,
        })
    }));
    rejections
}

/// As [`compact`] for a stage that asks per seed: `check` every few seeds says whether the
/// decision may go on.
fn compact_within(
    positions: &mut Vec<u32>,
    mut keep: impl FnMut(u32) -> bool,
    check: impl Fn() -> Result<(), FitError>,
) -> Result<(), FitError> {
    let mut w = 0;
    for r in 0..positions.len() {
        if r % CHECK_EVERY == CHECK_EVERY - 1 {
            check()?;
        }
        let i = positions[r];
        positions[w] = i;
        w += usize::from(keep(i));
    }
    positions.truncate(w);
    check()
}

/// Seeds a per-seed stage asks between two looks at the decision's deadline.
const CHECK_EVERY: usize = 16;

/// Keeps the positions for which `keep` holds, in order.
fn compact(positions: &mut Vec<u32>, mut keep: impl FnMut(u32) -> bool) {
    let mut w = 0;
    for r in 0..positions.len() {
        let i = positions[r];
        positions[w] = i;
        w += usize::from(keep(i));
    }
    positions.truncate(w);
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
