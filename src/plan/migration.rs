//! What gardener-apiserver checks when a shoot's `spec.seedName` changes, and which kind of
//! control-plane migration a move is.
//!
//! A seed change is refused unless both seeds configure `spec.backup`, the internal domain
//! (`spec.dns.internal.domain`) stays the same, and a shoot under one of the source's default
//! domains finds that default domain on the destination too (upstream's shoot validator, next to
//! the filters the scheduler runs anyway: taints, access restrictions, capacity, the
//! CloudProfile's selector, a destination being deleted). Such a move is never planned.
//!
//! A move is *live* (the binding carries `migration.gardener.cloud/live-migrate: "true"`) when
//! gardener-apiserver's `LiveControlPlaneMigration` feature gate is on (`--live-migration`)
//! and the shoot's control plane is highly available, the shoot is neither hibernated nor waking
//! up, both seeds have the same provider type and report the same gardenlet version, and the
//! regions are the same or no farther apart than the threshold of the shoot's region ConfigMap
//! (its annotation `migration.gardener.cloud/inter-region-distance-threshold`, else 180), unless
//! the shoot allows distant regions (`migration.gardener.cloud/allow-distant-regions: "true"`).
//! Otherwise it is *classic*, and the plan says why.

use serde::Serialize;

use crate::api::{ConfigMap, Seed, Shoot};
use crate::snapshot::Snapshot;

/// The annotation that asks gardener-apiserver for a live migration.
pub const ANNOTATION_LIVE_MIGRATE: &str = "migration.gardener.cloud/live-migrate";
/// On a region ConfigMap: the largest distance a live migration may cover.
pub const ANNOTATION_DISTANCE_THRESHOLD: &str =
    "migration.gardener.cloud/inter-region-distance-threshold";
/// On a shoot: live migration between distant regions is allowed.
pub const ANNOTATION_ALLOW_DISTANT: &str = "migration.gardener.cloud/allow-distant-regions";
/// Upstream's threshold when the region ConfigMap does not set one.
pub const DEFAULT_DISTANCE_THRESHOLD: i64 = 180;

/// How a move is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// The control plane keeps serving while it moves.
    Live,
    /// The control plane is shut down on the source and restored on the destination.
    Classic,
}

/// A move's kind, and when it is classic, every reason it is not live.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Migration {
    pub kind: Kind,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_live: Vec<String>,
}

impl Migration {
    pub fn is_live(&self) -> bool {
        self.kind == Kind::Live
    }

    /// `live` or `classic`, as tables and comments show it.
    pub fn label(&self) -> &'static str {
        match self.kind {
            Kind::Live => "live",
            Kind::Classic => "classic",
        }
    }
}

/// Why gardener-apiserver would refuse to move `shoot` from `from` to `to`, beyond the
/// scheduler's filters; `None` when it would accept.
/// `domain` is the shoot's `spec.dns.domain`.
pub fn refusal(domain: Option<&str>, from: Option<&Seed>, to: &Seed) -> Option<String> {
    let to_name = to.metadata.name.as_deref().unwrap_or_default();
    if to.spec.backup.is_none() {
        return Some(format!(
            "seed {to_name} has no spec.backup: a migration destination needs one"
        ));
    }
    let from = from?;
    let from_name = from.metadata.name.as_deref().unwrap_or_default();
    let internal = |s: &Seed| {
        s.spec
            .dns
            .as_ref()
            .and_then(|d| d.internal.as_ref())
            .map(|d| d.domain.clone())
            .unwrap_or_default()
    };
    let defaults = |s: &Seed| -> Vec<String> {
        s.spec
            .dns
            .iter()
            .flat_map(|d| d.defaults.iter().map(|d| d.domain.clone()))
            .collect()
    };
    let (a, b) = (internal(from), internal(to));
    if a != b {
        return Some(format!(
            "the internal domain would change from {a:?} ({from_name}) to {b:?} ({to_name}): \
             gardener-apiserver refuses such a seed change"
        ));
    }
    let domain = domain?;
    let used = defaults(from)
        .into_iter()
        .find(|d| domain.ends_with(&format!(".{d}")))?;
    if defaults(to).contains(&used) {
        return None;
    }
    Some(format!(
        "the shoot's domain {domain} is under {from_name}'s default domain {used}, which \
         {to_name} does not offer: gardener-apiserver refuses such a seed change"
    ))
}

/// The kind of migration from `from` to `to`; `enabled` says whether gardener-apiserver's
/// `LiveControlPlaneMigration` feature gate is on.
pub fn kind(
    shoot: &Shoot,
    from: &Seed,
    to: &Seed,
    snap: &Snapshot,
    config_maps: &[ConfigMap],
    enabled: bool,
) -> Migration {
    let mut not_live = Vec::new();
    if !enabled {
        not_live.push(
            "live migration is not enabled (--live-migration: gardener-apiserver's \
             LiveControlPlaneMigration feature gate)"
                .to_string(),
        );
    }
    if shoot
        .spec
        .control_plane
        .as_ref()
        .and_then(|c| c.high_availability.as_ref())
        .is_none()
    {
        not_live.push("the control plane is not highly available".into());
    }
    let hibernating = shoot
        .spec
        .hibernation
        .as_ref()
        .and_then(|h| h.enabled)
        .unwrap_or(false);
    if hibernating || shoot.status.as_ref().is_some_and(|s| s.is_hibernated) {
        not_live.push("the shoot is hibernated or waking up".into());
    }
    let name = |s: &Seed| s.metadata.name.clone().unwrap_or_default();
    let provider = |s: &Seed| s.spec.provider.clone().unwrap_or_default();
    let (pf, pt) = (provider(from), provider(to));
    if pf.type_ != pt.type_ {
        not_live.push(format!(
            "the provider type changes ({} -> {})",
            pf.type_, pt.type_
        ));
    }
    let version = |s: &Seed| {
        s.status
            .gardener
            .as_ref()
            .map(|g| g.version.clone())
            .filter(|v| !v.is_empty())
    };
    match (version(from), version(to)) {
        (Some(a), Some(b)) if a != b => not_live.push(format!(
            "the gardenlets differ ({}: {a}, {}: {b})",
            name(from),
            name(to)
        )),
        (Some(_), Some(_)) => {}
        (a, b) => {
            for (seed, v) in [(from, a), (to, b)] {
                if v.is_none() {
                    not_live.push(format!(
                        "seed {} reports no gardenlet version (status.gardener.version)",
                        name(seed)
                    ));
                }
            }
        }
    }
    if let Some(why) = too_far(shoot, &pf.region, &pt.region, snap, config_maps) {
        not_live.push(why);
    }
    Migration {
        kind: if not_live.is_empty() {
            Kind::Live
        } else {
            Kind::Classic
        },
        not_live,
    }
}

/// Why the regions are too far apart for a live migration, if they are.
fn too_far(
    shoot: &Shoot,
    from: &str,
    to: &str,
    snap: &Snapshot,
    config_maps: &[ConfigMap],
) -> Option<String> {
    if from == to {
        return None;
    }
    let allowed = shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANNOTATION_ALLOW_DISTANT))
        .is_some_and(|v| parse_bool(v));
    if allowed {
        return None;
    }
    let profile = match snap.cloud_profile_for(shoot) {
        Ok(p) => p.region_config_name.clone(),
        Err((_, message)) => return Some(format!("its CloudProfile cannot be read: {message}")),
    };
    let Some(rc) = snap.region_config_for(&profile) else {
        return Some(format!(
            "no region ConfigMap lists CloudProfile {profile} (regions {from} -> {to})"
        ));
    };
    let threshold = config_maps
        .iter()
        .find(|cm| {
            format!(
                "{}/{}",
                cm.metadata.namespace.as_deref().unwrap_or_default(),
                cm.metadata.name.as_deref().unwrap_or_default()
            ) == rc.name
        })
        .and_then(|cm| cm.metadata.annotations.as_ref())
        .and_then(|a| a.get(ANNOTATION_DISTANCE_THRESHOLD));
    let threshold = match threshold {
        None => DEFAULT_DISTANCE_THRESHOLD,
        Some(t) => match t.trim().parse::<i64>() {
            Ok(t) if t >= 0 => t,
            _ => {
                return Some(format!(
                    "region ConfigMap {}: annotation {ANNOTATION_DISTANCE_THRESHOLD}: {t:?} is \
                     not a non-negative integer",
                    rc.name
                ));
            }
        },
    };
    let row = match rc.rows.get(from) {
        None => {
            return Some(format!(
                "region {from} has no row in region ConfigMap {}",
                rc.name
            ));
        }
        Some(Err(message)) => {
            return Some(format!(
                "region ConfigMap {}: data[{from}]: {message}",
                rc.name
            ));
        }
        Some(Ok(row)) => row,
    };
    match row.get(to) {
        None => Some(format!(
            "region ConfigMap {} gives no distance from {from} to {to}",
            rc.name
        )),
        Some(&d) if d > threshold => Some(format!(
            "{from} -> {to} is {d} apart, more than the threshold {threshold} of region ConfigMap {}",
            rc.name
        )),
        Some(_) => None,
    }
}

/// A shoot's `spec.dns.domain`.
pub fn domain_of(shoot: &Shoot) -> Option<&str> {
    shoot.spec.dns.as_ref().and_then(|d| d.domain.as_deref())
}

/// Go's `strconv.ParseBool`.
fn parse_bool(v: &str) -> bool {
    matches!(v, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

#[cfg(test)]
mod tests;
