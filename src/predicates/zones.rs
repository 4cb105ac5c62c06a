use std::fmt;

use crate::context::ShootContext;
use crate::reason::{Declared, Reason};
use crate::snapshot::columns::{Column, SeedBit, SeedIndex};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, ZoneMode};

use super::framework::{FastCheck, Predicate, Prepared};

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

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&NOT_ENFORCED), Column::Index(&BY_ZONE)];
        COLUMNS
    }

    /// A seed enforcing zones the workers do not use is rejected with the same reason as every
    /// other: built once per decision.
    fn prepare(&self, cx: &ShootContext) -> Prepared {
        if cx.zone_ha || !cx.control_plane_zones.is_empty() || cx.worker_zones.is_empty() {
            return Prepared::default();
        }
        Prepared::new(Enforced(enforced(cx)))
    }

    fn filter(
        &self,
        cx: &ShootContext,
        state: &Prepared,
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
                Err(Reason::new(MissingZones { missing }))
            };
        }
        if seed.zone_mode == ZoneMode::Enforce
            && !cx.worker_zones.is_empty()
            && !cx.shares_worker_zone(seed)
        {
            return Err(match state.get::<Enforced>() {
                Some(Enforced(reason)) => reason.clone(),
                None => enforced(cx),
            });
        }
        Ok(())
    }

    fn passes(&self, cx: &ShootContext, _: &Prepared, seed: &SeedInfo, _: &Snapshot) -> bool {
        if cx.zone_ha {
            true
        } else if !cx.control_plane_zones.is_empty() {
            cx.control_plane_zones
                .iter()
                .all(|z| seed.zones.contains(z))
        } else {
            (NOT_ENFORCED.of)(seed) || cx.worker_zones.is_empty() || cx.shares_worker_zone(seed)
        }
    }

    /// With worker zones only, every seed is rejected for enforcing other zones.
    fn shared_reason(&self, _: &ShootContext, state: &Prepared) -> Option<Reason> {
        state
            .get::<Enforced>()
            .map(|Enforced(reason)| reason.clone())
    }

    /// Nothing to check without zones asked for; with worker zones only, seeds that do not
    /// enforce theirs pass, and those with a zone of the workers: marked from the index of the
    /// seeds by zone when every seed is evaluated, asked otherwise.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        every_seed: bool,
    ) -> FastCheck<'c> {
        if cx.zone_ha || (cx.control_plane_zones.is_empty() && cx.worker_zones.is_empty()) {
            FastCheck::Skip
        } else if cx.control_plane_zones.is_empty() {
            match sharing_worker_zones(cx, cols, every_seed) {
                Some(shares) => FastCheck::flag_or(cols, &NOT_ENFORCED, shares),
                // Few seeds evaluated: the few of them that enforce zones are asked.
                None => FastCheck::flag(cols, &NOT_ENFORCED),
            }
        } else {
            FastCheck::Ask
        }
    }
}

/// The seed does not enforce its zones: it passes whatever zones the workers use.
static NOT_ENFORCED: SeedBit = SeedBit {
    name: "zonesNotEnforced",
    of: |seed| seed.zone_mode != ZoneMode::Enforce,
};

/// The seeds of each zone: those sharing a zone with the workers pass (and are preferred by
/// `ZonePreference`, which reads the same index).
pub(super) static BY_ZONE: SeedIndex = SeedIndex {
    name: "zones",
    keys: |seed| seed.zones.clone(),
};

/// By position, the seeds sharing a zone with the workers, marked from the index when every seed
/// is evaluated; `None` when few are (asking those few is cheaper than marking them all).
pub(super) fn sharing_worker_zones(
    cx: &ShootContext,
    cols: &SeedColumns,
    every_seed: bool,
) -> Option<Vec<bool>> {
    let zones = cols.index(&BY_ZONE).filter(|_| every_seed)?;
    Some(zones.mark(cols.len(), &cx.worker_zones))
}

/// What `prepare` keeps: the reason of a seed enforcing other zones.
struct Enforced(Reason);

fn enforced(cx: &ShootContext) -> Reason {
    Reason::new(OtherZones {
        worker_zones: cx.worker_zones.iter().cloned().collect(),
    })
}

/// The seed lacks zones the shoot's control plane is pinned to.
#[derive(Debug)]
struct MissingZones {
    missing: Vec<String>,
}

impl Declared for MissingZones {
    fn name(&self) -> &'static str {
        "missingControlPlaneZones"
    }

    fn summary(&self) -> &'static str {
        "lack the control plane zones"
    }
}

impl fmt::Display for MissingZones {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed lacks control plane zone(s) {}",
            self.missing.join(", ")
        )
    }
}

/// The seed enforces its zones and the workers use none of them.
#[derive(Debug)]
struct OtherZones {
    worker_zones: Vec<String>,
}

impl Declared for OtherZones {
    fn name(&self) -> &'static str {
        "zoneEnforced"
    }

    fn summary(&self) -> &'static str {
        "enforce zones the workers do not use"
    }
}

impl fmt::Display for OtherZones {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed enforces its zones and none is used by the workers ({})",
            self.worker_zones.join(", ")
        )
    }
}

#[cfg(test)]
mod tests;
