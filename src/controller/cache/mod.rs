//! What the controller knows: the [`Snapshot`] fed by the watches, the pending shoots in compact
//! form (with the object as the API server sent it, to bind from), and the placements it has
//! assumed but the watch has not shown yet.
//!
//! Everything here is synchronous and guarded by one mutex in the controller, so a decision and
//! its assumption happen atomically: two workers cannot both count on a seed's last free slot.
//!
//! The files, by concern: `state.rs` is what the cache holds; this one applies the shoots and
//! seeds the watches bring, `other.rs` the other kinds (made ready before the lock);
//! `assumptions.rs` counts placements being bound; `relist.rs` finds objects deleted while a
//! watch was down (`kind.rs` numbers each kind's lists); `compact.rs` keeps only what a
//! decision, an event or a bind reads.

mod assumptions;
mod compact;
mod kind;
mod other;
mod relist;
mod state;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::api::{Gates, Seed, Shoot, object_key};
use crate::snapshot::SeedInfo;

#[cfg(any(test, feature = "test-util"))]
pub use compact::PendingShoot;
use compact::scheduling_relevant_change;
pub use compact::{Sent, ShootUpdate};
pub use kind::WatchedKind;
pub use other::OtherUpdate;
use state::Known;
pub use state::{Assumption, Cache, Change, Waiting};

/// A resourceVersion as a number: the API server's are etcd revisions, which grow. (They are
/// opaque by contract; one that is not a number is never taken as older.)
fn resource_version(shoot: &Shoot) -> Option<u64> {
    shoot.metadata.resource_version.as_deref()?.parse().ok()
}

impl Cache {
    pub fn new(scheduler_names: Vec<String>) -> Self {
        Cache {
            scheduler_names,
            ..Default::default()
        }
    }

    /// Applies a shoot from the watch (or a fresh read) known only in its typed form: a bind of
    /// it reads the whole object first.
    pub fn apply_shoot(&mut self, shoot: &Shoot) -> Change {
        self.apply_shoot_with_raw(shoot, None)
    }

    /// Applies a shoot from the watch (or a fresh read) with the object the API server sent
    /// (`raw`): while the shoot is pending, its bind is sent from that object.
    pub fn apply_raw_shoot(&mut self, shoot: &Shoot, raw: &serde_json::Value) -> Change {
        self.apply_shoot_with_raw(shoot, Some(Sent::Value(raw)))
    }

    /// Applies a shoot read from the API server outside the watch (after a bind or a
    /// conflict): newer than what the watch brought so far, so the watch's older versions still
    /// on their way do not replace it.
    pub fn apply_read_shoot(&mut self, shoot: &Shoot, raw: &serde_json::Value) -> Change {
        let update = ShootUpdate::new(shoot, Some(Sent::Value(raw)), &self.scheduler_names);
        self.apply_read_update(update)
    }

    /// As [`Cache::apply_read_shoot`], prepared outside the lock.
    pub fn apply_read_update(&mut self, update: ShootUpdate<'_>) -> Change {
        let shoot = update.shoot;
        let change = self.apply_shoot_update(update);
        if let Some(rv) = resource_version(shoot) {
            self.read_versions
                .insert(object_key(&shoot.metadata).as_str().into(), rv);
        }
        change
    }

    /// Whether the watch brought an older version of `shoot` than one already read. Once it
    /// brings the read's version or a newer one, the read's is forgotten.
    fn stale(&mut self, key: &str, shoot: &Shoot) -> bool {
        let Some(&read) = self.read_versions.get(key) else {
            return false;
        };
        match resource_version(shoot) {
            Some(rv) if rv < read => true,
            _ => {
                self.read_versions.remove(key);
                false
            }
        }
    }

    fn apply_shoot_with_raw(&mut self, shoot: &Shoot, raw: Option<Sent<'_>>) -> Change {
        let update = ShootUpdate::new(shoot, raw, &self.scheduler_names);
        self.apply_shoot_update(update)
    }

    /// Applies a shoot prepared outside the lock (`ShootUpdate::new`): it only stores what
    /// was made there.
    pub fn apply_shoot_update(&mut self, update: ShootUpdate<'_>) -> Change {
        let ShootUpdate {
            shoot,
            pending,
            kept,
        } = update;
        let key = object_key(&shoot.metadata);
        self.mark_seen(WatchedKind::Shoot, &key);
        if self.stale(&key, shoot) {
            return Change::default();
        }
        let mut change = Change::default();
        let old_seeds: Vec<String> = self
            .snapshot
            .usage()
            .seeds_of(&key)
            .into_iter()
            .map(str::to_string)
            .collect();
        let key: Arc<str> = key.as_str().into();
        // Only a pending shoot keeps its whole object; bound shoots stay compact.
        match kept {
            Some(json) => {
                self.raw.insert(key.clone(), json);
            }
            None => {
                self.raw.remove(&key);
            }
        }

        if let Some(a) = self.assumed.get(&key) {
            if let Some(p) = pending {
                // The pre-bind version (or a later one the bind raced with): keep counting the
                // assumed seed until the bind's outcome is known or the watch shows a seed.
                let mut placed = (*p.shoot).clone();
                placed.spec.seed_name = Some(a.seed.clone());
                self.snapshot.upsert_shoot(&placed);
                let listed = self.lists.mark(WatchedKind::Shoot);
                self.shoots.insert(
                    key,
                    Known {
                        pending: Some(p),
                        listed,
                    },
                );
                return change;
            }
            if let Some(a) = self.assumed.remove(&key) {
                self.settle(&a.seed);
            }
        }

        self.snapshot.upsert_shoot(shoot);
        let listed = self.lists.mark(WatchedKind::Shoot);
        let entry = self.shoots.entry(key.clone()).or_insert(Known {
            pending: None,
            listed,
        });
        entry.listed = listed;
        match pending {
            Some(new) => {
                change.enqueue = entry
                    .pending
                    .as_ref()
                    .is_none_or(|old| scheduling_relevant_change(old, &new));
                entry.pending = Some(new);
            }
            None => {
                entry.pending = None;
                self.waiting.remove(&key);
            }
        }
        let new_seeds = self.snapshot.usage().seeds_of(&key);
        change.retry_waiting = old_seeds.iter().any(|s| !new_seeds.contains(&s.as_str()));
        change
    }

    /// Forgets a deleted shoot. A placement only assumed (the shoot was deleted while being
    /// bound) frees nothing anyone else could have counted on, except the shoots it turned away.
    pub fn remove_shoot(&mut self, key: &str) -> Change {
        let freed = !self.snapshot.usage().seeds_of(key).is_empty();
        self.snapshot.remove_shoot(key);
        self.shoots.remove(key);
        self.raw.remove(key);
        self.read_versions.remove(key);
        self.waiting.remove(key);
        match self.assumed.remove(key) {
            Some(a) => Change {
                requeue: self.take_refused(&a.seed, key),
                freed_on: Some(a.seed),
                ..Default::default()
            },
            None => Change {
                retry_waiting: freed,
                ..Default::default()
            },
        }
    }

    /// The shoot to decide for, if it is pending and not already assumed.
    pub fn pending(&self, key: &str) -> Option<Arc<Shoot>> {
        if self.assumed.contains_key(key) {
            return None;
        }
        self.shoots
            .get(key)
            .and_then(|k| k.pending.as_ref())
            .map(|p| p.shoot.clone())
    }

    /// As [`Cache::pending`], with the gates parsed when the shoot was applied.
    pub fn pending_with_gates(&self, key: &str) -> Option<(Arc<Shoot>, Arc<Gates>)> {
        if self.assumed.contains_key(key) {
            return None;
        }
        let p = self.shoots.get(key)?.pending.as_ref()?;
        Some((p.shoot.clone(), p.gates.clone()))
    }

    /// The object the API server last sent for a pending shoot (JSON), at the resourceVersion
    /// of [`Cache::pending`]'s; `None` when the shoot was only applied in typed form.
    pub fn pending_raw(&self, key: &str) -> Option<Arc<str>> {
        self.raw.get(key).cloned()
    }

    /// Pending shoots whose whole object is kept, for the memory report.
    pub fn raw_count(&self) -> usize {
        self.raw.len()
    }

    /// Keys of every shoot waiting for this scheduler.
    pub fn pending_keys(&self) -> Vec<Arc<str>> {
        let mut keys: Vec<Arc<str>> = self
            .shoots
            .iter()
            .filter(|(k, v)| v.pending.is_some() && !self.assumed.contains_key(&***k))
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys
    }

    /// Records why the pending shoot `key` still waits after an attempt.
    pub fn note_waiting(&mut self, key: &str, why: Waiting) {
        if self.shoots.get(key).is_some_and(|k| k.pending.is_some()) {
            self.waiting.insert(key.into(), why);
        }
    }

    /// Per pending shoot (not being bound): why it waits, with its `creationTimestamp`.
    pub fn pending_states(
        &self,
    ) -> impl Iterator<Item = (Option<&Waiting>, Option<k8s_openapi::jiff::Timestamp>)> + '_ {
        self.shoots
            .iter()
            .filter(|(k, _)| !self.assumed.contains_key(&***k))
            .filter_map(|(k, v)| {
                let shoot = &v.pending.as_ref()?.shoot;
                let created = shoot.metadata.creation_timestamp.as_ref().map(|t| t.0);
                Some((self.waiting.get(k), created))
            })
    }

    pub fn pending_count(&self) -> usize {
        self.shoots
            .iter()
            .filter(|(k, v)| v.pending.is_some() && !self.assumed.contains_key(&***k))
            .count()
    }

    pub fn known_shoots(&self) -> usize {
        self.shoots.len()
    }

    // ---- seeds

    pub fn apply_seed(&mut self, seed: &Seed) -> Change {
        self.apply_seed_info(Arc::new(SeedInfo::from_seed(seed)))
    }

    /// Applies a seed compiled outside the lock ([`SeedInfo::from_seed`]): it only stores it.
    pub fn apply_seed_info(&mut self, info: Arc<SeedInfo>) -> Change {
        let name = info.name.to_string();
        let before = self.snapshot.seed(&name).cloned();
        self.snapshot.upsert_seed_info(info);
        let listed = self.lists.mark(WatchedKind::Seed);
        match self.seeds_listed.get_mut(name.as_str()) {
            Some(mark) => *mark = listed,
            None => {
                if let Some(s) = self.snapshot.seed(&name) {
                    self.seeds_listed.insert(s.name.clone(), listed);
                }
            }
        }
        Change {
            enqueue: false,
            retry_waiting: before.as_ref() != self.snapshot.seed(&name),
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    pub fn remove_seed(&mut self, name: &str) -> Change {
        let existed = self.snapshot.seed(name).is_some();
        self.snapshot.remove_seed(name);
        self.seeds_listed.remove(name);
        Change {
            enqueue: false,
            retry_waiting: existed,
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    /// A carbon-intensity ConfigMap was deleted (or left the label selection) at `now`. The
    /// exporter deletes and recreates its ConfigMap on every refresh, so the data keeps counting
    /// for the priority's grace period instead of vanishing.
    pub fn remove_carbon_config_map(&mut self, key: &str, now: DateTime<Utc>) -> Change {
        let existed = self
            .fingerprints
            .remove(&(WatchedKind::CarbonConfigMap, key.to_string()))
            .is_some();
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        self.snapshot.remove_carbon_config_map(ns, name, now);
        Change {
            enqueue: false,
            retry_waiting: existed,
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    /// Removes a cloud profile, project or ConfigMap by its key (`name` or `namespace/name`).
    /// A carbon-intensity ConfigMap starts its grace period now.
    pub fn remove_other(&mut self, kind: WatchedKind, key: &str) -> Change {
        if kind == WatchedKind::CarbonConfigMap {
            return self.remove_carbon_config_map(key, Utc::now());
        }
        let existed = self.fingerprints.remove(&(kind, key.to_string())).is_some();
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        match kind {
            WatchedKind::CloudProfile => self.snapshot.remove_cloud_profile(key),
            WatchedKind::NamespacedCloudProfile => {
                self.snapshot.remove_namespaced_cloud_profile(ns, name)
            }
            WatchedKind::Project => self.snapshot.remove_project(key),
            WatchedKind::ConfigMap => self.snapshot.remove_config_map(ns, name),
            WatchedKind::Shoot | WatchedKind::Seed | WatchedKind::CarbonConfigMap => {}
        }
        Change {
            enqueue: false,
            retry_waiting: existed,
            requeue: Vec::new(),
            freed_on: None,
        }
    }
}
