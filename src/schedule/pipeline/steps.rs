//! One decision's stages as the pipeline runs them: each stage prepared for the shoot
//! ([`Prepare`]), and how it is answered from the snapshot's per-seed columns ([`Step`],
//! [`compile`]). `pipeline.rs` and `candidates.rs` both run steps; neither is imported here.

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::predicates::{FastCheck, Prepared, SetCheck, Stage};
use crate::reason::Reason;
use crate::snapshot::{SeedColumns, Snapshot};

/// The stages of a profile prepared for one shoot: each filter's state, once per decision.
pub(in crate::schedule) struct Prepare<'p> {
    pub(super) stages: &'p [Stage],
    pub(super) states: Vec<Prepared>,
}

impl<'p> Prepare<'p> {
    /// Refused when a filter finds a field of the shoot it reads that does not parse.
    pub(in crate::schedule) fn new(
        cx: &ShootContext,
        stages: &'p [Stage],
    ) -> Result<Self, FitError> {
        let mut states = Vec::with_capacity(stages.len());
        for stage in stages {
            states.push(match stage {
                Stage::Filter(p) => p.prepare(cx)?,
                Stage::Narrow(_) => Prepared::default(),
            });
        }
        Ok(Prepare { stages, states })
    }
}

/// How one stage is answered for one shoot.
pub(super) enum Check<'a> {
    Filter(FastCheck<'a>),
    Set(SetCheck<'a>),
}

/// One stage, prepared and checked for one shoot.
pub(super) struct Step<'a> {
    pub(super) stage: &'a Stage,
    pub(super) state: &'a Prepared,
    pub(super) check: Check<'a>,
}

impl Step<'_> {
    /// A per-seed stage's verdict on the seed at position `i`.
    pub(super) fn passes(
        &self,
        cx: &ShootContext,
        i: u32,
        cols: &SeedColumns,
        snap: &Snapshot,
    ) -> bool {
        let (Stage::Filter(p), Check::Filter(check)) = (self.stage, &self.check) else {
            return true;
        };
        let ask = || p.passes(cx, self.state, cols.info(i), snap);
        match check {
            FastCheck::Skip => true,
            FastCheck::Flag(flag) => cols.flags(i) & flag != 0 || ask(),
            FastCheck::FlagOnly(flag) => cols.flags(i) & flag != 0,
            FastCheck::FlagOr { flag, marked } => cols.flags(i) & flag != 0 || marked[i as usize],
            FastCheck::Groups(allowed) => allowed[cols.group(i) as usize],
            FastCheck::Bitmap(matches) => matches[i as usize],
            FastCheck::SharedBitmap(matches) => matches[i as usize],
            FastCheck::Read(read) => read(cols, i),
            FastCheck::Ask => ask(),
        }
    }

    /// The reason of every seed a per-seed stage rejects for this shoot, when it is one.
    pub(super) fn shared_reason(&self, cx: &ShootContext) -> Option<Reason> {
        match self.stage {
            Stage::Filter(p) => p.shared_reason(cx, self.state),
            Stage::Narrow(_) => None,
        }
    }

    /// Why the stage rejects the seed at position `i` (a per-seed stage asks its filter).
    pub(super) fn reason(
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
pub(super) fn compile<'a>(
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
            Stage::Narrow(step) => match step.fast_check(cx, cols, every_seed) {
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
