use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot, selector_matches};

use super::framework::{Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ShootSelector";

/// The shoot's `spec.seedSelector` label selector. Its `providerTypes` is ignored, as upstream.
pub struct ShootSelector;

impl Predicate for ShootSelector {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
    ) -> Result<(), Reason> {
        if selector_matches(cx.shoot_selector.as_ref(), &seed.labels) {
            Ok(())
        } else {
            Err(Reason::ShootSelector)
        }
    }
}

#[cfg(test)]
mod tests;
