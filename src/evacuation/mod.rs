//! Seed evacuation: the leader judges each seed's health as Gardener reports it and, while a
//! seed is unhealthy, keeps an evacuation plan for it published (docs/operations/evacuation.md).
//!
//! ```text
//! seeds ─► health (pure: observe, Judge::step) ─► plan::drain ─► publish (ConfigMap, Event, metric)
//!  (kube)                                          (pure)          (kube)
//! ```

mod event;
pub mod health;
pub mod publish;
mod run;

pub use run::{PLAN_SETTINGS, task};
