use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared};

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
}

#[cfg(test)]
mod tests;
