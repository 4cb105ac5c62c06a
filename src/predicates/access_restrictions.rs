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
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    #[test]
    fn access_restrictions_table() {
        let cases = [
            (
                "no restriction requested",
                ShootBuilder::new("garden-a", "s"),
                SeedBuilder::new("s1"),
                true,
            ),
            (
                "requested restriction offered",
                ShootBuilder::new("garden-a", "s").access_restriction("eu-access-only"),
                SeedBuilder::new("s1").access_restriction("eu-access-only"),
                true,
            ),
            (
                "requested restriction not offered",
                ShootBuilder::new("garden-a", "s").access_restriction("eu-access-only"),
                SeedBuilder::new("s1"),
                false,
            ),
            (
                "a restriction requested twice needs the seed to list two",
                ShootBuilder::new("garden-a", "s")
                    .access_restriction("eu-access-only")
                    .access_restriction("eu-access-only"),
                SeedBuilder::new("s1").access_restriction("eu-access-only"),
                false,
            ),
            (
                "a restriction requested twice is supported by a seed listing two",
                ShootBuilder::new("garden-a", "s")
                    .access_restriction("eu-access-only")
                    .access_restriction("eu-access-only"),
                SeedBuilder::new("s1")
                    .access_restriction("eu-access-only")
                    .access_restriction("other"),
                true,
            ),
            (
                "seed offering a restriction still takes unrestricted shoots",
                ShootBuilder::new("garden-a", "s"),
                SeedBuilder::new("s1").access_restriction("eu-access-only"),
                true,
            ),
        ];
        for (name, shoot, seed, ok) in cases {
            let got = run(&AccessRestrictions, &shoot.build(), &seed.build(), &[], &[]);
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }
}
