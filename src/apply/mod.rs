//! `plan apply`: a saved plan carried out as control-plane migrations.
//!
//! ```text
//! plan file ─► saved ─► pace (which move starts now) ─► check (the decision again) ─► cluster
//!   (json)     (pure)        (pure)                           (pure)                 (binding)
//! ```
//!
//! Each move starts at its planned time, only inside the shoot's maintenance window and outside
//! any freeze of the profile chain, after the production decision accepted its destination
//! again on the landscape as it is then; the binding carries the shoot's current resourceVersion
//! (a changed shoot is read and checked again, never overwritten) and, for a move planned live,
//! the live-migration annotation. The apply then follows the shoot until it reports the
//! destination and a succeeded last operation. What a shoot says is the only state: an apply
//! started again on the same file finds the moves already done or under way and never binds a
//! shoot twice. [`run`] is the thin I/O loop around the pure [`pace`] and [`check`].
//!
//! [`run`]: crate::apply::run
//! [`pace`]: crate::apply::pace
//! [`check`]: crate::apply::check

pub mod check;
pub mod cluster;
pub mod pace;
pub mod published;
pub mod run;
pub mod saved;
pub mod stamp;

pub use run::{ApplyError, Env, Settings, Sink, Step, Summary, apply};
pub use saved::{PlanFileError, SavedPlan, check_clock, load, parse};
