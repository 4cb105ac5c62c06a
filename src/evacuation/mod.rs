//! Seed evacuation: the leader judges each seed's health as Gardener reports it and, while a
//! seed is unhealthy, keeps an evacuation plan for it published (docs/operations/evacuation.md).
//!
//! ```text
//! seeds ─► health ─► planning ─► publish ─► write, event
//! (kube)   (pure)    plan::drain   (pure:     (kube: ConfigMap, Event;
//!                    plan::failback ConfigMap,  the metric)
//!                    (pure)         note)
//!
//! mode: automatic ─► limits ─► apply::check ─► apply::cluster
//!                    (pure)    (pure: the      (kube: the binding,
//!                              decision again)  the shoot's event)
//! ```

mod event;
pub mod health;
pub mod limits;
pub mod planning;
pub mod publish;
mod run;
mod write;

pub use planning::PLAN_SETTINGS;
pub use run::task;
