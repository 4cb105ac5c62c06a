use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot, selector_matches};

use super::framework::{Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "CloudProfileSelector";

/// The CloudProfile's `spec.seedSelector` label selector (none matches every seed).
pub struct CloudProfileSelector;

impl Predicate for CloudProfileSelector {
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
        if selector_matches(cx.cloud_profile_selector.as_ref(), &seed.labels) {
            Ok(())
        } else {
            Err(Reason::CloudProfileSelector {
                cloud_profile: cx.cloud_profile.display.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests;
