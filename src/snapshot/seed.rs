//! The compact, pre-parsed form of a Seed that the decision reads.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ipnet::IpNet;

use crate::api::{ANNOTATION_EMERGENCY_STOP, Seed};
use crate::cidr::reserved;
use crate::field_error::unsupported;
use crate::quantity;
use crate::reason::Reason;

/// How a seed treats shoots whose worker zones differ from its own (`spec.settings.zoneSelection`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZoneMode {
    #[default]
    Unset,
    Prefer,
    Enforce,
}

/// A seed's networks, parsed once per seed change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeedNets {
    pub nodes: Option<IpNet>,
    pub pods: Option<IpNet>,
    pub services: Option<IpNet>,
    pub default_pods: Option<IpNet>,
    pub default_services: Option<IpNet>,
    /// Whether a default reaches into a range Gardener reserves, worked out once per seed
    /// change rather than once per decision.
    pub default_pods_reserved: bool,
    pub default_services_reserved: bool,
}

/// Why a seed takes no shoots at all: its state, as the `Usable` filter explains it (its
/// messages are declared there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unusable {
    /// The seed object itself is malformed (named field); it is skipped until fixed.
    Invalid {
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
}

/// Everything a decision needs to know about one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedInfo {
    pub name: Arc<str>,
    pub labels: BTreeMap<String, String>,
    pub provider: String,
    pub region: String,
    pub zones: Vec<String>,
    /// `Ok` when the seed may receive shoots at all (not deleting, visible, ready, well-formed);
    /// otherwise why not, an [`Unusable`] built once per seed change.
    pub usable: Result<(), Reason>,
    pub zone_mode: ZoneMode,
    pub taints: Vec<(String, Option<String>)>,
    pub nets: SeedNets,
    pub access_restrictions: BTreeSet<String>,
    /// The number of entries in `spec.accessRestrictions`, repeats included: upstream rejects a
    /// shoot requesting more restrictions than the seed lists before comparing names.
    pub access_restriction_count: usize,
    pub default_domains: Vec<String>,
    pub emergency_stop: bool,
    /// `status.allocatable`, parsed. `shoots` bounds the number of shoots on the seed.
    pub allocatable: BTreeMap<String, f64>,
    /// `status.allocatable.shoots` as upstream reads it: `Quantity.Value()`.
    pub shoots_value: Option<i64>,
}

impl SeedInfo {
    pub fn from_seed(seed: &Seed) -> SeedInfo {
        let mut problems: Vec<(String, String)> = Vec::new();
        let provider = match &seed.spec.provider {
            Some(p) => {
                if p.type_.is_empty() {
                    problems.push(("spec.provider.type".into(), "is required".into()));
                }
                if p.region.is_empty() {
                    problems.push(("spec.provider.region".into(), "is required".into()));
                }
                p.clone()
            }
            None => {
                problems.push(("spec.provider".into(), "is required".into()));
                Default::default()
            }
        };

        let mut parse_net = |field: &str, v: &Option<String>| -> Option<IpNet> {
            let raw = v.as_deref()?.trim();
            match crate::cidr::parse(raw) {
                Ok(n) => Some(n),
                Err(e) => {
                    problems.push((field.into(), e));
                    None
                }
            }
        };
        let n = &seed.spec.networks;
        let defaults = n.shoot_defaults.clone().unwrap_or_default();
        let default_pods = parse_net("spec.networks.shootDefaults.pods", &defaults.pods);
        let default_services =
            parse_net("spec.networks.shootDefaults.services", &defaults.services);
        let nets = SeedNets {
            nodes: parse_net("spec.networks.nodes", &n.nodes),
            pods: parse_net("spec.networks.pods", &n.pods),
            services: parse_net("spec.networks.services", &n.services),
            default_pods,
            default_services,
            default_pods_reserved: default_pods.as_ref().is_some_and(reserved),
            default_services_reserved: default_services.as_ref().is_some_and(reserved),
        };

        let mut allocatable = BTreeMap::new();
        let mut shoots_value = None;
        for (resource, q) in &seed.status.allocatable {
            match quantity::parse_quantity(&q.0) {
                // Upstream compares the seed's usage with `Value()`: a fraction rounds up
                // (`1500m` is room for 2), zero or less means full.
                Ok(q) if resource == "shoots" => {
                    let v = q.value();
                    shoots_value = Some(v);
                    allocatable.insert(resource.clone(), v as f64);
                }
                Ok(q) => {
                    let v = q.to_f64();
                    allocatable.insert(resource.clone(), if v.is_nan() { 0.0 } else { v });
                }
                // Only what upstream's `ParseQuantity` refuses: gardener-apiserver never stores
                // it, so it comes from a hand-written file.
                Err(e) => problems.push((format!("status.allocatable.{resource}"), e)),
            }
        }

        let mut taints: Vec<(String, Option<String>)> = Vec::new();
        // The pairs seen, so that a repeat is found in one pass (13,000 taints fit in a seed).
        let mut seen: std::collections::HashSet<(&str, Option<&str>)> =
            std::collections::HashSet::new();
        for (i, t) in seed.spec.taints.iter().enumerate() {
            if t.key.is_empty() {
                problems.push((format!("spec.taints[{i}].key"), "is required".into()));
            } else if !seen.insert((t.key.as_str(), t.value.as_deref())) {
                // Upstream's validation rejects a repeated key/value pair; a repeated key with
                // another value is a valid seed (which no shoot can tolerate).
                problems.push((
                    format!("spec.taints[{i}]"),
                    format!("duplicate taint {:?}", taint_id(&t.key, &t.value)),
                ));
            } else {
                taints.push((t.key.clone(), t.value.clone()));
            }
        }

        let zone_mode = match seed
            .spec
            .settings
            .zone_selection
            .as_ref()
            .map(|z| z.mode.as_str())
        {
            None | Some("") => ZoneMode::Unset,
            Some("Prefer") => ZoneMode::Prefer,
            Some("Enforce") => ZoneMode::Enforce,
            Some(other) => {
                problems.push((
                    "spec.settings.zoneSelection.mode".into(),
                    unsupported(other, ["Prefer", "Enforce"]),
                ));
                ZoneMode::Unset
            }
        };

        let usable = if let Some((field, message)) = problems.into_iter().next() {
            Err(Unusable::Invalid { field, message })
        } else {
            readiness(seed)
        }
        .map_err(Reason::new);

        SeedInfo {
            name: seed.name().into(),
            labels: seed.metadata.labels.clone().unwrap_or_default(),
            provider: provider.type_,
            region: provider.region,
            zones: provider.zones,
            usable,
            zone_mode,
            taints,
            nets,
            access_restriction_count: seed.spec.access_restrictions.len(),
            access_restrictions: seed
                .spec
                .access_restrictions
                .iter()
                .map(|a| a.name.clone())
                .collect(),
            default_domains: seed
                .spec
                .dns
                .iter()
                .flat_map(|d| {
                    d.defaults
                        .iter()
                        .map(|d| d.domain.trim_matches('.').to_string())
                })
                .filter(|d| !d.is_empty())
                .collect(),
            emergency_stop: seed
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ANNOTATION_EMERGENCY_STOP))
                .is_some_and(|v| v == "true"),
            allocatable,
            shoots_value,
        }
    }

    /// How many shoots the seed may host, when it publishes `status.allocatable.shoots`: upstream's
    /// `Value()`, 0 when that is negative (upstream's `usage >= Value()` is then always true).
    pub fn allocatable_shoots(&self) -> Option<u64> {
        self.shoots_value.map(|v| v.max(0) as u64)
    }
}

fn taint_id(key: &str, value: &Option<String>) -> String {
    match value {
        Some(v) => format!("{key}={v}"),
        None => key.to_string(),
    }
}

/// Not deleting, visible, reconciled, `GardenletReady` and (with backup) `BackupBucketsReady`.
fn readiness(seed: &Seed) -> Result<(), Unusable> {
    if seed.metadata.deletion_timestamp.is_some() {
        return Err(Unusable::Deleting);
    }
    if !seed.spec.settings.visible() {
        return Err(Unusable::Invisible);
    }
    if seed.status.last_operation.is_none() {
        return Err(Unusable::NoLastOperation);
    }
    let mut required = vec!["GardenletReady"];
    if seed.spec.backup.is_some() {
        required.push("BackupBucketsReady");
    }
    for condition in required {
        let status = seed
            .condition(condition)
            .map(|c| c.status.as_str())
            .unwrap_or("Unknown");
        if status != "True" {
            return Err(Unusable::NotReady {
                condition: condition.into(),
                status: status.into(),
            });
        }
    }
    Ok(())
}
