use super::*;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use crate::predicates::testing::run;

#[test]
fn taints_table() {
    let p = "seed.gardener.cloud/protected";
    let cases = [
        (
            "untainted seed takes any shoot",
            SeedBuilder::new("s1"),
            ShootBuilder::new("garden-a", "s"),
            true,
        ),
        (
            "taint without toleration rejects",
            SeedBuilder::new("s1").taint(p, None),
            ShootBuilder::new("garden-a", "s"),
            false,
        ),
        (
            "taint_without_value_is_tolerated_by_any_toleration_with_same_key",
            SeedBuilder::new("s1").taint(p, None),
            ShootBuilder::new("garden-a", "s").toleration(p, Some("whatever")),
            true,
        ),
        (
            "taint with value needs the same value",
            SeedBuilder::new("s1").taint("dedicated", Some("payments")),
            ShootBuilder::new("garden-a", "s").toleration("dedicated", Some("web")),
            false,
        ),
        (
            "taint with value tolerated by equal value",
            SeedBuilder::new("s1").taint("dedicated", Some("payments")),
            ShootBuilder::new("garden-a", "s").toleration("dedicated", Some("payments")),
            true,
        ),
        (
            "taint with value not tolerated by valueless toleration",
            SeedBuilder::new("s1").taint("dedicated", Some("payments")),
            ShootBuilder::new("garden-a", "s").toleration("dedicated", None),
            false,
        ),
        (
            "taint with the empty value is tolerated by a valueless toleration",
            SeedBuilder::new("s1").taint("dedicated", Some("")),
            ShootBuilder::new("garden-a", "s").toleration("dedicated", None),
            true,
        ),
        (
            "taint with the empty value is not tolerated by a toleration with a value",
            SeedBuilder::new("s1").taint("dedicated", Some("")),
            ShootBuilder::new("garden-a", "s").toleration("dedicated", Some("web")),
            false,
        ),
        (
            "of two tolerations with the same key the later one decides and rejects",
            SeedBuilder::new("s1").taint("dedicated", Some("payments")),
            ShootBuilder::new("garden-a", "s")
                .toleration("dedicated", Some("payments"))
                .toleration("dedicated", Some("web")),
            false,
        ),
        (
            "of two tolerations with the same key the later one decides and accepts",
            SeedBuilder::new("s1").taint("dedicated", Some("payments")),
            ShootBuilder::new("garden-a", "s")
                .toleration("dedicated", Some("web"))
                .toleration("dedicated", Some("payments")),
            true,
        ),
        (
            "a later valueless toleration replaces an earlier matching value",
            SeedBuilder::new("s1").taint("dedicated", Some("payments")),
            ShootBuilder::new("garden-a", "s")
                .toleration("dedicated", Some("payments"))
                .toleration("dedicated", None),
            false,
        ),
        (
            "two taints with one key and different values are never both tolerated",
            SeedBuilder::new("s1")
                .taint("dedicated", Some("a"))
                .taint("dedicated", Some("b")),
            ShootBuilder::new("garden-a", "s")
                .toleration("dedicated", Some("a"))
                .toleration("dedicated", Some("b")),
            false,
        ),
        (
            "more taints than tolerations is not tolerated even when every key matches",
            SeedBuilder::new("s1")
                .taint("dedicated", None)
                .taint("dedicated", Some("a")),
            ShootBuilder::new("garden-a", "s").toleration("dedicated", Some("a")),
            false,
        ),
        (
            "a taint with and without value on one key is tolerated by enough tolerations",
            SeedBuilder::new("s1")
                .taint("dedicated", None)
                .taint("dedicated", Some("a")),
            ShootBuilder::new("garden-a", "s")
                .toleration("other", None)
                .toleration("dedicated", Some("a")),
            true,
        ),
        (
            "every taint must be tolerated",
            SeedBuilder::new("s1").taint("a", None).taint("b", None),
            ShootBuilder::new("garden-a", "s").toleration("a", None),
            false,
        ),
    ];
    for (name, seed, shoot, ok) in cases {
        let got = run(&Taints, &shoot.build(), &seed.build(), &[], &[]);
        assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
    }
}
