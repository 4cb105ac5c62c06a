//! The production decision's evaluation: the profile's stages compiled for one shoot into
//! checks on the snapshot's per-seed columns, and scores kept in flat arrays.
//!
//! A stage that keeps every seed for this shoot (no selector, no zones asked for, no access
//! restriction requested, no default domain above the shoot's, …) is left out. The per-seed
//! stages between two set steps run in one pass; a seed carrying every flag those stages look
//! for (usable, untainted, …) passes them in one comparison, the others read the columns
//! (provider type, capacity, the CloudProfile's selector) or ask the predicate, for its verdict
//! only. Priorities give raw values without details ([`crate::priorities::Priority::values`]);
//! the winner alone gets its details. [`whole`] runs every seed through every stage when the
//! candidates cannot decide, keeping the reason of the stage that rejects each seed.
//! `tests/fast_path.rs` checks all of it against the reference pipeline.

use std::sync::Arc;

use ipnet::IpNet;
use ordered_float::NotNan;

use super::{PriorityScore, Rejection, SeedScore, tie_hash};
use crate::budget::Deadline;
use crate::cidr::reserved;
use crate::context::ShootContext;
use crate::predicates::{Prepared, Stage};
use crate::priorities::RawScore;
use crate::profile::Profile;
use crate::reason::Reason;
use crate::schedule::FitError;
use crate::snapshot::columns::flags;
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, ZoneMode};

/// How a stage is checked for one shoot.
enum Check<'p> {
    Usable,
    /// Allowed per provider id.
    Provider(Vec<bool>),
    AtLeastThreeZones,
    NoEmergencyStop,
    /// Seeds without taints pass; the others are asked when the shoot has tolerations.
    Taints,
    /// Each requested restriction listed by the seed.
    AccessRestrictions,
    /// The same from the columns: the bits of the requested restrictions, all of which the
    /// seed's must have.
    AccessBits(u64),
    /// Seeds that enforce their zones must share one with the workers.
    EnforcedZones,
    /// Only seeds whose network defaults are IPv6 or reserved are asked (the shoot's own
    /// networks are IPv4, outside the reserved ranges, without `status.networking`).
    NetworkDefaults,
    /// Whether the CloudProfile's selector matches, per seed.
    Matches(&'p [bool]),
    /// Whether the shoot's own seed selector matches, per seed.
    Selected(Arc<Vec<bool>>),
    Capacity,
    /// The predicate is asked.
    Filter,
    /// `ZonePreference` when it applies: seeds without a zone preference (a flag) or sharing a
    /// zone with the workers are preferred.
    ZonePreference,
    Narrow,
}

/// One stage, compiled for one shoot.
struct Step<'p> {
    stage: &'p Stage,
    check: Check<'p>,
    /// What the stage's filter prepared for this shoot (empty for a set step).
    state: Prepared,
}

impl Step<'_> {
    /// The seed flag that lets this stage keep a seed without looking further, if any.
    fn flag(&self) -> Option<u8> {
        match self.check {
            Check::Usable => Some(flags::USABLE),
            Check::AtLeastThreeZones => Some(flags::THREE_ZONES),
            Check::NoEmergencyStop => Some(flags::NO_EMERGENCY_STOP),
            Check::Taints => Some(flags::NO_TAINTS),
            Check::EnforcedZones => Some(flags::ZONES_NOT_ENFORCED),
            Check::NetworkDefaults => Some(flags::PLAIN_NETWORK_DEFAULTS),
            _ => None,
        }
    }

    /// The verdict of a per-seed stage on the seed at position `i`.
    fn passes(&self, cx: &ShootContext, i: u32, cols: &SeedColumns, snap: &Snapshot) -> bool {
        let seed = cols.info(i);
        let ask = |seed: &SeedInfo| match self.stage {
            Stage::Filter(p) => p.filter(cx, &self.state, seed, snap).is_ok(),
            Stage::Narrow(_) => true,
        };
        match &self.check {
            Check::Usable => seed.usable.is_ok(),
            Check::Provider(allowed) => allowed[cols.provider(i) as usize],
            Check::AtLeastThreeZones => seed.zones.len() >= 3,
            Check::NoEmergencyStop => !seed.emergency_stop,
            Check::Taints => seed.taints.is_empty() || (cx.toleration_count > 0 && ask(seed)),
            Check::AccessRestrictions => {
                cx.access_restrictions.len() <= seed.access_restriction_count
                    && cx
                        .access_restrictions
                        .iter()
                        .all(|r| seed.access_restrictions.contains(r))
            }
            // The workers name zones and the control plane does not (see `compile`).
            Check::AccessBits(required) => {
                cols.offers_access(i, *required, cx.access_restrictions.len())
            }
            Check::EnforcedZones => {
                seed.zone_mode != ZoneMode::Enforce || cx.shares_worker_zone(seed)
            }
            Check::NetworkDefaults => cols.plain_network_defaults(i) || ask(seed),
            Check::Matches(matches) => matches[i as usize],
            Check::Selected(matches) => matches[i as usize],
            Check::Capacity => cols.has_room(i),
            Check::Filter => ask(seed),
            Check::ZonePreference | Check::Narrow => true,
        }
    }
}

/// The checks of `stages` for this shoot, stages that keep every seed left out.
/// `every_seed`: the decision evaluates every seed, so matching the shoot's seed selector
/// against all of them once (kept for the next shoot with it) costs no more than asking; from a
/// tier of candidates, the matches are read only when kept from an earlier decision.
fn compile<'p>(
    cx: &ShootContext,
    stages: &'p [Stage],
    cols: &'p SeedColumns,
    every_seed: bool,
) -> Vec<Step<'p>> {
    let mut steps = Vec::with_capacity(stages.len());
    for stage in stages {
        let check = match stage {
            Stage::Narrow(step) => match step.name() {
                "ZonePreference"
                    if cx.zone_ha
                        || !cx.control_plane_zones.is_empty()
                        || cx.worker_zones.is_empty() =>
                {
                    continue;
                }
                "ZonePreference" => Check::ZonePreference,
                "DefaultDomain" if !under_any_default(cx, cols) => continue,
                _ => Check::Narrow,
            },
            Stage::Filter(p) => match p.name() {
                "Usable" => Check::Usable,
                "CloudProfileSelector" if cx.cloud_profile_selector.is_none() => continue,
                "CloudProfileSelector" => match cols.selector_matches(&cx.cloud_profile.display) {
                    Some(matches) => Check::Matches(matches),
                    None => Check::Filter,
                },
                "ShootSelector" => match &cx.shoot_selector {
                    None => continue,
                    Some(selector) => match cols.shoot_selector_matches(selector, every_seed) {
                        Some(matches) => Check::Selected(matches),
                        None => Check::Filter,
                    },
                },
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
                "Zones" if cx.control_plane_zones.is_empty() => Check::EnforcedZones,
                "AccessRestrictions" if cx.access_restrictions.is_empty() => continue,
                "AccessRestrictions" => match cols.access_required(&cx.access_restrictions) {
                    Some(bits) => Check::AccessBits(bits),
                    None => Check::AccessRestrictions,
                },
                "EmergencyStop" => Check::NoEmergencyStop,
                "Networks" if !cx.nets.present => continue,
                "Networks" if plain_own_networks(cx) => Check::NetworkDefaults,
                "Taints" => Check::Taints,
                "SeedCapacity" => Check::Capacity,
                _ => Check::Filter,
            },
        };
        let state = match stage {
            Stage::Filter(p) => p.prepare(cx),
            Stage::Narrow(_) => Prepared::default(),
        };
        steps.push(Step {
            stage,
            check,
            state,
        });
    }
    steps
}

/// Some seed has a default domain that the shoot's domain is below (only then does
/// `DefaultDomain` drop seeds).
fn under_any_default(cx: &ShootContext, cols: &SeedColumns) -> bool {
    cx.domain.as_deref().is_some_and(|domain| {
        cols.default_domains().iter().any(|d| {
            domain
                .strip_suffix(d.as_str())
                .is_some_and(|rest| rest.ends_with('.'))
        })
    })
}

/// The shoot's own networks are IPv4, outside the reserved ranges, and it has no
/// `status.networking`: only a seed's defaults can then matter.
fn plain_own_networks(cx: &ShootContext) -> bool {
    let n = &cx.nets;
    n.status.is_none()
        && [n.nodes, n.pods, n.services]
            .iter()
            .flatten()
            .all(|net| matches!(net, IpNet::V4(_)) && !reserved(net))
}

/// The positions that pass `stages`, in order, from `start` (`None`: every seed). Starting
/// from every seed, a set step sees the set the reference sees; from a tier, a set step that
/// needs the seeds outside the tier makes this `None`.
pub(super) fn survivors(
    cx: &ShootContext,
    start: Option<Vec<u32>>,
    stages: &[Stage],
    snap: &Snapshot,
    deadline: &Deadline,
) -> Result<Option<Vec<u32>>, FitError> {
    let cols = snap.columns();
    let whole = start.is_none();
    let steps = compile(cx, stages, cols, whole);
    let mut kept = start;
    // Per-seed stages between two set steps do not depend on each other's order: each is one
    // pass over the seeds still kept, the most selective first.
    for run in steps.split_inclusive(|s| matches!(s.stage, Stage::Narrow(_))) {
        let (filters, set_step) = match run.split_last() {
            Some((last, filters)) if matches!(last.stage, Stage::Narrow(_)) => {
                (filters, Some(last))
            }
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
        match set_step {
            Some(Step {
                check: Check::ZonePreference,
                ..
            }) => {
                let preferred = |i: u32| {
                    cols.flags(i) & flags::NO_ZONE_PREFERENCE != 0
                        || cx.shares_worker_zone(cols.info(i))
                };
                if positions.iter().any(|&i| preferred(i)) {
                    compact(&mut positions, preferred);
                } else if !whole {
                    // The seeds outside the tier may hold a preferred one.
                    return Ok(None);
                }
            }
            Some(Step {
                stage: Stage::Narrow(set_step),
                ..
            }) => {
                let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
                let verdicts = if whole {
                    set_step.narrow(cx, &seeds, snap)?
                } else {
                    match set_step.narrow_part(cx, &seeds, snap)? {
                        Some(v) => v,
                        None => return Ok(None),
                    }
                };
                let mut verdicts = verdicts.into_iter();
                positions.retain(|_| verdicts.next().flatten().is_none());
                deadline.check(set_step.name())?;
            }
            _ => {}
        }
        kept = Some(positions);
    }
    Ok(Some(
        kept.unwrap_or_else(|| (0..cols.len() as u32).collect()),
    ))
}

/// Every seed, or when `filters` check the provider type only the seeds of the allowed
/// provider types, read from the columns' index (`true`: the provider check is done).
fn from_index(filters: &[Step], cols: &SeedColumns) -> (Vec<u32>, bool) {
    let allowed = filters.iter().find_map(|f| match &f.check {
        Check::Provider(allowed) => Some(allowed),
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
/// positions reads the columns (provider type, the CloudProfile's and the shoot's selectors,
/// the seed flags, capacity, access restrictions); a seed lacking a flag is asked only by the stages of the
/// flags it lacks. Stages that must ask the predicate for every seed get a pass of their own.
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
    let mut matches: Option<&[bool]> = None;
    let mut selected: Option<&[bool]> = None;
    let mut capacity = false;
    let mut access: Option<u64> = None;
    let mut mask = 0u8;
    let mut flagged: Vec<(u8, &Step)> = Vec::new();
    let mut asked: Vec<&Step> = Vec::new();
    for f in filters {
        if let Some(flag) = f.flag() {
            mask |= flag;
            flagged.push((flag, f));
            continue;
        }
        match &f.check {
            Check::Provider(allowed) if !by_provider => provider = Some(allowed),
            Check::Provider(_) => {}
            Check::Matches(m) => matches = Some(m),
            Check::Selected(m) => selected = Some(m),
            Check::Capacity => capacity = true,
            Check::AccessBits(bits) => access = Some(*bits),
            Check::AccessRestrictions | Check::Filter => asked.push(f),
            // With the flags (`Step::flag`).
            Check::Usable
            | Check::AtLeastThreeZones
            | Check::NoEmergencyStop
            | Check::Taints
            | Check::EnforcedZones
            | Check::NetworkDefaults => {}
            // Set steps.
            Check::ZonePreference | Check::Narrow => {}
        }
    }
    let requested = cx.access_restrictions.len();
    compact(positions, |i| {
        provider.is_none_or(|allowed| allowed[cols.provider(i) as usize])
            && matches.is_none_or(|m| m[i as usize])
            && selected.is_none_or(|m| m[i as usize])
            && access.is_none_or(|required| cols.offers_access(i, required, requested))
            && (!capacity || cols.has_room(i))
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

/// As [`compact`] for a stage that asks its filter per seed: `check` every few seeds says
/// whether the decision may go on.
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

/// Every seed through `stages` (every stage, the region strategy included) as the reference
/// pipeline does: the seeds that pass, or when none does the reference's error, every seed
/// under the first stage that rejects it with the reason from that stage itself.
pub(super) fn whole(
    cx: &ShootContext,
    stages: &[Stage],
    snap: &Snapshot,
    deadline: &Deadline,
) -> Result<Result<Vec<u32>, FitError>, FitError> {
    let cols = snap.columns();
    let total = cols.len();
    let mut positions: Vec<u32> = (0..total as u32).collect();
    // Per seed: the stage that rejected it and why.
    let mut rejected: Vec<Option<(&'static str, Reason)>> = Vec::new();
    rejected.resize_with(total, || None);
    for step in compile(cx, stages, cols, true) {
        if positions.is_empty() {
            break;
        }
        let name = step.stage.name();
        match step.stage {
            Stage::Filter(p) => {
                // The provider stage's reason depends only on the seed's provider type.
                let mut by_provider: Vec<Option<Option<Reason>>> = match &step.check {
                    Check::Provider(allowed) => vec![None; allowed.len()],
                    _ => Vec::new(),
                };
                let mut asked = 0usize;
                let mut over = Ok(());
                positions.retain(|&i| {
                    asked += 1;
                    if over.is_err() {
                        return true;
                    }
                    if asked.is_multiple_of(CHECK_EVERY) {
                        over = deadline.check(name);
                    }
                    if step.passes(cx, i, cols, snap) {
                        return true;
                    }
                    let ask = || p.filter(cx, &step.state, cols.info(i), snap).err();
                    let reason = match by_provider.get_mut(cols.provider(i) as usize) {
                        Some(known) => known.get_or_insert_with(ask).clone(),
                        None => ask(),
                    };
                    match reason {
                        None => true,
                        Some(reason) => {
                            rejected[i as usize] = Some((name, reason));
                            false
                        }
                    }
                });
                over?;
            }
            Stage::Narrow(set_step) => {
                let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
                let mut verdicts = set_step.narrow(cx, &seeds, snap)?.into_iter();
                positions.retain(|&i| match verdicts.next().flatten() {
                    None => true,
                    Some(reason) => {
                        rejected[i as usize] = Some((name, reason));
                        false
                    }
                });
            }
        }
        deadline.check(name)?;
    }
    if !positions.is_empty() {
        return Ok(Ok(positions));
    }
    Ok(Err(FitError::NoFit {
        total,
        rejected: rejected
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let (stage, reason) = r?;
                Some(Rejection {
                    seed: Arc::clone(&cols.info(i as u32).name),
                    stage,
                    reason,
                })
            })
            .collect(),
    }))
}

/// The scores of the seeds that passed every stage, in flat arrays indexed like `positions`.
pub(super) struct Scores {
    /// per seed: its position in the snapshot's columns
    pub(super) positions: Vec<u32>,
    /// per seed
    pub(super) totals: Vec<NotNan<f64>>,
    /// per priority: per seed, (normalised scores, raw values)
    pub(super) priorities: Vec<(Vec<f64>, Vec<f64>)>,
    /// per priority: the raw values with details, when the priority computes them only so
    details: Vec<Option<Vec<RawScore>>>,
}

/// Scores `positions` (not empty) with the profile's priorities.
pub(super) fn score(
    cx: &ShootContext,
    positions: Vec<u32>,
    snap: &Snapshot,
    profile: &Profile,
    deadline: &Deadline,
) -> Result<Scores, FitError> {
    let cols = snap.columns();
    let k = profile.priorities.len();
    let mut priorities = Vec::with_capacity(k);
    let mut details = Vec::with_capacity(k);
    let mut totals: Vec<NotNan<f64>> = Vec::new();
    // Only for priorities without `values`.
    let mut seeds: Option<Vec<&SeedInfo>> = None;
    for wp in &profile.priorities {
        let values = match wp.priority.values(cx, &positions, snap) {
            Some(values) => {
                details.push(None);
                values
            }
            None => {
                let seeds =
                    seeds.get_or_insert_with(|| positions.iter().map(|&i| cols.info(i)).collect());
                let raw = wp.priority.raw(cx, seeds, snap);
                let values = raw.iter().map(|r| r.value).collect();
                details.push(Some(raw));
                values
            }
        };
        let mut normalized = wp.priority.normalize(&values);
        for score in &mut normalized {
            *score = if score.is_finite() {
                score.clamp(0.0, 100.0)
            } else {
                0.0
            };
        }
        // Added in the profile's order to a total that starts at 0, as the reference does.
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
    /// tie).
    pub(super) fn winner(&self, cx: &ShootContext, snap: &Snapshot) -> usize {
        let mut best = 0;
        let mut tied = false;
        for (i, total) in self.totals.iter().enumerate().skip(1) {
            if *total > self.totals[best] {
                (best, tied) = (i, false);
            } else if *total == self.totals[best] {
                tied = true;
            }
        }
        if !tied {
            return best;
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
        winner.map_or(best, |(_, i)| i)
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
        let seed = [cols.info(self.positions[i])];
        let priorities = profile
            .priorities
            .iter()
            .enumerate()
            .map(|(j, wp)| {
                let (scores, values) = &self.priorities[j];
                let (score, raw) = (scores[i], values[i]);
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
        let name = self.seed(i, snap);
        SeedScore {
            seed: Arc::clone(name),
            total: self.totals[i],
            priorities,
            tie_break: tie_hash(&cx.key, name),
        }
    }
}
