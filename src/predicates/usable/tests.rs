use super::*;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use crate::predicates::testing::run;

#[test]
fn usable_table() {
    let shoot = ShootBuilder::new("garden-a", "s").build();
    let cases: Vec<(&str, SeedBuilder, Result<(), &str>)> = vec![
        (
            "ready visible seed is usable",
            SeedBuilder::new("s1"),
            Ok(()),
        ),
        (
            "deleting seed is not usable",
            SeedBuilder::new("s1").deleting(),
            Err("are being deleted"),
        ),
        (
            "invisible seed is not usable",
            SeedBuilder::new("s1").visible(false),
            Err("are invisible to the scheduler"),
        ),
        (
            "seed without last operation is not usable",
            SeedBuilder::new("s1").no_last_operation(),
            Err("were never reconciled"),
        ),
        (
            "gardenlet not ready makes seed unusable",
            SeedBuilder::new("s1").condition("GardenletReady", "False"),
            Err("are not ready"),
        ),
        (
            "seed with backup needs backup buckets ready",
            SeedBuilder::new("s1")
                .backup()
                .condition("BackupBucketsReady", "Unknown"),
            Err("are not ready"),
        ),
        (
            "seed with backup and ready buckets is usable",
            SeedBuilder::new("s1").backup(),
            Ok(()),
        ),
        (
            "seed without provider is malformed",
            SeedBuilder::new("s1").no_provider(),
            Err("are malformed"),
        ),
        (
            "negative allocatable is a valid seed (upstream reads it as full)",
            SeedBuilder::new("s1").allocatable("shoots", "-1"),
            Ok(()),
        ),
        (
            "fractional allocatable is a valid seed (upstream rounds it up)",
            SeedBuilder::new("s1").allocatable("shoots", "1500m"),
            Ok(()),
        ),
        (
            "non-quantity allocatable is malformed",
            SeedBuilder::new("s1").allocatable("shoots", "lots"),
            Err("are malformed"),
        ),
        (
            "the same taint twice is malformed",
            SeedBuilder::new("s1")
                .taint("a", Some("x"))
                .taint("a", Some("x")),
            Err("are malformed"),
        ),
        (
            "one taint key with two values is a valid seed, as upstream validates it",
            SeedBuilder::new("s1")
                .taint("a", None)
                .taint("a", Some("x")),
            Ok(()),
        ),
    ];
    for (name, seed, want) in cases {
        let got = run(&Usable, &shoot, &seed.build(), &[], &[]).map_err(|r| r.summary());
        assert_eq!(got, want, "{name}");
    }
}
