//! Fast mode's start: the region strategy's candidates, tier by tier, through the stages before
//! it, each run of per-seed stages one pass over the columns.

use super::steps::{Check, Prepare, Step, compile};
use crate::budget::Deadline;
use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::predicates::{Candidates, FastCheck, SetCheck, SetStep, Stage};
use crate::reason::Reason;
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

/// The seeds that pass every stage among the region strategy's candidates, tier by tier;
/// `None` when the candidates alone cannot say (the strategy does not end the pipeline, needs
/// the whole set, or a set step needs seeds outside a tier).
pub(super) fn from_candidates(
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
        let (mut positions, by_group) = match kept.take() {
            Some(positions) => (positions, false),
            None => from_index(filters, cols),
        };
        keep_passing(cx, &mut positions, filters, by_group, snap, deadline)?;
        if positions.is_empty() {
            return Ok(Some(positions));
        }
        if let Some(step) = set_step {
            let (Stage::Narrow(set), Check::Set(check)) = (step.stage, &step.check) else {
                unreachable!("a set check belongs to a set step");
            };
            match check {
                SetCheck::Prefer { .. } | SetCheck::Claim { .. } => {
                    if !over_positions(check, cols, &mut positions, |_| {}) && !whole {
                        // The seeds outside the tier may hold a preferred seed or a claimant.
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

/// Every seed, or when one of `filters` answers per group, only the members of the allowed
/// groups, in order (`true`: that check is done).
fn from_index(filters: &[Step], cols: &SeedColumns) -> (Vec<u32>, bool) {
    let allowed = filters.iter().find_map(|f| match &f.check {
        Check::Filter(FastCheck::Groups(allowed)) => Some(allowed),
        _ => None,
    });
    let Some(allowed) = allowed else {
        return ((0..cols.len() as u32).collect(), false);
    };
    let mut groups = (0..allowed.len() as u32).filter(|&g| allowed[g as usize]);
    let positions = match (groups.next(), groups.next()) {
        (None, _) => Vec::new(),
        (Some(only), None) => cols.members(only).to_vec(),
        (Some(a), Some(b)) => {
            let mut positions: Vec<u32> = [a, b]
                .into_iter()
                .chain(groups)
                .flat_map(|g| cols.members(g).iter().copied())
                .collect();
            positions.sort_unstable();
            positions
        }
    };
    (positions, true)
}

/// Keeps the positions that pass every one of `filters` (per-seed stages): one pass over the
/// positions reads the columns (groups, bitmaps, the filters' reads, the seed
/// flags); a seed lacking a flag is rejected when the flag is its stage's verdict, and otherwise
/// asked only by the stages of the flags it lacks. Stages that ask every seed get a pass of
/// their own, the deadline looked at every few seeds.
fn keep_passing(
    cx: &ShootContext,
    positions: &mut Vec<u32>,
    filters: &[Step],
    by_group: bool,
    snap: &Snapshot,
    deadline: &Deadline,
) -> Result<(), FitError> {
    let cols = snap.columns();
    let mut grouped: Option<&[bool]> = None;
    let mut bitmaps: Vec<&[bool]> = Vec::new();
    let mut reads: Vec<fn(&SeedColumns, u32) -> bool> = Vec::new();
    let mut all_of = 0u32;
    let mut flag_or: Vec<(u32, &[bool])> = Vec::new();
    let mut mask = 0u32;
    let mut flagged: Vec<(u32, &Step)> = Vec::new();
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
            FastCheck::Groups(_) if by_group && grouped.is_none() => {
                // Started from the members of the allowed groups.
                grouped = Some(&[]);
            }
            FastCheck::Groups(allowed) if grouped.is_none() => grouped = Some(allowed),
            FastCheck::Bitmap(matches) => bitmaps.push(matches),
            FastCheck::SharedBitmap(matches) => bitmaps.push(matches),
            FastCheck::Read(read) => reads.push(*read),
            FastCheck::FlagOnly(flag) => {
                mask |= flag;
                all_of |= flag;
            }
            FastCheck::FlagOr { flag, marked } => flag_or.push((*flag, marked)),
            FastCheck::Ask => asked.push(f),
            FastCheck::Skip => {}
            // A second check of a kind already in its slot.
            FastCheck::Groups(_) => other.push(f),
        }
    }
    let grouped = grouped.filter(|allowed| !allowed.is_empty());
    compact(positions, |i| {
        grouped.is_none_or(|allowed| allowed[cols.group(i) as usize])
            && bitmaps.iter().all(|m| m[i as usize])
            && reads.iter().all(|read| read(cols, i))
            && flag_or
                .iter()
                .all(|(flag, marked)| cols.flags(i) & flag != 0 || marked[i as usize])
            && other.iter().all(|f| f.passes(cx, i, cols, snap))
            && {
                let missing = mask & !cols.flags(i);
                missing == 0
                    || (missing & all_of == 0
                        && flagged
                            .iter()
                            .all(|(flag, f)| flag & missing == 0 || f.passes(cx, i, cols, snap)))
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

/// As [`compact`] for a stage that asks per seed: `check` every few seeds says whether the
/// decision may go on.
pub(super) fn compact_within(
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
pub(super) const CHECK_EVERY: usize = 16;

/// Keeps the positions for which `keep` holds, in order.
pub(super) fn compact(positions: &mut Vec<u32>, mut keep: impl FnMut(u32) -> bool) {
    let mut w = 0;
    for r in 0..positions.len() {
        let i = positions[r];
        positions[w] = i;
        w += usize::from(keep(i));
    }
    positions.truncate(w);
}

/// Whether one of `positions` is among `claimants` (both in order).
fn claimed(positions: &[u32], claimants: &[u32]) -> bool {
    if claimants.len() * 16 < positions.len() {
        return claimants.iter().any(|c| positions.binary_search(c).is_ok());
    }
    let (mut a, mut b) = (positions.iter().peekable(), claimants.iter().peekable());
    while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
        match x.cmp(&y) {
            std::cmp::Ordering::Less => _ = a.next(),
            std::cmp::Ordering::Greater => _ = b.next(),
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// Keeps the positions among `owners` (both in order), `dropped` told each other one.
fn keep_owners(positions: &mut Vec<u32>, owners: &[u32], mut dropped: impl FnMut(u32)) {
    let mut owners = owners.iter().copied().peekable();
    compact(positions, |i| {
        while owners.next_if(|&o| o < i).is_some() {}
        owners.peek() == Some(&i) || {
            dropped(i);
            false
        }
    });
}

/// Applies a set step's answer over positions (`Prefer`, `Claim`) to `positions`, `dropped`
/// told each seed it drops: `true` when a preferred seed or a claimant was among them (the step
/// narrowed), `false` when it kept every seed. Any other answer keeps every seed.
pub(super) fn over_positions(
    check: &SetCheck,
    cols: &SeedColumns,
    positions: &mut Vec<u32>,
    mut dropped: impl FnMut(u32),
) -> bool {
    match check {
        SetCheck::Prefer {
            flag, otherwise, ..
        } => {
            let preferred = |i: u32| cols.flags(i) & flag != 0 || otherwise(i);
            let any = positions.iter().any(|&i| preferred(i));
            if any {
                compact(positions, |i| {
                    preferred(i) || {
                        dropped(i);
                        false
                    }
                });
            }
            any
        }
        SetCheck::Claim {
            claimants, owners, ..
        } => {
            let any = claimed(positions, claimants);
            if any {
                keep_owners(positions, owners, dropped);
            }
            any
        }
        SetCheck::Narrow | SetCheck::Skip => false,
    }
}
