//! The `SchedulerConfiguration` file: Gardener's upstream keys and defaults, plus our extensions
//! under `schedulers.shoot`.
//!
//! Loading layers built-in defaults (`config/defaults.yaml`), then the `--config` file, then
//! environment overrides (`GARDENER_SCHEDULER_<PATH>` with `__` between levels, e.g.
//! `GARDENER_SCHEDULER_SCHEDULERS__SHOOT__CONCURRENT_SYNCS=10`; `KUBECONFIG` overrides
//! `clientConnection.kubeconfig`). As upstream, zero and empty values then take their defaults
//! field by field ([`set_defaults`]), and keys the configuration does not know are ignored with
//! a warning each (errors under [`UnknownKeys::Reject`], the `--strict` flag). Every section is
//! then checked and every problem reported with its field path. [`crate::compile`] turns the
//! result into the profile chain in the same pass; this module knows nothing of profiles.
//!
//! [`set_defaults`]: crate::config::set_defaults
//! [`UnknownKeys::Reject`]: crate::config::UnknownKeys::Reject

mod defaults;
mod evacuation;
mod load;
mod types;
mod validate;

pub use crate::field_error::FieldError;
pub use defaults::set_defaults;
pub use evacuation::{Automatic, Evacuation, Failback, Mode as EvacuationMode};
pub use load::{ConfigError, Draft, UNKNOWN_KEY, UnknownKeys, read_str_with, read_with};
pub use types::*;
pub use validate::KNOWN_FEATURE_GATES;

#[cfg(test)]
mod tests;
