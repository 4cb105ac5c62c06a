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
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    #[test]
    fn cloud_profile_selector_table() {
        let shoot = ShootBuilder::new("garden-a", "s").build();
        let cases = [
            (
                "no selector matches every seed",
                CloudProfileBuilder::new("aws"),
                SeedBuilder::new("s1"),
                true,
            ),
            (
                "match labels present on seed",
                CloudProfileBuilder::new("aws").match_label("env", "prod"),
                SeedBuilder::new("s1").label("env", "prod"),
                true,
            ),
            (
                "match labels missing on seed",
                CloudProfileBuilder::new("aws").match_label("env", "prod"),
                SeedBuilder::new("s1").label("env", "dev"),
                false,
            ),
            (
                "expression NotIn excludes seed",
                CloudProfileBuilder::new("aws").match_expression("env", "NotIn", &["dev"]),
                SeedBuilder::new("s1").label("env", "dev"),
                false,
            ),
            (
                "expression Exists admits labelled seed",
                CloudProfileBuilder::new("aws").match_expression("env", "Exists", &[]),
                SeedBuilder::new("s1").label("env", "x"),
                true,
            ),
        ];
        for (name, cp, seed, ok) in cases {
            let got = run(
                &CloudProfileSelector,
                &shoot,
                &seed.build(),
                &[],
                &[cp.build()],
            );
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }
}
