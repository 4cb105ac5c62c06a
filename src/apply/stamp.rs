//! A saved plan's stamp against the landscape it is applied to: a note for each difference, and
//! a refusal for a plan that looks computed on another garden.
//!
//! A plan's landscape digest changes with any change of a Seed or a Shoot, so it differs on
//! every apply of a plan some hours old: that alone is only a note (every move is checked again
//! before it starts). A plan is taken for another garden's when its digest differs, the number
//! of Seeds or Shoots differs too, and at most half of its moves find their shoot on the move's
//! source or destination seed; `--force` turns the refusal into a note.

use super::saved::SavedPlan;
pub use crate::plan::GENERATOR;

/// The landscape as read at the start of an apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// [`crate::plan::landscape_digest`] of the landscape read.
    pub digest: String,
    pub seeds: usize,
    pub shoots: usize,
    /// Moves of the plan whose shoot is on the move's source or destination seed.
    pub found: usize,
}

/// What the apply says about the stamp before it starts.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub notes: Vec<String>,
    /// The plan looks computed on another garden: why.
    pub foreign: Option<String>,
}

/// Compares the plan's stamp with `live`; `force` keeps a foreign plan as a note.
pub fn compare(plan: &SavedPlan, live: &Observed, force: bool) -> Verdict {
    let mut v = Verdict::default();
    if plan.generator != GENERATOR {
        v.notes.push(format!(
            "the plan was written by {:?}, this is {GENERATOR}: fields this version does not \
             know are ignored",
            crate::escape::line(&plan.generator)
        ));
    }
    if plan.landscape == live.digest {
        return v;
    }
    let counts = format!(
        "{} -> {} seed(s), {} -> {} shoot(s)",
        plan.seeds, live.seeds, plan.shoots, live.shoots
    );
    let moves = plan.moves.len();
    let recounted = plan.seeds != live.seeds || plan.shoots != live.shoots;
    if recounted && moves > 0 && live.found * 2 <= moves {
        let why = format!(
            "the plan looks computed on another garden: its landscape digest and counts differ \
             ({counts}) and {} of its {moves} move(s) find their shoot on the move's source or \
             destination seed",
            live.found
        );
        if force {
            v.notes.push(format!("{why}; applied anyway (--force)"));
        } else {
            v.foreign = Some(format!(
                "{why}; check --kubeconfig, or plan again (--force applies it anyway)"
            ));
        }
        return v;
    }
    v.notes.push(format!(
        "the landscape changed since the plan was computed ({counts}): each move is checked \
         again before it starts"
    ));
    v
}

#[cfg(test)]
mod tests;
