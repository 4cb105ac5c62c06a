use std::sync::LazyLock;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedBit};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, ZoneMode};

use super::framework::{SetCheck, SetStep};
use super::zones::{self, ShootZones};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ZonePreference";

/// Among the remaining seeds, prefer those that do not prefer other zones: seeds in mode
/// `Prefer` stay only if they share a zone with the workers. When the preference would leave
/// nothing, every remaining seed stays (it is a preference, not a requirement).
pub struct ZonePreference;

impl SetStep for ZonePreference {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&NO_PREFERENCE), Column::Index(&zones::BY_ZONE)];
        COLUMNS
    }

    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        _: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError> {
        Ok(narrow(&ShootZones::of(cx), seeds))
    }

    /// A part holding a preferred seed decides as the whole set does; a part without one keeps
    /// its seeds only if the rest of the set has none either.
    fn narrow_part(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        _: &Snapshot,
    ) -> Result<Option<Vec<Option<Reason>>>, FitError> {
        let zones = ShootZones::of(cx);
        if !zones.workers_only() || seeds.iter().any(|s| preferred(&zones, s)) {
            return Ok(Some(narrow(&zones, seeds)));
        }
        Ok(None)
    }

    /// A preference over positions: the flag of seeds without a zone preference, or a zone
    /// shared with the workers (marked from the index of the seeds by zone when every seed is
    /// evaluated, asked otherwise).
    fn fast_check<'c>(
        &self,
        cx: &'c ShootContext,
        cols: &'c SeedColumns,
        every_seed: bool,
    ) -> SetCheck<'c> {
        let zones = ShootZones::of(cx);
        if !zones.workers_only() {
            return SetCheck::Skip;
        }
        let Some(flag) = cols.bit(&NO_PREFERENCE) else {
            return SetCheck::Narrow;
        };
        SetCheck::Prefer {
            flag,
            otherwise: match zones::sharing_worker_zones(&zones, cols, every_seed) {
                Some(shares) => Box::new(move |i| shares[i as usize]),
                // Few seeds evaluated: the few of them that prefer zones are asked.
                None => Box::new(move |i| zones.shares_worker_zone(cols.info(i))),
            },
            reason: NOT_PREFERRED.clone(),
        }
    }
}

/// The seeds the preference drops, with the shoot's zones read once by the caller.
fn narrow(zones: &ShootZones, seeds: &[&SeedInfo]) -> Vec<Option<Reason>> {
    if !zones.workers_only() || !seeds.iter().any(|s| preferred(zones, s)) {
        return vec![None; seeds.len()];
    }
    seeds
        .iter()
        .map(|s| (!preferred(zones, s)).then(|| NOT_PREFERRED.clone()))
        .collect()
}

fn preferred(zones: &ShootZones, s: &SeedInfo) -> bool {
    (NO_PREFERENCE.of)(s) || zones.shares_worker_zone(s)
}

/// The seed does not prefer zones: kept whatever zones the workers use.
static NO_PREFERENCE: SeedBit = SeedBit {
    name: "noZonePreference",
    of: |seed| seed.zone_mode != ZoneMode::Prefer,
};

/// The reason this step drops a seed with, shared by every seed it drops.
static NOT_PREFERRED: LazyLock<Reason> = LazyLock::new(|| Reason::new(NotPreferred));

#[derive(Debug)]
struct NotPreferred;

declared!(NotPreferred {
    name: "zoneNotPreferred",
    summary: "prefer zones the workers do not use",
    message(self, f): f.write_str("seed prefers zones the workers do not use and other seeds fit better"),
});

#[cfg(test)]
mod tests;
