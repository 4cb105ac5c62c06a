//! Per-shoot state every stage reads, computed once per decision before looping over seeds:
//! the shoot's key, project, region, provider and CloudProfile, and the checks that refuse a
//! shoot gardener-apiserver would refuse. What one filter reads of the shoot its `prepare` reads.

use chrono::{DateTime, Utc};

use crate::api::{Shoot, object_key};
use crate::field_error::unsupported;
use crate::outcome::FitError;
use crate::snapshot::{CloudProfileInfo, Snapshot};

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
            now,
        })
    }
}
