use super::*;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use crate::predicates::testing::run;

#[test]
fn zones_table() {
    let cases = [
        (
            "control plane zones all present",
            ShootBuilder::new("garden-a", "s").control_plane_zones(&["a", "b"]),
            SeedBuilder::new("s1").zones(&["a", "b", "c"]),
            true,
        ),
        (
            "control plane zone missing",
            ShootBuilder::new("garden-a", "s").control_plane_zones(&["a", "d"]),
            SeedBuilder::new("s1").zones(&["a", "b", "c"]),
            false,
        ),
        (
            "enforce seed with overlapping worker zones",
            ShootBuilder::new("garden-a", "s").worker_zones(&["b"]),
            SeedBuilder::new("s1")
                .zones(&["a", "b"])
                .zone_mode("Enforce"),
            true,
        ),
        (
            "enforce seed without overlap",
            ShootBuilder::new("garden-a", "s").worker_zones(&["x"]),
            SeedBuilder::new("s1")
                .zones(&["a", "b"])
                .zone_mode("Enforce"),
            false,
        ),
        (
            "enforce seed and workers without zones",
            ShootBuilder::new("garden-a", "s"),
            SeedBuilder::new("s1").zones(&["a"]).zone_mode("Enforce"),
            true,
        ),
        (
            "prefer seed without overlap passes the filter",
            ShootBuilder::new("garden-a", "s").worker_zones(&["x"]),
            SeedBuilder::new("s1").zones(&["a"]).zone_mode("Prefer"),
            true,
        ),
        (
            "zone ha shoot skips zone checks",
            ShootBuilder::new("garden-a", "s")
                .failure_tolerance("zone")
                .control_plane_zones(&["q"]),
            SeedBuilder::new("s1").zones(&["a", "b", "c"]),
            true,
        ),
    ];
    for (name, shoot, seed, ok) in cases {
        let got = run(&Zones, &shoot.build(), &seed.build(), &[], &[]);
        assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
    }
}
