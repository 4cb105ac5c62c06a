//! Per-shoot state computed once per decision, before looping over seeds: parsed selectors,
//! CIDRs, zones, the shoot's project and cloud profile.

use chrono::{DateTime, Utc};
use ipnet::IpNet;
use kube::core::Selector;

use crate::api::{Shoot, object_key};
use crate::field_error::unsupported;
use crate::outcome::FitError;
use crate::snapshot::{CloudProfileInfo, Snapshot, compile_selector};

/// The shoot's CIDRs, from `spec.networking` and `status.networking`, kept apart because
/// upstream checks them apart: seed defaults fill only missing `spec` networks, and
/// `status.networking`, when present, must name its services (and pods, unless workerless).
#[derive(Clone, Debug, Default)]
pub struct ShootNets {
    /// `spec.networking` is set (upstream checks networks only then).
    pub present: bool,
    pub nodes: Option<IpNet>,
    pub pods: Option<IpNet>,
    pub services: Option<IpNet>,
    /// `status.networking`, when the shoot has it.
    pub status: Option<StatusNets>,
    /// The shoot's IP families (`IPv4` when unset).
    pub ipv4: bool,
    pub ipv6: bool,
    pub workerless: bool,
}

/// `status.networking`: lists, since a dual-stack shoot has one CIDR per family.
#[derive(Clone, Debug, Default)]
pub struct StatusNets {
    pub nodes: Vec<IpNet>,
    pub pods: Vec<IpNet>,
    pub services: Vec<IpNet>,
}

/// `spec.purpose` values Gardener accepts.
const PURPOSES: &[&str] = &[
    "evaluation",
    "testing",
    "development",
    "production",
    "infrastructure",
];
/// `spec.controlPlane.highAvailability.failureTolerance.type` values Gardener accepts.
const FAILURE_TOLERANCE_TYPES: &[&str] = &["node", "zone"];

pub struct ShootContext<'a> {
    pub shoot: &'a Shoot,
    /// `namespace/name`
    pub key: String,
    pub name: String,
    pub namespace: String,
    pub project: String,
    pub region: String,
    pub provider: String,
    pub testing: bool,
    pub cloud_profile: CloudProfileInfo,
    pub cloud_profile_selector: Option<Selector>,
    pub shoot_selector: Option<Selector>,
    pub nets: ShootNets,
    pub now: DateTime<Utc>,
}

impl<'a> ShootContext<'a> {
    pub fn new(shoot: &'a Shoot, snap: &Snapshot, now: DateTime<Utc>) -> Result<Self, FitError> {
        let invalid = |field: &str, message: String| FitError::InvalidShoot {
            field: field.to_string(),
            message,
        };
        let spec = &shoot.spec;
        let namespace = shoot.metadata.namespace.clone().unwrap_or_default();
        let region = spec
            .region
            .clone()
            .filter(|r| !r.is_empty())
            .ok_or_else(|| invalid("spec.region", "is required".into()))?;
        let provider = spec
            .provider
            .as_ref()
            .map(|p| p.type_.clone())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| invalid("spec.provider.type", "is required".into()))?;
        // Upstream's API server refuses other values; a near miss (`Testing`, `Zone`) would
        // otherwise be read as no purpose or no high availability.
        // `""` too: upstream refuses it rather than reading it as unset.
        if let Some(p) = spec.purpose.as_deref()
            && !PURPOSES.contains(&p)
        {
            return Err(invalid("spec.purpose", unsupported(p, PURPOSES)));
        }
        let tolerance = spec
            .control_plane
            .as_ref()
            .and_then(|c| c.high_availability.as_ref())
            .map(|h| h.failure_tolerance.type_.as_str());
        // A `highAvailability` without a type (or with `""`) is refused upstream; read as unset,
        // it would silently drop the shoot's zone requirement.
        if let Some(t) = tolerance
            && !FAILURE_TOLERANCE_TYPES.contains(&t)
        {
            return Err(invalid(
                "spec.controlPlane.highAvailability.failureTolerance.type",
                unsupported(t, FAILURE_TOLERANCE_TYPES),
            ));
        }
        let cloud_profile = snap
            .cloud_profile_for(shoot)
            .map_err(|(field, message)| invalid(&field, message))?;
        let cloud_profile_selector = cloud_profile.selector.clone().map_err(|e| {
            invalid(
                "spec.cloudProfile",
                format!(
                    "{} has an invalid spec.seedSelector: {e}",
                    cloud_profile.display
                ),
            )
        })?;
        let shoot_selector = match &spec.seed_selector {
            None => None,
            Some(s) => Some(
                compile_selector(&s.label_selector).map_err(|e| invalid("spec.seedSelector", e))?,
            ),
        };
        let workers = spec
            .provider
            .as_ref()
            .map(|p| &p.workers[..])
            .unwrap_or(&[]);
        let nets = parse_nets(shoot, workers.is_empty()).map_err(|(f, m)| invalid(&f, m))?;
        let project = snap.project_of(&namespace);
        Ok(ShootContext {
            shoot,
            key: object_key(&shoot.metadata),
            name: shoot.metadata.name.clone().unwrap_or_default(),
            namespace,
            project,
            region,
            provider,
            testing: spec.purpose.as_deref() == Some("testing"),
            cloud_profile,
            cloud_profile_selector,
            shoot_selector,
            nets,
            now,
        })
    }
}

fn parse_nets(shoot: &Shoot, workerless: bool) -> Result<ShootNets, (String, String)> {
    let Some(n) = &shoot.spec.networking else {
        return Ok(ShootNets {
            workerless,
            ipv4: true,
            ..Default::default()
        });
    };
    let parse = |field: String, raw: &str| -> Result<IpNet, (String, String)> {
        crate::cidr::parse(raw.trim()).map_err(|e| (field, e))
    };
    let mut nets = ShootNets {
        present: true,
        workerless,
        ..Default::default()
    };
    for (i, fam) in n.ip_families.iter().enumerate() {
        match fam.as_str() {
            "IPv4" => nets.ipv4 = true,
            "IPv6" => nets.ipv6 = true,
            other => {
                return Err((
                    format!("spec.networking.ipFamilies[{i}]"),
                    unsupported(other, ["IPv4", "IPv6"]),
                ));
            }
        }
    }
    if n.ip_families.is_empty() {
        nets.ipv4 = true;
    }
    nets.nodes = n
        .nodes
        .as_deref()
        .map(|v| parse("spec.networking.nodes".into(), v))
        .transpose()?;
    nets.pods = n
        .pods
        .as_deref()
        .map(|v| parse("spec.networking.pods".into(), v))
        .transpose()?;
    nets.services = n
        .services
        .as_deref()
        .map(|v| parse("spec.networking.services".into(), v))
        .transpose()?;
    if let Some(status) = shoot.status.as_ref().and_then(|s| s.networking.as_ref()) {
        let list = |field: &str, values: &[String]| -> Result<Vec<IpNet>, (String, String)> {
            values
                .iter()
                .enumerate()
                .map(|(i, v)| parse(format!("{field}[{i}]"), v))
                .collect()
        };
        nets.status = Some(StatusNets {
            nodes: list("status.networking.nodes", &status.nodes)?,
            pods: list("status.networking.pods", &status.pods)?,
            services: list("status.networking.services", &status.services)?,
        });
    }
    Ok(nets)
}
