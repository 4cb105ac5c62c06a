//! The `SchedulerConfiguration` file: Gardener's upstream keys and defaults, plus our extensions
//! under `schedulers.shoot`.
//!
//! Loading layers built-in defaults (`config/defaults.yaml`), then the `--config` file, then
//! environment overrides (`GARDENER_SCHEDULER_<PATH>` with `__` between levels, e.g.
//! `GARDENER_SCHEDULER_SCHEDULERS__SHOOT__CONCURRENT_SYNCS=10`; `KUBECONFIG` overrides
//! `clientConnection.kubeconfig`). Every section is then checked and every problem reported with
//! its field path; the result is frozen and shared behind an `Arc`.

mod load;
mod types;
mod validate;

pub use load::{ConfigError, FieldError, load, load_str};
pub use types::*;

#[cfg(test)]
mod tests;
