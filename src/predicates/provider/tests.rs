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
