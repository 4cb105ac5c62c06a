use std::fmt;

use crate::context::ShootContext;
use crate::reason::{Declared, Reason};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared};

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

    /// The reason of a seed that offers none of the restrictions, shared by those seeds.
    fn prepare(&self, cx: &ShootContext) -> Prepared {
        if cx.access_restrictions.is_empty() {
            return Prepared::default();
        }
        Prepared::new(NoneOffered(Reason::new(NotOffered {
            missing: cx.access_restrictions.to_vec(),
        })))
    }

    fn filter(
        &self,
        cx: &ShootContext,
        state: &Prepared,
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
        match state.get::<NoneOffered>() {
            _ if missing.is_empty() => Ok(()),
            Some(NoneOffered(none)) if missing.len() == cx.access_restrictions.len() => {
                Err(none.clone())
            }
            _ => Err(Reason::new(NotOffered { missing })),
        }
    }

    fn passes(&self, cx: &ShootContext, _: &Prepared, seed: &SeedInfo, _: &Snapshot) -> bool {
        cx.access_restrictions.len() <= seed.access_restriction_count
            && cx
                .access_restrictions
                .iter()
                .all(|r| seed.access_restrictions.contains(r))
    }

    /// With one restriction requested, every seed rejected lacks it.
    fn shared_reason(&self, cx: &ShootContext, state: &Prepared) -> Option<Reason> {
        match state.get::<NoneOffered>() {
            Some(NoneOffered(none)) if cx.access_restrictions.len() == 1 => Some(none.clone()),
            _ => None,
        }
    }

    /// Nothing to check when none is requested; the seeds' restrictions as bits while they offer
    /// few enough distinct ones.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        if cx.access_restrictions.is_empty() {
            return FastCheck::Skip;
        }
        match cols.access_required(&cx.access_restrictions) {
            Some(required) => FastCheck::AccessBits {
                required,
                requested: cx.access_restrictions.len(),
            },
            None => FastCheck::Ask,
        }
    }
}

/// What `prepare` keeps: the reason of a seed that offers none of the requested restrictions.
struct NoneOffered(Reason);

/// The seed does not offer every access restriction the shoot asks for.
#[derive(Debug)]
struct NotOffered {
    missing: Vec<String>,
}

impl Declared for NotOffered {
    fn name(&self) -> &'static str {
        "accessRestriction"
    }

    fn summary(&self) -> &'static str {
        "do not offer the access restrictions"
    }

    fn hint(&self) -> Option<String> {
        Some(format!(
            "remove access restriction {} or offer it on a seed",
            self.missing.join(", ")
        ))
    }
}

impl fmt::Display for NotOffered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed does not offer access restriction(s) {}",
            self.missing.join(", ")
        )
    }
}

#[cfg(test)]
mod tests;
