use std::fmt;

use crate::context::ShootContext;
use crate::reason::Declared;
use crate::snapshot::columns::{Column, SeedBit};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, Unusable};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Usable";

/// Seeds that are deleting, invisible, never reconciled, not ready or malformed take no shoots.
pub struct Usable;

/// The seed takes shoots: the filter's verdict for every seed.
static USABLE: SeedBit = SeedBit {
    name: "usable",
    of: |seed| seed.usable.is_ok(),
};

impl Predicate for Usable {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&USABLE)];
        COLUMNS
    }

    fn check(
        &self,
        _: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        match &seed.usable {
            Ok(()) => Ok(()),
            Err(reason) => why.reject(|| reason.clone()),
        }
    }

    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        FastCheck::flag_only(cols, &USABLE)
    }
}

/// The seed's state read as a reason: what the snapshot found when it took the seed in.
impl Declared for Unusable {
    fn name(&self) -> &'static str {
        match self {
            Unusable::Invalid { .. } => "invalidSeed",
            Unusable::Deleting => "deleting",
            Unusable::Invisible => "invisible",
            Unusable::NoLastOperation => "noLastOperation",
            Unusable::NotReady { .. } => "notReady",
        }
    }

    fn summary(&self) -> &'static str {
        match self {
            Unusable::Invalid { .. } => "are malformed",
            Unusable::Deleting => "are being deleted",
            Unusable::Invisible => "are invisible to the scheduler",
            Unusable::NoLastOperation => "were never reconciled",
            Unusable::NotReady { .. } => "are not ready",
        }
    }
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unusable::Invalid { field, message } => {
                write!(f, "seed is malformed: {field}: {message}")
            }
            Unusable::Deleting => f.write_str("seed is being deleted"),
            Unusable::Invisible => {
                f.write_str("seed is invisible (spec.settings.scheduling.visible: false)")
            }
            Unusable::NoLastOperation => f.write_str("seed has no status.lastOperation yet"),
            Unusable::NotReady { condition, status } => {
                write!(f, "seed condition {condition} is {status}, not True")
            }
        }
    }
}

#[cfg(test)]
mod tests;
