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
