//! What the watches, workers and HTTP handlers share: the API client, the profile chain, the
//! cache behind its one lock, the queue, metrics and reporter.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::api::Shoot;
use crate::chain::ProfileChain;
use crate::config::BindingMode;
use crate::controller::cache::{Cache, Change, WatchedKind};
use crate::controller::client::stack::Activity;
use crate::controller::events::Reporter;
use crate::controller::events::refusals;
use crate::controller::leader::Leadership;
use crate::controller::metrics::Metrics;
use crate::controller::queue::Queue;
use kube::Client;
use tokio::sync::Notify;
use tracing::{debug, info};

/// A bind whose outcome neither its answer nor the read after it could tell.
pub(in crate::controller) struct Unsettled {
    pub(in crate::controller) seed: String,
    pub(in crate::controller) shoot: Shoot,
    /// the success note of its decision
    pub(in crate::controller) note: String,
    pub(in crate::controller) profile: String,
    /// when the attempt gave up asking
    pub(in crate::controller) since: tokio::time::Instant,
}

/// State shared by the watches, workers and HTTP handlers.
pub struct Shared {
    pub(super) client: Client,
    /// the client of the watches (see [`crate::controller::client::ApiClients::watches`])
    pub(super) watches: Client,
    /// when each watched collection last answered (recorded by the client stack)
    pub(super) activity: Arc<Activity>,
    /// the collection path of each feed that has listed, for [`Shared::feed_ages`]
    pub(super) feeds: Mutex<HashMap<WatchedKind, String>>,
    /// feeds listing again while their watch was healthy (the server ended it with 410 Gone),
    /// not because it went silent: not stale while their pages arrive (see `liveness`)
    pub(super) relisting: Mutex<HashSet<WatchedKind>>,
    pub(super) chain: Arc<ProfileChain>,
    /// `profiles` is configured: success events name the entry that placed the shoot
    pub(super) name_profiles: bool,
    /// the chain entry seen by the last decision, to log when it changes
    pub(super) active_profile: Mutex<Option<String>>,
    pub(super) binding_mode: BindingMode,
    /// the shoots this scheduler places ask for one of these (`schedulers.shoot.schedulerNames`)
    pub(super) scheduler_names: Vec<String>,
    pub(super) retry_sync_period: Duration,
    /// how long one decision may take (`schedulers.shoot.decisionBudget`)
    pub(super) decision_budget: Duration,
    /// binds carry the decision record
    pub(super) decision_record: bool,
    /// objects per page of a watch's list (`schedulers.shoot.listPageSize`)
    pub(super) list_page_size: u32,
    /// whether watches read their kind's state as a stream where the server can
    /// (`schedulers.shoot.streamingLists`)
    pub(super) streaming_lists: bool,
    /// beaten by the scheduling runtime, read by `/healthz`
    pub(super) heartbeat: crate::controller::liveness::Heartbeat,
    /// what the watches brought, and the placements assumed; see [`Shared::lock`]
    pub(super) cache: Mutex<Cache>,
    pub(super) queue: Queue,
    pub(super) metrics: Metrics,
    /// binds refused the same way for every shoot, reported once
    pub(super) refusals: refusals::Refusals,
    pub(super) reporter: Reporter,
    /// binds whose outcome neither their answer nor a read told: settled by what the watch,
    /// or the next attempt's read, shows
    pub(super) unsettled: Mutex<HashMap<String, Unsettled>>,
    pub(super) leadership: Leadership,
    pub(super) synced: Mutex<HashSet<WatchedKind>>,
    pub(super) synced_notify: Notify,
    /// The first `CarbonIntensity` configuration in the profile chain, if any: it decides
    /// whether carbon-intensity ConfigMaps are watched and feeds the carbon metrics.
    pub(super) carbon: Option<crate::carbon::CarbonSettings>,
}

impl Shared {
    /// The cache, locked. Hold it only for synchronous work.
    pub fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues what a change of the cache calls for: `key` itself if it became pending, the
    /// waiting shoots if the landscape changed, one shoot a dropped placement turned away.
    pub fn queue_affected(&self, key: &str, change: Change) {
        self.queue_change(Some(key), change);
    }

    /// Applies a change's consequences to the queue: `key` (when it became pending), the
    /// waiting shoots, and the first shoot a freed slot may take.
    pub(in crate::controller) fn queue_change(&self, key: Option<&str>, change: Change) {
        if change.enqueue
            && let Some(k) = key
        {
            self.queue.add(k);
        }
        if change.retry_waiting {
            let n = self.queue.wake_delayed();
            if n > 0 {
                debug!(shoots = n, "landscape changed: retrying waiting shoots now");
            }
        }
        // One freed slot, one shoot: the first one turned away that still waits for a change;
        // the others keep their place for the next slot.
        let mut candidates = change.requeue.iter();
        if let Some(woken) = candidates.by_ref().find(|k| self.queue.wake(k)) {
            debug!(shoot = %woken, "a dropped placement freed a slot: retrying a shoot it turned away");
            let rest: Vec<_> = candidates.cloned().collect();
            if let Some(seed) = &change.freed_on {
                self.lock().refused_again(seed, &rest);
            }
        }
    }

    /// Changes the cache under its lock, then (the lock released) queues what the change calls
    /// for: the one way an attempt changes the cache.
    pub(super) fn change(&self, key: &str, change: impl FnOnce(&mut Cache) -> Change) {
        let c = change(&mut self.lock());
        self.queue_affected(key, c);
    }

    /// Logs at info level when the chain's active entry differs from the last decision's.
    pub(super) fn note_active_profile(&self, entry: Option<&str>) {
        let mut last = self
            .active_profile
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if last.as_deref() != entry {
            info!(
                from = last.as_deref().unwrap_or("none"),
                to = entry.unwrap_or("none"),
                "active scheduling profile changed"
            );
            *last = entry.map(str::to_string);
        }
    }
}

#[cfg(any(test, feature = "test-util"))]
impl Shared {
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}
