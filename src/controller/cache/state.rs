//! What the cache holds: every known shoot (compact while pending), the placements it assumes,
//! and the fingerprints of the other kinds; the files beside this one change it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::controller::cache::compact::PendingShoot;
use crate::controller::cache::kind::{Lists, Mark, WatchedKind};
use crate::snapshot::Snapshot;
use tokio::time::Instant;

/// What an update did to the pending set; the watch layer turns it into queue operations.
///
/// Only changes made by others (a seed, a cloud profile, a shoot leaving a seed) set `retry_waiting`.
/// What the scheduler does itself (assuming a placement, dropping it after a failed bind, writing
/// status or events) never does: a dropped assumption returns capacity that was never used, and
/// may only queue the shoots it turned away (`requeue`), once.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// the shoot became pending, or its scheduling-relevant fields changed: decide again now
    pub enqueue: bool,
    /// capacity may have been freed or the landscape changed: retry waiting shoots now
    pub retry_waiting: bool,
    /// a placement only assumed was dropped: the seed whose slot it freed, and the shoots that
    /// seed refused for capacity meanwhile, first refused first; one of them may have the slot
    pub requeue: Vec<Arc<str>>,
    pub freed_on: Option<String>,
}

impl Change {
    /// The same change without queueing the key itself: for a change an attempt makes to its
    /// own shoot, whose key the attempt's `Requeue` places.
    pub fn leaving_key(self) -> Change {
        Change {
            enqueue: false,
            ..self
        }
    }
}

/// The controller's cache.
#[derive(Default)]
pub struct Cache {
    pub snapshot: Snapshot,
    /// every known shoot
    pub(super) shoots: HashMap<Arc<str>, Known>,
    /// per pending shoot, the object as the API server sent it (JSON without managedFields), at
    /// the resourceVersion of its compact form in `shoots`: a bind sends it back whole, so no
    /// field the scheduler does not know is lost. Dropped once the shoot is bound.
    pub(super) raw: HashMap<Arc<str>, Arc<str>>,
    pub(super) assumed: HashMap<Arc<str>, Assumption>,
    pub(super) scheduler_names: Vec<String>,
    /// per watched kind, the number of its current list (see `relist.rs`)
    pub(super) lists: Lists,
    /// per seed, the list that last brought it (the name shared with the snapshot's)
    pub(super) seeds_listed: HashMap<Arc<str>, Mark>,
    /// non-seed, non-shoot objects: a fingerprint of what the decision reads, to tell relevant
    /// changes from noise (status heartbeats, managed fields)
    pub(super) fingerprints: HashMap<(WatchedKind, String), Fingerprint>,
    /// per seed holding assumed placements: pending shoots it refused for capacity meanwhile,
    /// first refused first
    pub(super) refused_for: HashMap<String, Vec<Arc<str>>>,
    /// shoots applied from a read (after a bind or a conflict) ahead of their watch, at this
    /// resourceVersion: a watch event or list item older than it is stale and ignored. Dropped
    /// once the watch catches up, so it holds only the few shoots just read.
    pub(super) read_versions: HashMap<Arc<str>, u64>,
    /// per pending shoot that was decided at least once: why it still waits, as its last
    /// attempt left it. Dropped once the shoot is bound or gone.
    pub(super) waiting: HashMap<Arc<str>, Waiting>,
}

/// A known shoot.
pub(super) struct Known {
    /// `Some` while it waits for this scheduler
    pub(super) pending: Option<PendingShoot>,
    /// the list that last brought it
    pub(super) listed: Mark,
}

/// What the decision reads from a cloud profile, project or ConfigMap, hashed.
pub(super) struct Fingerprint {
    pub(super) hash: u64,
    /// the list that last brought it
    pub(super) listed: Mark,
}

/// Why a pending shoot waits, as its last attempt left it (a shoot never decided has none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waiting {
    /// no seed fits: the distinct reasons seeds were rejected for ([`FitError::reason_names`])
    ///
    /// [`FitError::reason_names`]: crate::outcome::FitError::reason_names
    NoFit(Vec<String>),
    /// a seed fits, but its bind failed
    BindFailed,
    /// a freeze window or no active profile
    Deferred,
    /// held by its scheduling gates (a freeze may hold it too)
    Gated,
}

/// A placement decided and being (or just) written, counted in usage until the watch shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Assumption {
    pub seed: String,
    /// resourceVersion the decision was based on
    pub observed: String,
    /// when the bind succeeded
    pub bound_at: Option<Instant>,
    /// the bind got no answer: it may or may not have been applied
    pub uncertain: bool,
}
