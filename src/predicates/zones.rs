use std::borrow::Cow;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedBit, SeedIndex};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, ZoneMode};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Zones";

/// Explicit control plane zones must all exist on the seed; otherwise a seed in zone selection
/// mode `Enforce` must share a zone with the workers (when they name any). Skipped for zone-HA
/// control planes, which spread over the seed's zones anyway.
pub struct Zones;

/// The zones the shoot asks of a seed, read from its spec: kept by [`Zones`]'s `prepare`, read
/// by `ZonePreference` for itself.
#[derive(Clone, Default)]
pub(super) struct ShootZones {
    /// The control plane spreads over the seed's zones, whichever they are (zone-HA).
    pub(super) spread: bool,
    /// `spec.controlPlane.zones`: each must be a zone of the seed.
    pub(super) control_plane: Vec<String>,
    /// The zones of `spec.provider.workers[]`, sorted, each once.
    pub(super) workers: Vec<String>,
}

impl ShootZones {
    pub(super) fn of(cx: &ShootContext) -> Self {
        let spec = &cx.shoot.spec;
        let mut workers: Vec<String> = spec
            .provider
            .iter()
            .flat_map(|p| &p.workers)
            .flat_map(|w| w.zones.iter().cloned())
            .collect();
        workers.sort_unstable();
        workers.dedup();
        ShootZones {
            spread: cx.shoot.multi_zonal_control_plane(),
            control_plane: spec
                .control_plane
                .as_ref()
                .map(|c| c.zones.clone())
                .unwrap_or_default(),
            workers,
        }
    }

    /// Only the workers' zones ask something of the seed: no zone-HA control plane, no control
    /// plane zones, and workers in some zone.
    pub(super) fn workers_only(&self) -> bool {
        !self.spread && self.control_plane.is_empty() && !self.workers.is_empty()
    }

    /// The seed has a zone the shoot's workers use.
    pub(super) fn shares_worker_zone(&self, seed: &SeedInfo) -> bool {
        seed.zones
            .iter()
            .any(|z| self.workers.binary_search(z).is_ok())
    }
}

/// What `prepare` keeps: the shoot's zones and, with worker zones only, the reason of a seed
/// enforcing other zones.
#[derive(Clone, Default)]
struct Asked {
    zones: ShootZones,
    enforced: Option<Reason>,
}

impl Asked {
    fn of(cx: &ShootContext) -> Self {
        let zones = ShootZones::of(cx);
        let enforced = zones.workers_only().then(|| enforced(&zones));
        Asked { zones, enforced }
    }

    /// Kept by `prepare`, or read again when a caller asks one seed without preparing.
    fn from<'s>(cx: &ShootContext, state: &'s Prepared) -> Cow<'s, Asked> {
        match state.get::<Asked>() {
            Some(asked) => Cow::Borrowed(asked),
            None => Cow::Owned(Asked::of(cx)),
        }
    }
}

impl Predicate for Zones {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&NOT_ENFORCED), Column::Index(&BY_ZONE)];
        COLUMNS
    }

    /// The shoot's zones, and the reason of a seed enforcing zones the workers do not use (the
    /// same for every such seed): read once per decision.
    fn prepare(&self, cx: &ShootContext) -> Result<Prepared, FitError> {
        Ok(Prepared::new(Asked::of(cx)))
    }

    fn check(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        let asked = Asked::from(cx, state);
        let zones = &asked.zones;
        if zones.spread {
            return Ok(());
        }
        if !zones.control_plane.is_empty() {
            if zones.control_plane.iter().all(|z| seed.zones.contains(z)) {
                return Ok(());
            }
            return why.reject(|| {
                let missing = zones
                    .control_plane
                    .iter()
                    .filter(|z| !seed.zones.contains(z))
                    .cloned()
                    .collect();
                Reason::new(MissingZones { missing })
            });
        }
        match &asked.enforced {
            Some(reason) if !(NOT_ENFORCED.of)(seed) && !zones.shares_worker_zone(seed) => {
                why.reject(|| reason.clone())
            }
            _ => Ok(()),
        }
    }

    /// With worker zones only, every seed is rejected for enforcing other zones.
    fn shared_reason(&self, _: &ShootContext, state: &Prepared) -> Option<Reason> {
        state
            .get::<Asked>()
            .and_then(|asked| asked.enforced.clone())
    }

    /// Nothing to check without zones asked for; with worker zones only, seeds that do not
    /// enforce theirs pass, and those with a zone of the workers: marked from the index of the
    /// seeds by zone when every seed is evaluated, asked otherwise.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        cols: &'c SeedColumns,
        every_seed: bool,
    ) -> FastCheck<'c> {
        let asked = Asked::from(cx, state);
        let zones = &asked.zones;
        if zones.spread || (zones.control_plane.is_empty() && zones.workers.is_empty()) {
            FastCheck::Skip
        } else if zones.control_plane.is_empty() {
            match sharing_worker_zones(zones, cols, every_seed) {
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
    zones: &ShootZones,
    cols: &SeedColumns,
    every_seed: bool,
) -> Option<Vec<bool>> {
    let index = cols.index(&BY_ZONE).filter(|_| every_seed)?;
    Some(index.mark(cols.len(), &zones.workers))
}

fn enforced(zones: &ShootZones) -> Reason {
    Reason::new(OtherZones {
        worker_zones: zones.workers.clone(),
    })
}

/// The seed lacks zones the shoot's control plane is pinned to.
#[derive(Debug)]
struct MissingZones {
    missing: Vec<String>,
}

declared!(MissingZones {
    name: "missingControlPlaneZones",
    summary: "lack the control plane zones",
    message(self, f): write!(
        f,
        "seed lacks control plane zone(s) {}",
        self.missing.join(", ")
    ),
});

/// The seed enforces its zones and the workers use none of them.
#[derive(Debug)]
struct OtherZones {
    worker_zones: Vec<String>,
}

declared!(OtherZones {
    name: "zoneEnforced",
    summary: "enforce zones the workers do not use",
    message(self, f): write!(
        f,
        "seed enforces its zones and none is used by the workers ({})",
        self.worker_zones.join(", ")
    ),
});

#[cfg(test)]
mod tests;
