use super::*;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use crate::predicates::testing::run;

#[test]
fn seed_capacity_table() {
    let shoot = ShootBuilder::new("garden-a", "new").build();
    let placed = |n: usize| -> Vec<_> {
        (0..n)
            .map(|i| {
                ShootBuilder::new("garden-a", &format!("p{i}"))
                    .seed("s1")
                    .build()
            })
            .collect()
    };
    let cases = [
        ("no allocatable means unlimited", None, 10, true),
        ("below allocatable fits", Some("3"), 2, true),
        ("at allocatable is full", Some("3"), 3, false),
        ("zero allocatable takes nothing", Some("0"), 0, false),
        (
            "a decimal exponent counts whole shoots",
            Some("2e0"),
            2,
            false,
        ),
        // Upstream compares usage with `Quantity.Value()`, which rounds up.
        ("1500m is room for a second shoot", Some("1500m"), 1, true),
        ("1500m is full at two", Some("1500m"), 2, false),
        ("1001m is room for a second shoot", Some("1001m"), 1, true),
        ("a negative allocatable takes nothing", Some("-3"), 0, false),
        ("an exa of shoots is room", Some("1Ei"), 5, true),
    ];
    for (name, alloc, used, ok) in cases {
        let mut seed = SeedBuilder::new("s1");
        if let Some(a) = alloc {
            seed = seed.allocatable("shoots", a);
        }
        let got = run(&SeedCapacity, &shoot, &seed.build(), &placed(used), &[]);
        assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
    }
}

#[test]
fn migrating_shoot_counts_on_its_source_seed() {
    let shoot = ShootBuilder::new("garden-a", "new").build();
    let migrating = ShootBuilder::new("garden-a", "m")
        .seed("s2")
        .status_seed("s1")
        .build();
    let seed = SeedBuilder::new("s1").allocatable("shoots", "1").build();
    assert!(run(&SeedCapacity, &shoot, &seed, &[migrating], &[]).is_err());
}
