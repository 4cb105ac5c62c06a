use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Provider";

/// With P = the CloudProfile's `seedSelector.providerTypes`: if P is empty the seed's provider
/// type must equal the shoot's; otherwise P must contain `*` or the seed's type.
pub struct Provider;

impl Predicate for Provider {
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
        let allowed = &cx.cloud_profile.provider_types;
        let ok = if allowed.is_empty() {
            seed.provider == cx.provider
        } else {
            allowed.iter().any(|p| p == "*" || *p == seed.provider)
        };
        if ok {
            Ok(())
        } else {
            Err(Reason::Provider {
                seed: seed.provider.clone(),
                allowed: if allowed.is_empty() {
                    vec![cx.provider.clone()]
                } else {
                    allowed.clone()
                },
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
    fn provider_table() {
        let shoot = ShootBuilder::new("garden-a", "s").provider("aws").build();
        let cases = [
            (
                "same provider without provider types",
                CloudProfileBuilder::new("aws"),
                "aws",
                true,
            ),
            (
                "other provider without provider types",
                CloudProfileBuilder::new("aws"),
                "gcp",
                false,
            ),
            (
                "listed provider type admits other provider",
                CloudProfileBuilder::new("aws").provider_types(&["aws", "gcp"]),
                "gcp",
                true,
            ),
            (
                "unlisted provider type rejects",
                CloudProfileBuilder::new("aws").provider_types(&["gcp"]),
                "aws",
                false,
            ),
            (
                "wildcard admits any provider",
                CloudProfileBuilder::new("aws").provider_types(&["*"]),
                "azure",
                true,
            ),
        ];
        for (name, cp, seed_provider, ok) in cases {
            let seed = SeedBuilder::new("s1").provider(seed_provider).build();
            let got = run(&Provider, &shoot, &seed, &[], &[cp.build()]);
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }
}
