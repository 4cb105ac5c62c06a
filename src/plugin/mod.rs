//! Leaf vocabulary every plugin (filter, strategy, priority) shares: typed arguments parsed and
//! checked with the same messages everywhere, and the cluster data a plugin declares it reads.
//! The latency arguments three plugins take are one type, [`LatencyArgs`].
//!
//! As kube-scheduler's `validation_pluginargs.go`: a plugin's `args` are one typed struct,
//! parsed by [`parse_args`] (unknown keys are errors with their path), and the checks on its
//! values use the shared messages of [`crate::field_error`] ([`unsupported_value`],
//! [`positive_number`], [`GREATER_THAN_ZERO`]), so that the same mistake reads the same wherever
//! it is made.
//!
//! [`parse_args`]: crate::plugin::parse_args
//! [`LatencyArgs`]: crate::plugin::LatencyArgs
//! [`unsupported_value`]: crate::field_error::unsupported_value
//! [`positive_number`]: crate::field_error::positive_number
//! [`GREATER_THAN_ZERO`]: crate::field_error::GREATER_THAN_ZERO

use serde::de::DeserializeOwned;

mod latency_args;
mod latency_sources;

pub use latency_args::keys as latency_keys;
pub use latency_args::{
    DEFAULT_FALLBACK_FACTOR, DEFAULT_MAX_LATENCY_MS, LatencyArgs, NoOwnArgs, OwnArgs,
};

use crate::carbon::CarbonSettings;
use crate::field_error::FieldError;
pub use crate::field_error::{GREATER_THAN_ZERO, positive_number, unsupported_value};

/// Parses a plugin's `args` (absent = defaults), rejecting unknown keys with their path.
pub fn parse_args<T: DeserializeOwned + Default>(
    args: &serde_json::Value,
    path: &str,
) -> Result<T, Vec<FieldError>> {
    if args.is_null() {
        return Ok(T::default());
    }
    // serde reads a list as a struct's fields in order: `args: [1]` would be taken apart
    // position by position and reported at a key nobody wrote.
    if !args.is_object() {
        return Err(vec![FieldError::new(
            path,
            format!(
                "must be a mapping of argument names to values, got {}",
                crate::field_error::kind_of(args)
            ),
        )]);
    }
    serde_path_to_error::deserialize(args.clone()).map_err(|e| {
        let inner = e.path().to_string();
        let p = if inner == "." {
            path.to_string()
        } else {
            format!("{path}.{inner}")
        };
        let message = crate::field_error::serde_message(&e.into_inner().to_string());
        vec![FieldError::new(p, message)]
    })
}

/// Cluster data beyond shoots, seeds, projects, cloud profiles and region ConfigMaps that a
/// plugin reads, declared by the plugin (as kube-scheduler's `EventsToRegister`): the
/// controller watches it and `simulate --live` lists it only when an active profile declares
/// it, and neither names a plugin.
#[derive(Clone, Debug, PartialEq)]
pub enum ClusterData {
    /// ConfigMaps labelled `scheduling.gardener.cloud/purpose: carbon-intensity`, read with
    /// these settings (which also drive the carbon metrics).
    CarbonConfigMaps(CarbonSettings),
}

impl ClusterData {
    /// The carbon settings, if this is [`ClusterData::CarbonConfigMaps`].
    pub fn into_carbon_settings(self) -> Option<CarbonSettings> {
        match self {
            ClusterData::CarbonConfigMaps(s) => Some(s),
        }
    }
}
