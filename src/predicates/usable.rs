use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::columns::flags;
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Usable";

/// Seeds that are deleting, invisible, never reconciled, not ready or malformed take no shoots.
pub struct Usable;

impl Predicate for Usable {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(
        &self,
        _: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
    ) -> Result<(), Reason> {
        seed.usable.clone()
    }

    fn passes(&self, _: &ShootContext, _: &Prepared, seed: &SeedInfo, _: &Snapshot) -> bool {
        seed.usable.is_ok()
    }

    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        _: &Prepared,
        _: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        FastCheck::Flag(flags::USABLE)
    }
}

#[cfg(test)]
mod tests;
