//! Read-only serde types for the `core.gardener.cloud/v1beta1` objects the scheduler reads.
//!
//! Only the fields a scheduling decision needs are modelled; unknown fields are ignored. Objects
//! from the API server carry gardener-apiserver's defaults; objects from files get them from
//! [`defaults`], and where a file is read as written an absent field is read as the decision
//! reads it unset. Required-by-Gardener fields are still `Option`/defaulted
//! here so that a malformed object becomes a clear per-object error later instead of failing a
//! whole watch or manifest file.
//!
//! [`defaults`]: crate::api::defaults

mod cloudprofile;
pub mod defaults;
mod gates;
mod meta;
mod project;
mod seed;
mod shoot;

use serde::{Deserialize, Deserializer};

pub use cloudprofile::{
    CloudProfile, CloudProfileReference, CloudProfileSpec, NamespacedCloudProfile,
    NamespacedCloudProfileSpec, NamespacedCloudProfileStatus, SEED_SELECTOR_KEYS,
    SELECTOR_REQUIREMENT_KEYS, SeedSelector,
};
pub use gates::{ANNOTATION_GATES, Gates};
pub use k8s_openapi::api::core::v1::ConfigMap;
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
pub use project::{Project, ProjectSpec};
pub use seed::{
    Condition, Gardener, Seed, SeedBackup, SeedDns, SeedDnsDefault, SeedNetworks, SeedProvider,
    SeedScheduling, SeedSettings, SeedSpec, SeedStatus, SeedTaint, ShootNetworkDefaults,
    ZoneSelection,
};
pub use shoot::{
    AccessRestriction, ControlPlane, FailureTolerance, Hibernation, HighAvailability,
    LastOperation, Shoot, ShootDns, ShootNetworking, ShootProvider, ShootSpec, ShootStatus,
    StatusNetworking, Toleration, Worker, is_pending,
};

/// API group and version of every Gardener type here.
pub const GROUP: &str = "core.gardener.cloud";
pub const VERSION: &str = "v1beta1";
pub const API_VERSION: &str = "core.gardener.cloud/v1beta1";

/// The scheduler name a shoot gets when `spec.schedulerName` is unset.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
/// Label selecting the region ConfigMaps (value [`PURPOSE_REGION_CONFIG`]).
pub const LABEL_SCHEDULING_PURPOSE: &str = "scheduling.gardener.cloud/purpose";
pub const PURPOSE_REGION_CONFIG: &str = "region-config";
/// Label value selecting carbon-intensity forecast ConfigMaps (any namespace).
pub const PURPOSE_CARBON_INTENSITY: &str = "carbon-intensity";
/// Annotation on a region ConfigMap listing the CloudProfiles it applies to, comma-separated.
pub const ANNOTATION_CLOUDPROFILES: &str = "scheduling.gardener.cloud/cloudprofiles";
/// On a Shoot or its Project, value `ignore`: the `Residency` filter does not apply.
pub const ANNOTATION_RESIDENCY: &str = "scheduling.gardener.cloud/residency";
pub const RESIDENCY_IGNORE: &str = "ignore";

/// Does the object opt out of the `Residency` filter?
pub fn residency_opt_out(meta: &ObjectMeta) -> bool {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(ANNOTATION_RESIDENCY))
        .is_some_and(|v| v.trim() == RESIDENCY_IGNORE)
}

/// On a bound Shoot: the decision record its binding carried (`schedulers.shoot.decisionRecord`).
pub const ANNOTATION_DECISION: &str = "scheduling.gardener.cloud/decision";

/// Annotation that takes a seed out of scheduling while its reconciliations are stopped.
pub const ANNOTATION_EMERGENCY_STOP: &str = "shoot.gardener.cloud/emergency-stop-reconciliations";

/// Implements `kube::Resource` for a Gardener type with static metadata, so the same type serves
/// `simulate` (manifests) and the controller (watches).
macro_rules! gardener_resource {
    ($ty:ty, $kind:literal, $plural:literal, $scope:ty) => {
        impl kube::Resource for $ty {
            type DynamicType = ();
            type Scope = $scope;

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                $kind.into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                $crate::api::GROUP.into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                $crate::api::VERSION.into()
            }
            fn api_version(_: &()) -> std::borrow::Cow<'_, str> {
                $crate::api::API_VERSION.into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                $plural.into()
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(
                &mut self,
            ) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}
pub(crate) use gardener_resource;

/// Declares Gardener API types the way each of them is read and written: `Clone, Debug,
/// Default, PartialEq`, camelCase keys, and every key optional (a missing one reads as the
/// field's default). A field of type `Option<…>` is left out of the output when `None`; a
/// `Vec<…>` or `BTreeMap<…>` is left out when empty and reads an explicit `null` as empty. A
/// field's own `#[serde(…)]` attributes are kept as written.
macro_rules! api_types {
    ($($(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* })*) => {
        $($crate::api::api_types!(@field [$(#[$attr])* $name] [] $($fields)*);)*
    };
    (@field $head:tt [$($done:tt)*]
        $(#[$f:meta])* pub $field:ident: Option<$t:ty>, $($rest:tt)*) => {
        $crate::api::api_types!(@field $head [$($done)*
            $(#[$f])* #[serde(skip_serializing_if = "Option::is_none")]
            pub $field: Option<$t>,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*]
        $(#[$f:meta])* pub $field:ident: Vec<$t:ty>, $($rest:tt)*) => {
        $crate::api::api_types!(@field $head [$($done)*
            $(#[$f])*
            #[serde(
                skip_serializing_if = "Vec::is_empty",
                deserialize_with = "crate::api::null_as_default"
            )]
            pub $field: Vec<$t>,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*]
        $(#[$f:meta])* pub $field:ident: BTreeMap<$k:ty, $v:ty>, $($rest:tt)*) => {
        $crate::api::api_types!(@field $head [$($done)*
            $(#[$f])*
            #[serde(
                skip_serializing_if = "BTreeMap::is_empty",
                deserialize_with = "crate::api::null_as_default"
            )]
            pub $field: BTreeMap<$k, $v>,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] $(#[$f:meta])* pub $field:ident: $t:ty, $($rest:tt)*) => {
        $crate::api::api_types!(@field $head [$($done)* $(#[$f])* pub $field: $t,] $($rest)*);
    };
    (@field [$(#[$attr:meta])* $name:ident] [$($done:tt)*]) => {
        $(#[$attr])*
        #[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize, PartialEq)]
        #[serde(rename_all = "camelCase", default)]
        pub struct $name { $($done)* }
    };
}
pub(crate) use api_types;

/// Treats an explicit `null` like an absent field.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `namespace/name` of a namespaced object, the identity used in logs, events and ties.
pub fn object_key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}
