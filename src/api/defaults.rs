//! The `core.gardener.cloud/v1beta1` defaulting of gardener-apiserver, for the fields a
//! scheduling decision reads.
//!
//! The scheduler in a cluster only ever sees objects that gardener-apiserver stored, after its
//! `SetDefaults_*` functions ran; a hand-written manifest can lack what they add. `simulate` and
//! `plan` apply these defaults to every object read from files, so that a file decides as the
//! stored object would. Applying them to a stored object changes nothing: each default fills a
//! field only where it is absent, and none undoes another.
//!
//! Upstream defaults many more fields (kubelet, kube-proxy, maintenance, workers' CRI, machine
//! types and images of cloud profiles, project members); those the decision does not read are
//! left out. Admission plugins (tolerations from the project, the DNS domain) are not defaults
//! and are not applied.

use std::fmt;

use super::{DEFAULT_SCHEDULER_NAME, SeedScheduling, ShootNetworking, Toleration};
use super::{Seed, Shoot};

/// The namespace whose shoots tolerate protected seeds by default.
pub const GARDEN_NAMESPACE: &str = "garden";
/// The taint of seeds reserved for shoots in the garden namespace.
pub const TAINT_PROTECTED: &str = "seed.gardener.cloud/protected";
/// The purpose a shoot without one gets.
pub const DEFAULT_PURPOSE: &str = "evaluation";
/// The IP family a shoot without one gets.
pub const DEFAULT_IP_FAMILY: &str = "IPv4";

/// Upstream's defaulting of shoots, where each shoot default comes from.
pub const SHOOT_SOURCE: &str = "pkg/apis/core/v1beta1/defaults_shoot.go";
/// Upstream's defaulting of seeds.
pub const SEED_SOURCE: &str = "pkg/apis/core/v1beta1/defaults_seed.go";

/// One default applied to one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// `spec.purpose: evaluation`.
    Purpose,
    /// `spec.schedulerName: default-scheduler`.
    SchedulerName,
    /// `spec.networking: {}`: a stored shoot always has it, so its networks (`status.networking`
    /// and the seed's `shootDefaults`) are checked. `status`: the shoot has `status.networking`.
    Networking { status: bool },
    /// `spec.networking.ipFamilies: [IPv4]`.
    IpFamilies,
    /// A toleration for `seed.gardener.cloud/protected` without a value, for a shoot in the
    /// garden namespace. `shadowed`: the value of a toleration with the same key the file had,
    /// which the added one now overrides (the later of two tolerations with one key wins).
    ProtectedToleration { shadowed: Option<String> },
    /// `spec.settings.scheduling: {visible: true}`.
    SeedScheduling,
    /// `spec.settings.scheduling.visible: false`: the file has `scheduling` without `visible`,
    /// and upstream's field is not optional, so the stored seed has `false`.
    SeedInvisible,
}

impl Applied {
    /// The field the default sets.
    pub fn field(&self) -> &'static str {
        match self {
            Applied::Purpose => "spec.purpose",
            Applied::SchedulerName => "spec.schedulerName",
            Applied::Networking { .. } => "spec.networking",
            Applied::IpFamilies => "spec.networking.ipFamilies",
            Applied::ProtectedToleration { .. } => "spec.tolerations",
            Applied::SeedScheduling => "spec.settings.scheduling",
            Applied::SeedInvisible => "spec.settings.scheduling.visible",
        }
    }

    /// Upstream's file that applies it.
    pub fn source(&self) -> &'static str {
        match self {
            Applied::SeedScheduling | Applied::SeedInvisible => SEED_SOURCE,
            _ => SHOOT_SOURCE,
        }
    }

    /// Whether the decision reads the object differently with the default than without it.
    /// Where the decision's own reading of an absent field is the default already (no purpose
    /// is `evaluation`, no scheduler name is `default-scheduler`, no IP family is IPv4, a seed
    /// without `scheduling` is visible), it is not.
    pub fn decides(&self) -> bool {
        matches!(
            self,
            Applied::Networking { .. }
                | Applied::ProtectedToleration { .. }
                | Applied::SeedInvisible
        )
    }
}

impl fmt::Display for Applied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Applied::Purpose => write!(f, "spec.purpose set to {DEFAULT_PURPOSE}"),
            Applied::SchedulerName => {
                write!(f, "spec.schedulerName set to {DEFAULT_SCHEDULER_NAME}")
            }
            Applied::Networking { status: true } => f.write_str(
                "spec.networking added: every stored shoot has it, so status.networking and the seeds' shootDefaults are checked",
            ),
            Applied::Networking { status: false } => f.write_str(
                "spec.networking added: every stored shoot has it, so the seeds' shootDefaults are checked",
            ),
            Applied::IpFamilies => {
                write!(f, "spec.networking.ipFamilies set to [{DEFAULT_IP_FAMILY}]")
            }
            Applied::ProtectedToleration { shadowed: None } => write!(
                f,
                "toleration for {TAINT_PROTECTED} added: the shoot is in namespace {GARDEN_NAMESPACE}"
            ),
            Applied::ProtectedToleration { shadowed: Some(v) } => write!(
                f,
                "toleration for {TAINT_PROTECTED} added: the shoot is in namespace {GARDEN_NAMESPACE}; it overrides the toleration with value {v:?}, so a taint {TAINT_PROTECTED}={v} is no longer tolerated"
            ),
            Applied::SeedScheduling => f.write_str("spec.settings.scheduling.visible set to true"),
            Applied::SeedInvisible => f.write_str(
                "spec.settings.scheduling.visible set to false: spec.settings.scheduling has no visible, and a stored seed has false there",
            ),
        }
    }
}

/// The defaults applied to one object, kept compactly for every object of a large landscape: a
/// bit per default, and the one value a default can carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppliedSet {
    bits: u8,
    shadowed: Option<Box<str>>,
}

/// The order of [`AppliedSet`]'s bits, which is also upstream's order of applying them.
const ORDER: [fn(&Applied) -> bool; 8] = [
    |a| *a == Applied::Purpose,
    |a| matches!(a, Applied::ProtectedToleration { .. }),
    |a| *a == Applied::Networking { status: false },
    |a| *a == Applied::Networking { status: true },
    |a| *a == Applied::IpFamilies,
    |a| *a == Applied::SchedulerName,
    |a| *a == Applied::SeedScheduling,
    |a| *a == Applied::SeedInvisible,
];

impl AppliedSet {
    pub fn of(applied: &[Applied]) -> AppliedSet {
        let mut set = AppliedSet::default();
        for a in applied {
            if let Some(bit) = ORDER.iter().position(|is| is(a)) {
                set.bits |= 1 << bit;
            }
            if let Applied::ProtectedToleration { shadowed: Some(v) } = a {
                set.shadowed = Some(v.as_str().into());
            }
        }
        set
    }

    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The defaults, in the order they were applied.
    pub fn applied(&self) -> Vec<Applied> {
        let all = [
            Applied::Purpose,
            Applied::ProtectedToleration {
                shadowed: self.shadowed.as_deref().map(str::to_string),
            },
            Applied::Networking { status: false },
            Applied::Networking { status: true },
            Applied::IpFamilies,
            Applied::SchedulerName,
            Applied::SeedScheduling,
            Applied::SeedInvisible,
        ];
        all.into_iter()
            .enumerate()
            .filter(|(bit, _)| self.bits & (1 << bit) != 0)
            .map(|(_, a)| a)
            .collect()
    }
}

/// Applies the shoot defaults the decision reads; returns those applied, in upstream's order.
pub fn shoot(shoot: &mut Shoot) -> Vec<Applied> {
    let mut applied = Vec::new();
    let spec = &mut shoot.spec;
    if spec.purpose.is_none() {
        spec.purpose = Some(DEFAULT_PURPOSE.into());
        applied.push(Applied::Purpose);
    }
    if shoot.metadata.namespace.as_deref() == Some(GARDEN_NAMESPACE) {
        // Upstream adds the toleration unless one with this key and no value is there already
        // (a toleration with a value does not count).
        let present = spec
            .tolerations
            .iter()
            .any(|t| t.key == TAINT_PROTECTED && t.value.is_none());
        if !present {
            let shadowed = spec
                .tolerations
                .iter()
                .rev()
                .find(|t| t.key == TAINT_PROTECTED)
                .and_then(|t| t.value.clone())
                .filter(|v| !v.is_empty());
            spec.tolerations.push(Toleration {
                key: TAINT_PROTECTED.into(),
                value: None,
            });
            applied.push(Applied::ProtectedToleration { shadowed });
        }
    }
    let status = shoot
        .status
        .as_ref()
        .is_some_and(|s| s.networking.is_some());
    let networking = spec.networking.get_or_insert_with(|| {
        applied.push(Applied::Networking { status });
        ShootNetworking::default()
    });
    if networking.ip_families.is_empty() {
        networking.ip_families = vec![DEFAULT_IP_FAMILY.into()];
        applied.push(Applied::IpFamilies);
    }
    if spec.scheduler_name.is_none() {
        spec.scheduler_name = Some(DEFAULT_SCHEDULER_NAME.into());
        applied.push(Applied::SchedulerName);
    }
    applied
}

/// Applies the seed defaults the decision reads; returns those applied.
pub fn seed(seed: &mut Seed) -> Vec<Applied> {
    let settings = &mut seed.spec.settings;
    match &mut settings.scheduling {
        None => {
            settings.scheduling = Some(SeedScheduling {
                visible: Some(true),
            });
            vec![Applied::SeedScheduling]
        }
        Some(SeedScheduling { visible: v @ None }) => {
            *v = Some(false);
            vec![Applied::SeedInvisible]
        }
        Some(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
