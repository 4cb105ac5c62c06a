use crate::context::ShootContext;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedBit};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "HighAvailabilityZones";

/// A control plane with failure tolerance `zone` spreads over 3 zones, so the seed needs 3.
pub struct HighAvailabilityZones;

impl Predicate for HighAvailabilityZones {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&THREE_ZONES)];
        COLUMNS
    }

    fn check(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        if !cx.shoot.multi_zonal_control_plane() || (THREE_ZONES.of)(seed) {
            Ok(())
        } else {
            why.reject(|| {
                Reason::new(TooFewZones {
                    zones: seed.zones.len(),
                })
            })
        }
    }

    /// Only zone-HA control planes need three zones.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        if cx.shoot.multi_zonal_control_plane() {
            FastCheck::flag_only(cols, &THREE_ZONES)
        } else {
            FastCheck::Skip
        }
    }
}

/// The seed has the three zones a zone-HA control plane spreads over.
static THREE_ZONES: SeedBit = SeedBit {
    name: "threeZones",
    of: |seed| seed.zones.len() >= 3,
};

/// A zone-HA control plane needs three zones; the seed has fewer.
#[derive(Debug)]
struct TooFewZones {
    zones: usize,
}

declared!(TooFewZones {
    name: "tooFewZones",
    summary: "have fewer than 3 zones for a zone-HA control plane",
    message(self, f): write!(f, "seed has {} zone(s), zone HA needs 3", self.zones),
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    #[test]
    fn high_availability_zones_table() {
        let cases = [
            ("zone ha shoot on three zone seed", "zone", 3, true),
            ("zone ha shoot on two zone seed", "zone", 2, false),
            ("node ha shoot on one zone seed", "node", 1, true),
            ("non ha shoot on one zone seed", "", 1, true),
        ];
        for (name, ft, zones, ok) in cases {
            let shoot = ShootBuilder::new("garden-a", "s")
                .failure_tolerance(ft)
                .build();
            let zones: Vec<String> = (0..zones).map(|i| format!("z{i}")).collect();
            let seed = SeedBuilder::new("s1")
                .zones(&zones.iter().map(String::as_str).collect::<Vec<_>>())
                .build();
            let got = run(&HighAvailabilityZones, &shoot, &seed, &[], &[]);
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }
}
