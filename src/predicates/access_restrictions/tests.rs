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
