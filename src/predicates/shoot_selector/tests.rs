use super::*;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use crate::predicates::testing::run;

#[test]
fn shoot_selector_table() {
    let cases = [
        (
            "no selector admits any seed",
            ShootBuilder::new("garden-a", "s"),
            SeedBuilder::new("s1"),
            true,
        ),
        (
            "matching label admits seed",
            ShootBuilder::new("garden-a", "s").seed_selector("env", "prod"),
            SeedBuilder::new("s1").label("env", "prod"),
            true,
        ),
        (
            "missing label rejects seed",
            ShootBuilder::new("garden-a", "s").seed_selector("env", "prod"),
            SeedBuilder::new("s1"),
            false,
        ),
        (
            "provider types in shoot selector are ignored",
            ShootBuilder::new("garden-a", "s").seed_selector_provider_types(&["gcp"]),
            SeedBuilder::new("s1"),
            true,
        ),
    ];
    for (name, shoot, seed, ok) in cases {
        let got = run(&ShootSelector, &shoot.build(), &seed.build(), &[], &[]);
        assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
    }
}
