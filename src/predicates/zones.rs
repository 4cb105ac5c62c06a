use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot, ZoneMode};

use super::framework::{Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Zones";

/// Explicit control plane zones must all exist on the seed; otherwise a seed in zone selection
/// mode `Enforce` must share a zone with the workers (when they name any). Skipped for zone-HA
/// control planes, which spread over the seed's zones anyway.
pub struct Zones;

impl Predicate for Zones {
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
        if cx.zone_ha {
            return Ok(());
        }
        if !cx.control_plane_zones.is_empty() {
            let missing: Vec<String> = cx
                .control_plane_zones
                .iter()
                .filter(|z| !seed.zones.contains(z))
                .cloned()
                .collect();
            return if missing.is_empty() {
                Ok(())
            } else {
                Err(Reason::MissingControlPlaneZones { missing })
            };
        }
        if seed.zone_mode == ZoneMode::Enforce
            && !cx.worker_zones.is_empty()
            && !seed.zones.iter().any(|z| cx.worker_zones.contains(z))
        {
            return Err(Reason::ZoneEnforced {
                worker_zones: cx.worker_zones.iter().cloned().collect(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
}
