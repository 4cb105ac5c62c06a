//! Why a seed was rejected, and how rejections add up into one line a person can act on.
//!
//! A [`Reason`] is data; its [`Reason::summary`] is the phrase counted across seeds
//! (`3 seed(s) are in another region`), its `Display` the per-seed detail of the explanation, and
//! [`Reason::hint`] what the user could change. A plugin may declare its reasons in its own file
//! instead ([`Declared`], [`Reason::Declared`]): the type, its message, its count phrase and its
//! hint next to the check that produces it, and nothing to add here.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeMap;

/// A reason declared by the plugin that produces it, in the plugin's own file.
pub trait Declared: fmt::Debug + fmt::Display + Send + Sync {
    /// Its name in `simulate -o json` and among a fit error's reason names (camelCase).
    fn name(&self) -> &'static str;
    /// The phrase counted across seeds (`lack the label x`), as [`Reason::summary`].
    fn summary(&self) -> &'static str;
    /// What the shoot's owner or the operator could change, as [`Reason::hint`].
    fn hint(&self) -> Option<String> {
        None
    }
}

/// A [`Declared`] reason, shared by the seeds it is the same for.
#[derive(Clone, Debug)]
pub struct DeclaredReason(pub Arc<dyn Declared>);

impl PartialEq for DeclaredReason {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for DeclaredReason {}

/// Written as the built-in reasons are: its name under `declared`, its message under `message`.
impl Serialize for DeclaredReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("declared", self.0.name())?;
        map.serialize_entry("message", &self.0.to_string())?;
        map.end()
    }
}

/// The stage that rejected a seed and why. Variants follow the pipeline order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
pub enum Reason {
    /// The seed object itself is malformed (named field); it is skipped until fixed.
    InvalidSeed {
        field: String,
        message: String,
    },
    Deleting,
    Invisible,
    NoLastOperation,
    NotReady {
        condition: String,
        status: String,
    },
    /// Shared by the seeds of one decision.
    CloudProfileSelector {
        cloud_profile: Arc<str>,
    },
    ShootSelector,
    /// Shared by the seeds of one provider type.
    Provider {
        seed: Arc<str>,
        allowed: Arc<[String]>,
    },
    TooFewZones {
        zones: usize,
    },
    MissingControlPlaneZones {
        missing: Vec<String>,
    },
    /// Shared by the seeds of one decision.
    ZoneEnforced {
        worker_zones: Arc<[String]>,
    },
    ZoneNotPreferred,
    AccessRestriction {
        missing: Vec<String>,
    },
    /// Shared by the seeds of one decision.
    DefaultDomain {
        domain: Arc<str>,
    },
    EmergencyStop,
    Networks {
        detail: String,
    },
    Taints {
        untolerated: Vec<String>,
    },
    Capacity {
        used: u64,
        allocatable: u64,
    },
    /// Opt-in `MaxLatency`: the latency (with its source) exceeds the bound.
    #[serde(rename_all = "camelCase")]
    MaxLatency {
        max_ms: String,
        latency: String,
        /// The shoot's region.
        region: String,
    },
    /// Opt-in `Residency`: the seed's region is outside a group the shoot's region is in.
    #[serde(rename_all = "camelCase")]
    Residency {
        group: String,
        shoot_region: String,
        seed_region: String,
        /// `city, country, jurisdiction j`; `None` when the catalogue does not know the region.
        seed_site: Option<String>,
    },
    OtherProvider,
    /// Shared by the seeds of one region.
    OtherRegion {
        region: Arc<str>,
    },
    FartherRegion {
        distance: i64,
        minimum: i64,
        source: String,
    },
    ShorterRegionPrefix {
        common: usize,
        best: usize,
    },
    /// A reason its plugin declares in its own file.
    Declared(DeclaredReason),
}

impl Reason {
    /// A reason declared by a plugin.
    pub fn declared(reason: impl Declared + 'static) -> Reason {
        Reason::Declared(DeclaredReason(Arc::new(reason)))
    }
}

impl Reason {
    /// The phrase counted across seeds in the one-line failure message.
    pub fn summary(&self) -> &'static str {
        match self {
            Reason::InvalidSeed { .. } => "are malformed",
            Reason::Deleting => "are being deleted",
            Reason::Invisible => "are invisible to the scheduler",
            Reason::NoLastOperation => "were never reconciled",
            Reason::NotReady { .. } => "are not ready",
            Reason::CloudProfileSelector { .. } => "did not match the CloudProfile's seed selector",
            Reason::ShootSelector => "did not match the shoot's seed selector",
            Reason::Provider { .. } => "have a provider the CloudProfile does not allow",
            Reason::TooFewZones { .. } => "have fewer than 3 zones for a zone-HA control plane",
            Reason::MissingControlPlaneZones { .. } => "lack the control plane zones",
            Reason::ZoneEnforced { .. } => "enforce zones the workers do not use",
            Reason::ZoneNotPreferred => "prefer zones the workers do not use",
            Reason::AccessRestriction { .. } => "do not offer the access restrictions",
            Reason::DefaultDomain { .. } => "do not own the shoot's default domain",
            Reason::EmergencyStop => "have reconciliations stopped",
            Reason::Networks { .. } => "have networks that overlap the shoot's",
            Reason::Taints { .. } => "had taints that the shoot does not tolerate",
            Reason::Capacity { .. } => "have no capacity left",
            Reason::MaxLatency { .. } => "are farther than the maximum latency",
            Reason::Residency { .. } => "are outside the shoot's residency group",
            Reason::OtherProvider => "have another provider type",
            Reason::OtherRegion { .. } => "are in another region",
            Reason::FartherRegion { .. } => "are farther away than the nearest seeds",
            Reason::ShorterRegionPrefix { .. } => {
                "share a shorter region prefix than the best seeds"
            }
            Reason::Declared(d) => d.0.summary(),
        }
    }

    /// What the shoot's owner or the operator could change, when there is a clear answer.
    pub fn hint(&self) -> Option<String> {
        match self {
            Reason::Taints { untolerated } => Some(format!(
                "add a toleration for {}",
                untolerated.join(", ")
            )),
            Reason::AccessRestriction { missing } => Some(format!(
                "remove access restriction {} or offer it on a seed",
                missing.join(", ")
            )),
            Reason::Capacity { .. } => {
                Some("raise status.allocatable.shoots or add a seed".into())
            }
            Reason::OtherRegion { .. } => Some(
                "add a seed in the shoot's region or use candidateDeterminationStrategy MinimalDistance"
                    .into(),
            ),
            Reason::ShootSelector => Some("relax spec.seedSelector".into()),
            Reason::MaxLatency { region, .. } => Some(format!(
                "add a seed near region {region} or raise maxLatencyMs of filter MaxLatency"
            )),
            Reason::Residency {
                seed_site: None,
                seed_region,
                ..
            } => Some(format!(
                "add region {seed_region} with its country to schedulers.shoot.regions"
            )),
            Reason::Residency { group, .. } => Some(format!(
                "add a seed in group {group}, or annotate the shoot or its project with {}={}",
                crate::api::ANNOTATION_RESIDENCY,
                crate::api::RESIDENCY_IGNORE
            )),
            Reason::Declared(d) => d.0.hint(),
            _ => None,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::InvalidSeed { field, message } => {
                write!(f, "seed is malformed: {field}: {message}")
            }
            Reason::Deleting => f.write_str("seed is being deleted"),
            Reason::Invisible => {
                f.write_str("seed is invisible (spec.settings.scheduling.visible: false)")
            }
            Reason::NoLastOperation => f.write_str("seed has no status.lastOperation yet"),
            Reason::NotReady { condition, status } => {
                write!(f, "seed condition {condition} is {status}, not True")
            }
            Reason::CloudProfileSelector { cloud_profile } => {
                write!(
                    f,
                    "labels do not match the seed selector of CloudProfile {cloud_profile:?}"
                )
            }
            Reason::ShootSelector => f.write_str("labels do not match spec.seedSelector"),
            Reason::Provider { seed, allowed } => {
                write!(
                    f,
                    "provider type {seed:?} is not in [{}]",
                    allowed.join(", ")
                )
            }
            Reason::TooFewZones { zones } => write!(f, "seed has {zones} zone(s), zone HA needs 3"),
            Reason::MissingControlPlaneZones { missing } => {
                write!(f, "seed lacks control plane zone(s) {}", missing.join(", "))
            }
            Reason::ZoneEnforced { worker_zones } => write!(
                f,
                "seed enforces its zones and none is used by the workers ({})",
                worker_zones.join(", ")
            ),
            Reason::ZoneNotPreferred => {
                f.write_str("seed prefers zones the workers do not use and other seeds fit better")
            }
            Reason::AccessRestriction { missing } => {
                write!(
                    f,
                    "seed does not offer access restriction(s) {}",
                    missing.join(", ")
                )
            }
            Reason::DefaultDomain { domain } => {
                write!(f, "domain {domain:?} is a default domain of another seed")
            }
            Reason::EmergencyStop => f.write_str("seed has emergency-stop-reconciliations set"),
            Reason::Networks { detail } => write!(f, "invalid networks: {detail}"),
            Reason::Taints { untolerated } => {
                write!(f, "untolerated taint(s) {}", untolerated.join(", "))
            }
            Reason::Capacity { used, allocatable } => {
                write!(f, "{used}/{allocatable} shoots allocated")
            }
            Reason::MaxLatency {
                max_ms, latency, ..
            } => write!(f, "farther than {max_ms} ms ({latency})"),
            Reason::Residency {
                group,
                shoot_region,
                seed_region,
                seed_site: Some(site),
            } => write!(
                f,
                "seed region {seed_region} ({site}) is outside group {group} of the shoot's region {shoot_region}"
            ),
            Reason::Residency {
                group,
                shoot_region,
                seed_region,
                seed_site: None,
            } => write!(
                f,
                "seed region {seed_region} is not in the region catalogue, so its jurisdiction is unknown (group {group} of the shoot's region {shoot_region})"
            ),
            Reason::OtherProvider => {
                f.write_str("testing shoots need a seed of their own provider")
            }
            Reason::OtherRegion { region } => write!(f, "seed is in region {region:?}"),
            Reason::FartherRegion {
                distance,
                minimum,
                source,
            } => {
                write!(f, "distance {distance} > minimum {minimum} ({source})")
            }
            Reason::ShorterRegionPrefix { common, best } => {
                write!(
                    f,
                    "common region prefix of {common} characters < best {best}"
                )
            }
            Reason::Declared(d) => fmt::Display::fmt(&d.0, f),
        }
    }
}

/// Adds per-seed rejections into the kube-scheduler style line:
/// `0/7 seeds are available: 3 seed(s) are in another region, 2 seed(s) have no capacity left.`
/// Phrases are ordered by count (most first), then alphabetically, so the line is deterministic.
pub fn summarize<'a>(total: usize, reasons: impl IntoIterator<Item = &'a Reason>) -> String {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for r in reasons {
        *counts.entry(r.summary()).or_default() += 1;
    }
    if total == 0 {
        return "0/0 seeds are available: no seeds are registered.".into();
    }
    let mut parts: Vec<(&str, usize)> = counts.into_iter().collect();
    parts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let phrases: Vec<String> = parts
        .iter()
        .map(|(phrase, n)| format!("{n} seed(s) {phrase}"))
        .collect();
    format!("0/{total} seeds are available: {}.", phrases.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_phrases_most_frequent_first() {
        let reasons = [
            Reason::Capacity {
                used: 3,
                allocatable: 3,
            },
            Reason::OtherRegion { region: "a".into() },
            Reason::Taints {
                untolerated: vec!["x".into()],
            },
            Reason::OtherRegion { region: "b".into() },
            Reason::Taints {
                untolerated: vec!["y".into()],
            },
            Reason::OtherRegion { region: "c".into() },
            Reason::Capacity {
                used: 1,
                allocatable: 1,
            },
        ];
        assert_eq!(
            summarize(7, &reasons),
            "0/7 seeds are available: 3 seed(s) are in another region, \
             2 seed(s) had taints that the shoot does not tolerate, 2 seed(s) have no capacity left."
        );
    }

    #[test]
    fn no_seeds_at_all_says_so() {
        assert_eq!(
            summarize(0, []),
            "0/0 seeds are available: no seeds are registered."
        );
    }
}
