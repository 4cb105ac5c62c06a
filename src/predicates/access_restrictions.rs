use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "AccessRestrictions";

/// Every access restriction the shoot requests must be offered by the seed, as upstream's
/// `AccessRestrictionsAreSupported` decides, including its shortcut: a shoot listing more
/// restrictions than the seed (repeats counted) is not supported.
pub struct AccessRestrictions;

impl Predicate for AccessRestrictions {
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
        let too_many = cx.access_restrictions.len() > seed.access_restriction_count;
        let missing: Vec<String> = cx
            .access_restrictions
            .iter()
            .filter(|r| too_many || !seed.access_restrictions.contains(*r))
            .cloned()
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Reason::AccessRestriction { missing })
        }
    }
}

#[cfg(test)]
mod tests;
