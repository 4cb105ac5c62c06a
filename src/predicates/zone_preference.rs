use std::fmt;
use std::sync::LazyLock;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Declared, Reason};
use crate::snapshot::columns::flags;
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, ZoneMode};

use super::framework::{SetCheck, SetStep};

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

    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        _: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError> {
        if !applies(cx) || !seeds.iter().any(|s| preferred(cx, s)) {
            return Ok(vec![None; seeds.len()]);
        }
        Ok(seeds
            .iter()
            .map(|s| (!preferred(cx, s)).then(|| NOT_PREFERRED.clone()))
            .collect())
    }

    /// A part holding a preferred seed decides as the whole set does; a part without one keeps
    /// its seeds only if the rest of the set has none either.
    fn narrow_part(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        snap: &Snapshot,
    ) -> Result<Option<Vec<Option<Reason>>>, FitError> {
        if !applies(cx) || seeds.iter().any(|s| preferred(cx, s)) {
            return self.narrow(cx, seeds, snap).map(Some);
        }
        Ok(None)
    }

    /// A preference over positions: the flag of seeds without a zone preference, or a zone
    /// shared with the workers.
    fn fast_check<'c>(&self, cx: &'c ShootContext, cols: &'c SeedColumns) -> SetCheck<'c> {
        if !applies(cx) {
            return SetCheck::Skip;
        }
        SetCheck::Prefer {
            flag: flags::NO_ZONE_PREFERENCE,
            otherwise: {
                let shares = cols.in_zones(&cx.worker_zones);
                Box::new(move |i| shares[i as usize])
            },
            reason: NOT_PREFERRED.clone(),
        }
    }
}

fn applies(cx: &ShootContext) -> bool {
    !cx.zone_ha && cx.control_plane_zones.is_empty() && !cx.worker_zones.is_empty()
}

fn preferred(cx: &ShootContext, s: &SeedInfo) -> bool {
    s.zone_mode != ZoneMode::Prefer || cx.shares_worker_zone(s)
}

/// The reason this step drops a seed with, shared by every seed it drops.
static NOT_PREFERRED: LazyLock<Reason> = LazyLock::new(|| Reason::new(NotPreferred));

#[derive(Debug)]
struct NotPreferred;

impl Declared for NotPreferred {
    fn name(&self) -> &'static str {
        "zoneNotPreferred"
    }

    fn summary(&self) -> &'static str {
        "prefer zones the workers do not use"
    }
}

impl fmt::Display for NotPreferred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("seed prefers zones the workers do not use and other seeds fit better")
    }
}

#[cfg(test)]
mod tests;
