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
            && !cx.shares_worker_zone(seed)
        {
            return Err(Reason::ZoneEnforced {
                worker_zones: cx.worker_zones.iter().cloned().collect(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
