//! What every filter is, and nothing about which filters exist (the registry is `mod.rs`): the
//! per-seed [`Predicate`], the set-level [`SetStep`] and the [`Stage`] a profile runs. Plugin files
//! import this module, never the registry, so the folder has no cycle (kube-scheduler's
//! `framework` package knows none of its plugins).

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::outcome::FitError;
use crate::plugin::ClusterData;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, Mask, Partition, SeedBit};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

/// How the decision can answer a filter for one shoot from the snapshot's per-seed columns
/// ([`SeedColumns`]) instead of asking it seed by seed: a closed vocabulary the pipeline
/// understands without knowing which filter speaks it (kube-scheduler's `PreFilterResult` and
/// `Skip` status). A seed a check keeps passes the filter; a seed it does not keep is rejected
/// by it, except under [`Flag`](FastCheck::Flag), where it is asked.
pub enum FastCheck<'c> {
    /// The filter keeps every seed for this shoot: the stage is left out.
    Skip,
    /// Seeds carrying this declared bit ([`SeedBit`], its mask from [`SeedColumns::bit`])
    /// pass; the others are asked (`passes`). Made by [`FastCheck::flag`].
    Flag(Mask),
    /// Seeds carrying this bit pass, the others are rejected: the bit is the filter's
    /// verdict. Made by [`FastCheck::flag_only`].
    FlagOnly(Mask),
    /// Seeds carrying this bit pass; the others pass when marked (per seed position). Made by
    /// [`FastCheck::flag_or`].
    FlagOr { flag: Mask, marked: Vec<bool> },
    /// Per key of a partition of the seeds the columns keep (such as
    /// [`SeedColumns::by_provider`]), whether its seeds pass: the verdict and the reason depend
    /// on the seed's key alone, so the decision may start from the members of the allowed keys
    /// and asks one seed per key for the reason.
    Keyed {
        keys: Partition<'c>,
        allowed: Vec<bool>,
    },
    /// Per seed position, whether the seed passes.
    Bitmap(&'c [bool]),
    /// The same, shared with the columns (kept there for the next shoot that asks).
    SharedBitmap(Arc<Vec<bool>>),
    /// The verdict read from the columns by a function of the filter's (for example
    /// [`SeedColumns::has_room`]): a tight loop over the columns, no seed asked.
    Read(fn(&SeedColumns, u32) -> bool),
    /// Every seed is asked (`passes`).
    Ask,
}

impl FastCheck<'_> {
    /// Seeds with `bit` pass, the others are asked; every seed is asked when the columns keep
    /// no more bits.
    pub fn flag(cols: &SeedColumns, bit: &'static SeedBit) -> Self {
        cols.bit(bit).map_or(FastCheck::Ask, FastCheck::Flag)
    }

    /// `bit` is the verdict (every seed is asked when the columns keep no more bits).
    pub fn flag_only(cols: &SeedColumns, bit: &'static SeedBit) -> Self {
        cols.bit(bit).map_or(FastCheck::Ask, FastCheck::FlagOnly)
    }

    /// Seeds with `bit` or `marked` pass, the others are rejected (every seed is asked when the
    /// columns keep no more bits).
    pub fn flag_or(cols: &SeedColumns, bit: &'static SeedBit, marked: Vec<bool>) -> Self {
        cols.bit(bit)
            .map_or(FastCheck::Ask, |flag| FastCheck::FlagOr { flag, marked })
    }
}

/// How the decision can answer a set step for one shoot.
pub enum SetCheck<'c> {
    /// The step keeps every seed for this shoot: the stage is left out.
    Skip,
    /// A preference with fallback over seed positions: the preferred seeds are kept when there
    /// is one, otherwise every seed is; from a part of the set without one, only the whole set
    /// can say. A seed carrying the declared bit `flag` ([`SeedColumns::bit`]) is preferred;
    /// another one when `otherwise` holds. The seeds not kept are dropped for `reason`
    /// ([`SetStep::narrow`]'s reason for them).
    Prefer {
        flag: Mask,
        otherwise: Box<dyn Fn(u32) -> bool + 'c>,
        reason: Reason,
    },
    /// A claim of some seeds on the shoot: when a remaining seed is among `claimants`, only the
    /// remaining seeds among `owners` stay, the others dropped for `reason`; when none is,
    /// every seed stays; from a part of the set without one, only the whole set can say. Both
    /// are seed positions in order.
    Claim {
        claimants: Cow<'c, [u32]>,
        owners: &'c [u32],
        reason: Reason,
    },
    /// The step is asked with the seeds ([`SetStep::narrow`], [`SetStep::narrow_part`]).
    Narrow,
}

/// Where the seeds a region strategy can keep are, so that a decision evaluates the other
/// stages only on those ([`SetStep::candidates`]).
pub enum Candidates {
    /// The strategy keeps every remaining seed.
    All,
    /// Tiers in order of preference, each the seeds' positions in the snapshot's columns in
    /// order: the strategy keeps the seeds of the first tier that has any seed left after the
    /// other stages, and never keeps a seed that is in no tier. When no tier has one left, only
    /// the whole pipeline can say what happens.
    Tiers(Vec<Vec<u32>>),
    /// The choice needs the whole set (a region ConfigMap row that does not parse).
    Unknown,
}

/// A per-seed filter.
pub trait Predicate: Send + Sync {
    /// The stage name shown in explanations.
    fn name(&self) -> &'static str;
    /// Work that depends on the shoot alone, done once per decision before any seed is looked
    /// at (kube-scheduler's PreFilter writing its CycleState). The decision keeps the result
    /// for this stage and hands it to every `fast_check` and `check` call of the decision, so a
    /// filter keeps its per-shoot data without fields in [`ShootContext`].
    ///
    /// A filter that reads a field of the shoot that must parse (a selector, a network) parses it
    /// here; one that does not refuses the shoot ([`FitError::InvalidShoot`] naming the field),
    /// as gardener-apiserver would have.
    fn prepare(&self, _cx: &ShootContext) -> Result<Prepared, FitError> {
        Ok(Prepared::default())
    }
    /// The filter's verdict on one seed and, when `why` asks for it, the reason of a rejection:
    /// both from this one function, so they cannot disagree (a rejection is made only by
    /// [`Why::reject`], which builds the reason when it is wanted). `state` is what
    /// [`prepare`](Predicate::prepare) returned for this shoot: every caller prepares first.
    /// Callers ask through `filter` (the reason) and `passes` (the verdict alone).
    fn check(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        snap: &Snapshot,
        why: Why,
    ) -> Verdict;
    /// What this filter can answer for this shoot from the columns (see [`FastCheck`]);
    /// `every_seed`: the decision evaluates every seed, so a check computed for all of them costs
    /// no more than asking. By default every seed is asked.
    fn fast_check<'c>(
        &self,
        _cx: &ShootContext,
        _state: &Prepared,
        _cols: &'c SeedColumns,
        _every_seed: bool,
    ) -> FastCheck<'c> {
        FastCheck::Ask
    }
    /// The one reason for which this filter rejects every seed it rejects for this shoot, when
    /// there is one (kept by [`prepare`](Predicate::prepare) in `state`): a decision that finds
    /// no seed then counts the seeds of this stage at once instead of asking each for its
    /// reason. `None` by default: each rejected seed is asked.
    fn shared_reason(&self, _cx: &ShootContext, _state: &Prepared) -> Option<Reason> {
        None
    }
    /// Cluster data this filter reads beyond what every decision reads.
    fn cluster_data(&self) -> Vec<ClusterData> {
        Vec::new()
    }
    /// The per-seed columns (bits, indexes) its fast answer reads, declared in its file: built
    /// with the landscape when a caller asks ([`crate::snapshot::SeedColumns::build_declared`]),
    /// otherwise by the first decision that reads them.
    fn columns(&self) -> &'static [Column] {
        &[]
    }
    /// Problems of the arguments that only the region catalogue with the configuration's
    /// `schedulers.shoot.regions` shows (a jurisdiction no region lies in), with their paths.
    fn check_regions(&self, _regions: &crate::regions::Regions) -> Vec<FieldError> {
        Vec::new()
    }
}

impl dyn Predicate + '_ {
    /// Why the filter rejects the seed, if it does.
    pub fn filter(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        snap: &Snapshot,
    ) -> Result<(), Reason> {
        self.check(cx, state, seed, snap, Why(true))
            .map_err(|Rejected(reason)| {
                reason.unwrap_or_else(|| Reason::new(Rejection(self.name())))
            })
    }

    /// The filter's verdict alone, for a decision that needs no reason for the seed.
    pub fn passes(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        snap: &Snapshot,
    ) -> bool {
        self.check(cx, state, seed, snap, Why(false)).is_ok()
    }
}

/// Whether the caller of [`Predicate::check`] wants the reason of a rejection; made only by
/// `filter` and `passes`.
#[derive(Clone, Copy, Debug)]
pub struct Why(bool);

impl Why {
    /// Rejects the seed; `reason` is built only when the caller wants it.
    pub fn reject(self, reason: impl FnOnce() -> Reason) -> Verdict {
        Err(Rejected(self.0.then(reason)))
    }
}

/// A filter's answer on one seed ([`Predicate::check`]).
pub type Verdict = Result<(), Rejected>;

/// A rejection, made by [`Why::reject`]: with its reason when the caller wanted one.
#[derive(Debug)]
pub struct Rejected(Option<Reason>);

/// The reason of a rejection made without one while a reason was wanted: [`Why::reject`]
/// cannot do this, so no filter gives it; named after its stage all the same.
#[derive(Debug)]
struct Rejection(&'static str);

declared!(Rejection {
    name: "rejected",
    summary: "are rejected",
    message(self, f): write!(f, "rejected by {}", self.0),
});

/// What a filter prepared for one shoot: a value of the filter's own type, read back with
/// [`get`](Prepared::get). Empty by default.
#[derive(Default)]
pub struct Prepared(Option<Box<dyn Any + Send + Sync>>);

impl Prepared {
    pub fn new<T: Any + Send + Sync>(state: T) -> Self {
        Prepared(Some(Box::new(state)))
    }

    /// The prepared value, if there is one of type `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_deref().and_then(|s| s.downcast_ref())
    }
}

/// A step over the whole remaining set: returns, per seed (same order), why it is dropped.
/// An `Err` fails the shoot as a whole (e.g. a malformed region ConfigMap).
pub trait SetStep: Send + Sync {
    fn name(&self) -> &'static str;
    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        snap: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError>;

    /// The same verdicts for a part of the remaining set, when they do not depend on the seeds
    /// outside that part; `None` when they might (the decision then runs the full pipeline).
    fn narrow_part(
        &self,
        _cx: &ShootContext,
        _seeds: &[&SeedInfo],
        _snap: &Snapshot,
    ) -> Result<Option<Vec<Option<Reason>>>, FitError> {
        Ok(None)
    }

    /// What this step can answer for this shoot from the columns (see [`SetCheck`]);
    /// `every_seed` as for [`Predicate::fast_check`]. By default it is asked with the seeds.
    fn fast_check<'c>(
        &self,
        _cx: &'c ShootContext,
        _cols: &'c SeedColumns,
        _every_seed: bool,
    ) -> SetCheck<'c> {
        SetCheck::Narrow
    }

    /// The per-seed columns its fast answer reads (as [`Predicate::columns`]).
    fn columns(&self) -> &'static [Column] {
        &[]
    }

    /// The seeds this step can keep, when it is the region strategy that ends the pipeline;
    /// `None` for any other step.
    fn candidates(&self, _cx: &ShootContext, _snap: &Snapshot) -> Option<Candidates> {
        None
    }
}

pub enum Stage {
    Filter(Box<dyn Predicate>),
    Narrow(Box<dyn SetStep>),
}

impl Stage {
    pub fn name(&self) -> &'static str {
        match self {
            Stage::Filter(p) => p.name(),
            Stage::Narrow(s) => s.name(),
        }
    }

    /// The per-seed columns the stage's fast answer reads.
    pub fn columns(&self) -> &'static [Column] {
        match self {
            Stage::Filter(p) => p.columns(),
            Stage::Narrow(s) => s.columns(),
        }
    }
}
