//! What the controller knows: the [`Snapshot`] fed by the watches, the pending shoots in compact
//! form (with the object as the API server sent it, to bind from), and the placements it has
//! assumed but the watch has not shown yet.
//!
//! Everything here is synchronous and guarded by one mutex in the controller, so a decision and
//! its assumption happen atomically: two workers cannot both count on a seed's last free slot.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use crate::api::is_pending;
use crate::api::residency_opt_out;
use crate::api::{
    CloudProfile, ConfigMap, NamespacedCloudProfile, ObjectMeta, Project, Seed, Shoot, object_key,
};
use crate::reason::Reason;
use crate::schedule::FitError;
use crate::snapshot::Snapshot;

/// How long a successful bind may stay unconfirmed by the watch before it stops counting.
/// Far longer than any watch lag; only a shoot deleted while the watch was down needs it.
const UNCONFIRMED_BIND_TTL: Duration = Duration::from_secs(300);

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

/// What an update did to the pending set; the watch layer turns it into queue operations.
///
/// Only changes made by others (a seed, a cloud profile, a shoot leaving a seed) set `wake`.
/// What the scheduler does itself (assuming a placement, dropping it after a failed bind, writing
/// status or events) never does: a dropped assumption returns capacity that was never used, and
/// may only queue the shoots it turned away (`requeue`), once.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// the shoot became pending, or its scheduling-relevant fields changed: decide again now
    pub enqueue: bool,
    /// capacity may have been freed or the landscape changed: retry waiting shoots now
    pub wake: bool,
    /// a placement only assumed was dropped: the seed whose slot it freed, and the shoots that
    /// seed refused for capacity meanwhile, first refused first; one of them may have the slot
    pub requeue: Vec<Arc<str>>,
    pub freed_on: Option<String>,
}

/// The controller's cache.
#[derive(Default)]
pub struct State {
    pub snapshot: Snapshot,
    /// every known shoot; `Some` while it waits for this scheduler
    shoots: HashMap<Arc<str>, Option<Arc<Shoot>>>,
    /// per pending shoot, the object as the API server sent it (JSON without managedFields), at
    /// the resourceVersion of its compact form in `shoots`: a bind sends it back whole, so no
    /// field the scheduler does not know is lost. Dropped once the shoot is bound.
    raw: HashMap<Arc<str>, Arc<str>>,
    assumed: HashMap<Arc<str>, Assumption>,
    scheduler_names: Vec<String>,
    /// per watched kind, keys seen since the watch (re)started its list
    relisting: HashMap<Kind, HashSet<String>>,
    /// non-seed, non-shoot objects: a fingerprint of what the decision reads, to tell relevant
    /// changes from noise (status heartbeats, managed fields)
    fingerprints: HashMap<(Kind, String), u64>,
    /// per seed holding assumed placements: pending shoots it refused for capacity meanwhile,
    /// first refused first
    refused_for: HashMap<String, Vec<Arc<str>>>,
}

/// The watched kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Shoot,
    Seed,
    CloudProfile,
    NamespacedCloudProfile,
    Project,
    ConfigMap,
    /// Carbon-intensity ConfigMaps in every namespace (a watch of its own, started only when a
    /// profile uses `CarbonIntensity`).
    CarbonConfigMap,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Shoot,
        Kind::Seed,
        Kind::CloudProfile,
        Kind::NamespacedCloudProfile,
        Kind::Project,
        Kind::ConfigMap,
        Kind::CarbonConfigMap,
    ];

    /// Kinds a decision can do without: projects (the namespace `garden-<project>` names the
    /// project), namespaced cloud profiles, region ConfigMaps and carbon-intensity ConfigMaps
    /// (seeds then score neutral). Upstream's RBAC for the scheduler grants no access to
    /// projects.
    pub fn optional(&self) -> bool {
        matches!(
            self,
            Kind::Project | Kind::NamespacedCloudProfile | Kind::ConfigMap | Kind::CarbonConfigMap
        )
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::Shoot => "Shoot",
            Kind::Seed => "Seed",
            Kind::CloudProfile => "CloudProfile",
            Kind::NamespacedCloudProfile => "NamespacedCloudProfile",
            Kind::Project => "Project",
            Kind::ConfigMap => "ConfigMap",
            Kind::CarbonConfigMap => "CarbonIntensityConfigMap",
        }
    }
}

/// Keeps only the metadata a decision, an event or a bind needs.
fn compact_meta(meta: &ObjectMeta, keep_labels: bool, keep_annotations: &[&str]) -> ObjectMeta {
    ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        generation: meta.generation,
        creation_timestamp: meta.creation_timestamp.clone(),
        deletion_timestamp: meta.deletion_timestamp.clone(),
        labels: if keep_labels {
            meta.labels.clone()
        } else {
            None
        },
        annotations: meta.annotations.as_ref().and_then(|a| {
            let kept: std::collections::BTreeMap<String, String> = a
                .iter()
                .filter(|(k, _)| keep_annotations.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (!kept.is_empty()).then_some(kept)
        }),
        ..Default::default()
    }
}

/// The compact form of a shoot kept while it is pending.
pub fn compact_shoot(shoot: &Shoot) -> Shoot {
    Shoot {
        metadata: compact_meta(&shoot.metadata, false, &[crate::api::ANNOTATION_RESIDENCY]),
        spec: shoot.spec.clone(),
        status: shoot.status.clone(),
    }
}

fn fingerprint<T: serde::Serialize>(value: &T) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&serde_json::to_vec(value).unwrap_or_default())
}

/// Does the change between two versions of a pending shoot call for a new decision? Our own
/// `status.lastOperation` writes do not.
fn scheduling_relevant_change(old: &Shoot, new: &Shoot) -> bool {
    let status = |s: &Shoot| {
        let st = s.status.as_ref();
        (
            st.and_then(|st| st.seed_name.clone()),
            st.and_then(|st| st.networking.clone()),
        )
    };
    old.spec != new.spec
        || status(old) != status(new)
        || crate::api::residency_opt_out(&old.metadata)
            != crate::api::residency_opt_out(&new.metadata)
        || old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
}

impl State {
    pub fn new(scheduler_names: Vec<String>) -> Self {
        State {
            scheduler_names,
            ..Default::default()
        }
    }

    // ---- relists

    /// The watch of `kind` starts a (re)list.
    pub fn begin_relist(&mut self, kind: Kind) {
        self.relisting.insert(kind, HashSet::new());
    }

    /// Counts `key` as listed in a running (re)list, even when it could not be decoded.
    pub fn mark_seen(&mut self, kind: Kind, key: &str) {
        if let Some(seen) = self.relisting.get_mut(&kind) {
            seen.insert(key.to_string());
        }
    }

    /// The (re)list of `kind` is complete: objects not listed were deleted meanwhile.
    pub fn end_relist(&mut self, kind: Kind) -> Change {
        let Some(seen) = self.relisting.remove(&kind) else {
            return Change::default();
        };
        let gone: Vec<String> = match kind {
            Kind::Shoot => self
                .shoots
                .keys()
                .filter(|k| !seen.contains(&***k))
                .map(|k| k.to_string())
                .collect(),
            Kind::Seed => self
                .snapshot
                .seeds()
                .map(|s| s.name.to_string())
                .filter(|n| !seen.contains(n))
                .collect(),
            _ => self
                .fingerprints
                .keys()
                .filter(|(k, key)| *k == kind && !seen.contains(key))
                .map(|(_, key)| key.clone())
                .collect(),
        };
        let mut change = Change::default();
        for key in gone {
            let c = match kind {
                Kind::Shoot => self.remove_shoot(&key),
                Kind::Seed => self.remove_seed(&key),
                other => self.remove_other(other, &key),
            };
            change.wake |= c.wake;
        }
        change
    }

    // ---- shoots

    /// Applies a shoot from the watch (or a fresh read) known only in its typed form: a bind of
    /// it reads the whole object first.
    pub fn apply_shoot(&mut self, shoot: &Shoot) -> Change {
        self.apply_shoot_with_raw(shoot, None)
    }

    /// Applies a shoot from the watch (or a fresh read) with the object the API server sent
    /// (`raw`): while the shoot is pending, its bind is sent from that object.
    pub fn apply_raw_shoot(&mut self, shoot: &Shoot, raw: &serde_json::Value) -> Change {
        self.apply_shoot_with_raw(shoot, Some(raw))
    }

    fn apply_shoot_with_raw(&mut self, shoot: &Shoot, raw: Option<&serde_json::Value>) -> Change {
        let key = object_key(&shoot.metadata);
        self.mark_seen(Kind::Shoot, &key);
        let mut change = Change::default();
        let old_seeds: Vec<String> = self
            .snapshot
            .usage()
            .seeds_of(&key)
            .into_iter()
            .map(str::to_string)
            .collect();
        let pending = is_pending(shoot, &self.scheduler_names);
        let key: Arc<str> = key.as_str().into();
        // Only a pending shoot keeps its whole object; bound shoots stay compact.
        match raw
            .filter(|_| pending)
            .and_then(|v| serde_json::to_string(v).ok())
        {
            Some(json) => {
                self.raw.insert(key.clone(), json.into());
            }
            None => {
                self.raw.remove(&key);
            }
        }

        if let Some(a) = self.assumed.get(&key) {
            if pending {
                // The pre-bind version (or a later one the bind raced with): keep counting the
                // assumed seed until the bind's outcome is known or the watch shows a seed.
                let mut placed = compact_shoot(shoot);
                placed.spec.seed_name = Some(a.seed.clone());
                self.snapshot.upsert_shoot(&placed);
                self.shoots
                    .insert(key, Some(Arc::new(compact_shoot(shoot))));
                return change;
            }
            if let Some(a) = self.assumed.remove(&key) {
                self.settle(&a.seed);
            }
        }

        self.snapshot.upsert_shoot(shoot);
        let entry = self.shoots.entry(key.clone()).or_insert(None);
        if pending {
            let new = compact_shoot(shoot);
            change.enqueue = entry
                .as_ref()
                .is_none_or(|old| scheduling_relevant_change(old, &new));
            *entry = Some(Arc::new(new));
        } else {
            *entry = None;
        }
        let new_seeds = self.snapshot.usage().seeds_of(&key);
        change.wake = old_seeds.iter().any(|s| !new_seeds.contains(&s.as_str()));
        change
    }

    /// Forgets a deleted shoot. A placement only assumed (the shoot was deleted while being
    /// bound) frees nothing anyone else could have counted on, except the shoots it turned away.
    pub fn remove_shoot(&mut self, key: &str) -> Change {
        let freed = !self.snapshot.usage().seeds_of(key).is_empty();
        self.snapshot.remove_shoot(key);
        self.shoots.remove(key);
        self.raw.remove(key);
        match self.assumed.remove(key) {
            Some(a) => Change {
                requeue: self.take_refused(&a.seed, key),
                freed_on: Some(a.seed),
                ..Default::default()
            },
            None => Change {
                wake: freed,
                ..Default::default()
            },
        }
    }

    /// The shoot to decide for, if it is pending and not already assumed.
    pub fn pending(&self, key: &str) -> Option<Arc<Shoot>> {
        if self.assumed.contains_key(key) {
            return None;
        }
        self.shoots.get(key).cloned().flatten()
    }

    /// The object the API server last sent for a pending shoot (JSON), at the resourceVersion
    /// of [`State::pending`]'s; `None` when the shoot was only applied in typed form.
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
            .filter(|(k, v)| v.is_some() && !self.assumed.contains_key(&***k))
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys
    }

    pub fn pending_count(&self) -> usize {
        self.shoots
            .iter()
            .filter(|(k, v)| v.is_some() && !self.assumed.contains_key(&***k))
            .count()
    }

    pub fn known_shoots(&self) -> usize {
        self.shoots.len()
    }

    // ---- assumptions

    /// Counts `shoot` on `seed` from now on, before the bind is written.
    pub fn assume(&mut self, shoot: &Shoot, seed: &str) {
        let key = object_key(&shoot.metadata);
        let mut placed = shoot.clone();
        placed.spec.seed_name = Some(seed.to_string());
        self.snapshot.upsert_shoot(&placed);
        self.assumed.insert(
            key.into(),
            Assumption {
                seed: seed.to_string(),
                observed: shoot.metadata.resource_version.clone().unwrap_or_default(),
                bound_at: None,
                uncertain: false,
            },
        );
    }

    /// The bind succeeded; the assumption stays until the watch shows the seed.
    pub fn confirm_bind(&mut self, key: &str) {
        if let Some(a) = self.assumed.get_mut(key) {
            a.bound_at = Some(Instant::now());
        }
    }

    /// The bind got no answer; keep counting the seed until a read tells what happened.
    pub fn mark_uncertain(&mut self, key: &str) {
        if let Some(a) = self.assumed.get_mut(key) {
            a.uncertain = true;
        }
    }

    /// The bind failed or was abandoned: stop counting the assumed seed. Wakes nobody: the
    /// slot was never used, so only the shoots it turned away may try again (`requeue`), never
    /// the shoot itself, whose caller decides when it is retried.
    pub fn forget_assumption(&mut self, key: &str) -> Change {
        let Some(a) = self.assumed.remove(key) else {
            return Change::default();
        };
        match self.shoots.get(key).cloned() {
            Some(Some(shoot)) => {
                self.snapshot.upsert_shoot(&shoot);
            }
            _ => self.snapshot.remove_shoot(key),
        }
        Change {
            enqueue: self.pending(key).is_some(),
            wake: false,
            requeue: self.take_refused(&a.seed, key),
            freed_on: Some(a.seed),
        }
    }

    /// Records that `key` did not fit: a seed that refused it for capacity while holding an
    /// assumed placement may have room once that placement is dropped.
    pub fn note_refused(&mut self, key: &str, fit: &FitError) {
        let FitError::NoFit { rejected, .. } = fit else {
            return;
        };
        for r in rejected {
            if matches!(r.reason, Reason::Capacity { .. })
                && self.assumed.values().any(|a| *a.seed == *r.seed)
            {
                let refused = self.refused_for.entry(r.seed.to_string()).or_default();
                if !refused.iter().any(|k| **k == *key) {
                    refused.push(key.into());
                }
            }
        }
    }

    /// The shoots `seed` refused while an assumed placement counted there, except `key`, first
    /// refused first; the record is handed over (see [`State::refused_again`]).
    fn take_refused(&mut self, seed: &str, key: &str) -> Vec<Arc<str>> {
        self.refused_for
            .remove(seed)
            .unwrap_or_default()
            .into_iter()
            .filter(|k| **k != *key)
            .collect()
    }

    /// Gives back the refused shoots a freed slot did not go to, ahead of any refused since, for
    /// the next slot `seed` frees.
    pub fn refused_again(&mut self, seed: &str, keys: &[Arc<str>]) {
        if keys.is_empty() {
            return;
        }
        let newer = self.refused_for.remove(seed).unwrap_or_default();
        let mut all = keys.to_vec();
        all.extend(newer.into_iter().filter(|k| !keys.contains(k)));
        self.refused_for.insert(seed.to_string(), all);
    }

    /// An assumed placement on `seed` became real: the shoots it refused wait for a change by
    /// others like any unschedulable shoot, once no assumption counts there any more.
    fn settle(&mut self, seed: &str) {
        if !self.assumed.values().any(|a| a.seed == seed) {
            self.refused_for.remove(seed);
        }
    }

    pub fn assumption(&self, key: &str) -> Option<&Assumption> {
        self.assumed.get(key)
    }

    /// Drops binds the watch never confirmed within [`UNCONFIRMED_BIND_TTL`]; returns their keys
    /// (the shoots they had turned away are dropped from the record: they wait for their
    /// backoff).
    pub fn expire_assumptions(&mut self, now: Instant) -> Vec<String> {
        let expired: Vec<String> = self
            .assumed
            .iter()
            .filter(|(_, a)| {
                a.bound_at
                    .is_some_and(|t| now.duration_since(t) > UNCONFIRMED_BIND_TTL)
            })
            .map(|(k, _)| k.to_string())
            .collect();
        for k in &expired {
            self.forget_assumption(k);
        }
        expired
    }

    // ---- seeds

    pub fn apply_seed(&mut self, seed: &Seed) -> Change {
        let name = seed.name().to_string();
        self.mark_seen(Kind::Seed, &name);
        let before = self.snapshot.seed(&name).cloned();
        self.snapshot.upsert_seed(seed);
        Change {
            enqueue: false,
            wake: before.as_ref() != self.snapshot.seed(&name),
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    pub fn remove_seed(&mut self, name: &str) -> Change {
        let existed = self.snapshot.seed(name).is_some();
        self.snapshot.remove_seed(name);
        Change {
            enqueue: false,
            wake: existed,
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    // ---- the other kinds: cloud profiles, projects, region and carbon-intensity ConfigMaps

    fn track(&mut self, kind: Kind, key: String, print: u64) -> Change {
        self.mark_seen(kind, &key);
        let old = self.fingerprints.insert((kind, key), print);
        Change {
            enqueue: false,
            wake: old != Some(print),
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    pub fn apply_cloud_profile(&mut self, cp: &CloudProfile) -> Change {
        let compact = CloudProfile {
            metadata: compact_meta(&cp.metadata, false, &[]),
            spec: cp.spec.clone(),
        };
        self.snapshot.upsert_cloud_profile(&compact);
        let key = compact.metadata.name.clone().unwrap_or_default();
        self.track(Kind::CloudProfile, key, fingerprint(&compact.spec))
    }

    pub fn apply_namespaced_cloud_profile(&mut self, ncp: &NamespacedCloudProfile) -> Change {
        let compact = NamespacedCloudProfile {
            metadata: compact_meta(&ncp.metadata, false, &[]),
            spec: ncp.spec.clone(),
            status: ncp.status.clone(),
        };
        self.snapshot.upsert_namespaced_cloud_profile(&compact);
        let key = object_key(&compact.metadata);
        self.track(
            Kind::NamespacedCloudProfile,
            key,
            fingerprint(&(&compact.spec, &compact.status)),
        )
    }

    pub fn apply_project(&mut self, project: &Project) -> Change {
        self.snapshot.upsert_project(project);
        let key = project.metadata.name.clone().unwrap_or_default();
        self.track(
            Kind::Project,
            key,
            fingerprint(&(&project.spec, residency_opt_out(&project.metadata))),
        )
    }

    pub fn apply_config_map(&mut self, cm: &ConfigMap) -> Change {
        let compact = ConfigMap {
            metadata: compact_meta(&cm.metadata, true, &[crate::api::ANNOTATION_CLOUDPROFILES]),
            data: cm.data.clone(),
            ..Default::default()
        };
        self.snapshot.upsert_config_map(&compact);
        let key = object_key(&compact.metadata);
        self.track(
            Kind::ConfigMap,
            key,
            fingerprint(&(
                &compact.metadata.labels,
                &compact.metadata.annotations,
                &compact.data,
            )),
        )
    }

    /// Applies a carbon-intensity ConfigMap (parsed once, in the snapshot). A changed forecast,
    /// heartbeat or label wakes waiting shoots; an identical resync does not.
    pub fn apply_carbon_config_map(&mut self, cm: &ConfigMap) -> Change {
        self.snapshot.upsert_config_map(cm);
        let key = object_key(&cm.metadata);
        self.track(
            Kind::CarbonConfigMap,
            key,
            fingerprint(&(&cm.metadata.labels, &cm.data, &cm.binary_data)),
        )
    }

    /// A carbon-intensity ConfigMap was deleted (or left the label selection) at `now`. The
    /// exporter deletes and recreates its ConfigMap on every refresh, so the data keeps counting
    /// for the priority's grace period instead of vanishing.
    pub fn remove_carbon_config_map(&mut self, key: &str, now: DateTime<Utc>) -> Change {
        let existed = self
            .fingerprints
            .remove(&(Kind::CarbonConfigMap, key.to_string()))
            .is_some();
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        self.snapshot.remove_carbon_config_map(ns, name, now);
        Change {
            enqueue: false,
            wake: existed,
            requeue: Vec::new(),
            freed_on: None,
        }
    }

    /// Removes a cloud profile, project or ConfigMap by its key (`name` or `namespace/name`).
    /// A carbon-intensity ConfigMap starts its grace period now.
    pub fn remove_other(&mut self, kind: Kind, key: &str) -> Change {
        if kind == Kind::CarbonConfigMap {
            return self.remove_carbon_config_map(key, Utc::now());
        }
        let existed = self.fingerprints.remove(&(kind, key.to_string())).is_some();
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        match kind {
            Kind::CloudProfile => self.snapshot.remove_cloud_profile(key),
            Kind::NamespacedCloudProfile => self.snapshot.remove_namespaced_cloud_profile(ns, name),
            Kind::Project => self.snapshot.remove_project(key),
            Kind::ConfigMap => self.snapshot.remove_config_map(ns, name),
            Kind::Shoot | Kind::Seed | Kind::CarbonConfigMap => {}
        }
        Change {
            enqueue: false,
            wake: existed,
            requeue: Vec::new(),
            freed_on: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};

    fn names() -> Vec<String> {
        vec!["default-scheduler".into()]
    }

    fn with_rv(mut s: Shoot, rv: &str) -> Shoot {
        s.metadata.resource_version = Some(rv.into());
        s
    }

    #[test]
    fn a_new_pending_shoot_is_enqueued_and_kept_compact() {
        let mut st = State::new(names());
        let mut shoot = ShootBuilder::new("garden-a", "s1").build();
        shoot.metadata.managed_fields = Some(vec![Default::default()]);
        shoot.metadata.annotations = Some([("a".to_string(), "b".to_string())].into());
        assert!(st.apply_shoot(&shoot).enqueue);
        let cached = st.pending("garden-a/s1").unwrap();
        assert!(cached.metadata.managed_fields.is_none());
        assert!(cached.metadata.annotations.is_none());
        assert_eq!(st.pending_count(), 1);
    }

    #[test]
    fn only_scheduling_relevant_changes_of_a_pending_shoot_enqueue_it_again() {
        let mut st = State::new(names());
        let shoot = ShootBuilder::new("garden-a", "s1").build();
        st.apply_shoot(&shoot);
        let mut status_only = shoot.clone();
        status_only.status = Some(crate::api::ShootStatus {
            last_operation: Some(Default::default()),
            ..Default::default()
        });
        assert!(!st.apply_shoot(&with_rv(status_only, "2")).enqueue);
        let mut spec = shoot.clone();
        spec.spec.purpose = Some("production".into());
        assert!(st.apply_shoot(&with_rv(spec, "3")).enqueue);
    }

    #[test]
    fn the_residency_opt_out_is_kept_in_the_cache_and_its_change_enqueues_the_shoot() {
        use crate::api::ANNOTATION_RESIDENCY;
        let mut st = State::new(names());
        let shoot = ShootBuilder::new("garden-a", "s1").build();
        st.apply_shoot(&shoot);
        let opted = ShootBuilder::new("garden-a", "s1")
            .annotation(ANNOTATION_RESIDENCY, "ignore")
            .annotation("unrelated", "x")
            .build();
        assert!(st.apply_shoot(&with_rv(opted, "2")).enqueue);
        let cached = st.pending("garden-a/s1").unwrap();
        assert_eq!(
            cached.metadata.annotations,
            Some([(ANNOTATION_RESIDENCY.to_string(), "ignore".to_string())].into())
        );
    }

    #[test]
    fn a_project_residency_opt_out_change_wakes_waiting_shoots() {
        use crate::api::{ANNOTATION_RESIDENCY, Project, ProjectSpec};
        let mut st = State::new(names());
        let mut project = Project {
            spec: ProjectSpec {
                namespace: Some("garden-a".into()),
            },
            ..Default::default()
        };
        project.metadata.name = Some("a".into());
        st.apply_project(&project);
        assert!(!st.apply_project(&project).wake, "an identical resync");
        project.metadata.annotations =
            Some([(ANNOTATION_RESIDENCY.to_string(), "ignore".to_string())].into());
        assert!(st.apply_project(&project).wake);
        assert!(st.snapshot.project_opts_out_of_residency("a"));
    }

    #[test]
    fn shoots_of_other_schedulers_and_bound_shoots_are_not_pending() {
        let mut st = State::new(names());
        let mut other = ShootBuilder::new("garden-a", "other").build();
        other.spec.scheduler_name = Some("custom".into());
        assert!(!st.apply_shoot(&other).enqueue);
        assert!(
            !st.apply_shoot(&ShootBuilder::new("garden-a", "b").seed("s").build())
                .enqueue
        );
        assert_eq!(st.pending_count(), 0);
        assert_eq!(st.known_shoots(), 2);
    }

    #[test]
    fn an_assumption_counts_until_the_watch_shows_the_seed_even_past_a_stale_event() {
        let mut st = State::new(names());
        let shoot = with_rv(ShootBuilder::new("garden-a", "s1").build(), "1");
        st.apply_shoot(&shoot);
        st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
        assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 1);
        assert!(
            st.pending("garden-a/s1").is_none(),
            "assumed shoots are not decided again"
        );
        st.confirm_bind("garden-a/s1");
        // a stale pre-bind event arrives after the bind
        let c = st.apply_shoot(&shoot);
        assert_eq!(c, Change::default());
        assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 1, "still counted");
        // the watch shows the bound version
        let bound = with_rv(
            ShootBuilder::new("garden-a", "s1").seed("seed-1").build(),
            "2",
        );
        st.apply_shoot(&bound);
        assert!(st.assumption("garden-a/s1").is_none());
        assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 1);
    }

    #[test]
    fn a_failed_bind_frees_the_assumed_slot_and_makes_the_shoot_pending_again() {
        let mut st = State::new(names());
        st.apply_shoot(&ShootBuilder::new("garden-a", "s1").build());
        st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
        let c = st.forget_assumption("garden-a/s1");
        assert!(c.enqueue, "pending again");
        assert!(
            !c.wake,
            "capacity that was never used is no landscape change: nobody else is woken"
        );
        assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 0);
        assert!(st.pending("garden-a/s1").is_some());
    }

    fn refused_for_capacity(seed: &str) -> FitError {
        FitError::NoFit {
            total: 1,
            rejected: vec![crate::schedule::Rejection {
                seed: seed.into(),
                stage: "filter",
                reason: Reason::Capacity {
                    used: 1,
                    allocatable: 1,
                },
            }],
        }
    }

    #[test]
    fn a_dropped_assumption_requeues_only_the_shoots_its_seed_turned_away_and_only_once() {
        let mut st = State::new(names());
        for name in ["a", "b", "c", "d"] {
            st.apply_shoot(&ShootBuilder::new("garden-a", name).build());
        }
        // no assumption counts yet: a full seed is a fact, not a reason to hope
        st.note_refused("garden-a/d", &refused_for_capacity("seed-1"));
        st.assume(&st.pending("garden-a/a").unwrap(), "seed-1");
        st.note_refused("garden-a/b", &refused_for_capacity("seed-1"));
        st.note_refused("garden-a/c", &refused_for_capacity("seed-2"));
        let c = st.forget_assumption("garden-a/a");
        assert_eq!(c.requeue, vec![Arc::<str>::from("garden-a/b")]);
        assert!(!c.wake);
        st.assume(&st.pending("garden-a/a").unwrap(), "seed-1");
        assert!(
            st.forget_assumption("garden-a/a").requeue.is_empty(),
            "b was handed out once"
        );
    }

    #[test]
    fn the_schedulers_own_writes_coming_back_through_the_watch_wake_nobody() {
        let mut st = State::new(names());
        let shoot = with_rv(ShootBuilder::new("garden-a", "s1").build(), "1");
        st.apply_shoot(&shoot);
        // lastOperation written by the scheduler
        let mut status = shoot.clone();
        status.status = Some(crate::api::ShootStatus {
            last_operation: Some(Default::default()),
            ..Default::default()
        });
        assert_eq!(st.apply_shoot(&with_rv(status, "2")), Change::default());
        // its bind, assumed and then shown by the watch
        st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
        st.confirm_bind("garden-a/s1");
        let bound = with_rv(
            ShootBuilder::new("garden-a", "s1").seed("seed-1").build(),
            "3",
        );
        assert_eq!(st.apply_shoot(&bound), Change::default());
    }

    #[test]
    fn a_shoot_deleted_while_being_bound_frees_nothing_others_counted_on() {
        let mut st = State::new(names());
        st.apply_shoot(&ShootBuilder::new("garden-a", "a").build());
        st.assume(&st.pending("garden-a/a").unwrap(), "seed-1");
        assert!(!st.remove_shoot("garden-a/a").wake);
    }

    #[test]
    fn a_seed_chosen_by_someone_else_replaces_the_assumption() {
        let mut st = State::new(names());
        st.apply_shoot(&ShootBuilder::new("garden-a", "s1").build());
        st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
        st.apply_shoot(&ShootBuilder::new("garden-a", "s1").seed("seed-2").build());
        assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 0);
        assert_eq!(st.snapshot.usage().shoots_on("seed-2"), 1);
        assert!(st.forget_assumption("garden-a/s1") == Change::default());
    }

    #[test]
    fn heartbeats_do_not_wake_waiting_shoots_but_a_removed_taint_does() {
        let mut st = State::new(names());
        let tainted = SeedBuilder::new("s1").taint("protected", None).build();
        assert!(st.apply_seed(&tainted).wake);
        let mut heartbeat = tainted.clone();
        heartbeat.status.conditions[0].message = Some("still ready".into());
        assert!(!st.apply_seed(&heartbeat).wake);
        assert!(st.apply_seed(&SeedBuilder::new("s1").build()).wake);
    }

    #[test]
    fn a_deleted_shoot_frees_its_seed() {
        let mut st = State::new(names());
        st.apply_shoot(&ShootBuilder::new("garden-a", "b").seed("s").build());
        assert!(st.remove_shoot("garden-a/b").wake);
        assert_eq!(st.snapshot.usage().shoots_on("s"), 0);
    }

    #[test]
    fn a_relist_removes_what_was_deleted_while_the_watch_was_down() {
        let mut st = State::new(names());
        st.apply_shoot(&ShootBuilder::new("garden-a", "gone").seed("s").build());
        st.apply_shoot(&ShootBuilder::new("garden-a", "kept").build());
        st.apply_seed(&SeedBuilder::new("old").build());
        st.begin_relist(Kind::Shoot);
        st.apply_shoot(&ShootBuilder::new("garden-a", "kept").build());
        assert!(st.end_relist(Kind::Shoot).wake);
        assert_eq!(st.known_shoots(), 1);
        assert_eq!(st.snapshot.usage().shoots_on("s"), 0);
        st.begin_relist(Kind::Seed);
        st.end_relist(Kind::Seed);
        assert_eq!(st.snapshot.seeds().len(), 0);
    }

    #[test]
    fn unchanged_cloud_profiles_do_not_wake_but_new_ones_do() {
        let mut st = State::new(names());
        let mut cp = CloudProfile::default();
        cp.metadata.name = Some("aws".into());
        assert!(st.apply_cloud_profile(&cp).wake);
        cp.metadata.resource_version = Some("9".into());
        assert!(!st.apply_cloud_profile(&cp).wake);
        assert!(st.remove_other(Kind::CloudProfile, "aws").wake);
    }

    fn carbon(value: f64) -> ConfigMap {
        crate::fixtures::CarbonConfigMapBuilder::new("carbon-se")
            .points("SE", "2026-12-01T00:00:00Z", 60, 48, value)
            .build()
    }

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn a_changed_forecast_wakes_waiting_shoots_and_an_identical_resync_does_not() {
        let mut st = State::new(names());
        assert!(st.apply_carbon_config_map(&carbon(35.0)).wake);
        let mut resync = carbon(35.0);
        resync.metadata.resource_version = Some("7".into());
        assert!(!st.apply_carbon_config_map(&resync).wake);
        assert!(st.apply_carbon_config_map(&carbon(400.0)).wake);
        let sources: Vec<_> = st.snapshot.carbon_sources().for_location("SE").collect();
        assert_eq!(sources.len(), 1);
        let points = sources[0].data.forecasts("data").unwrap()["SE"].points();
        assert_eq!(points[0].value, 400.0);
    }

    #[test]
    fn a_deleted_forecast_keeps_counting_from_the_deletion_and_a_recreation_replaces_it() {
        let mut st = State::new(names());
        st.apply_carbon_config_map(&carbon(35.0));
        let c = st.remove_carbon_config_map("kube-system/carbon-se", t("2026-12-01T06:00:00Z"));
        assert!(c.wake);
        let s = st
            .snapshot
            .carbon_sources()
            .for_location("SE")
            .next()
            .unwrap();
        assert_eq!(s.removed_at, Some(t("2026-12-01T06:00:00Z")));
        assert!(
            st.apply_carbon_config_map(&carbon(35.0)).wake,
            "a recreated ConfigMap is news even with the same content"
        );
        let s = st
            .snapshot
            .carbon_sources()
            .for_location("SE")
            .next()
            .unwrap();
        assert_eq!(s.removed_at, None);
    }

    #[test]
    fn a_forecast_missing_from_a_relist_starts_its_grace_period_instead_of_vanishing() {
        let mut st = State::new(names());
        st.apply_carbon_config_map(&carbon(35.0));
        st.begin_relist(Kind::CarbonConfigMap);
        assert!(st.end_relist(Kind::CarbonConfigMap).wake);
        let s = st.snapshot.carbon_sources().for_location("SE").next();
        assert!(s.is_some_and(|s| s.removed_at.is_some()), "{s:?}");
    }

    #[test]
    fn carbon_and_region_configmaps_do_not_disturb_each_other() {
        let mut st = State::new(names());
        st.apply_carbon_config_map(&carbon(35.0));
        let mut region = ConfigMap::default();
        region.metadata.name = Some("regions".into());
        region.metadata.namespace = Some("garden".into());
        region.metadata.labels = Some(
            [(
                crate::api::LABEL_SCHEDULING_PURPOSE.to_string(),
                crate::api::PURPOSE_REGION_CONFIG.to_string(),
            )]
            .into(),
        );
        st.apply_config_map(&region);
        st.begin_relist(Kind::ConfigMap);
        st.end_relist(Kind::ConfigMap);
        let s = st.snapshot.carbon_sources().for_location("SE").next();
        assert!(
            s.is_some_and(|s| s.removed_at.is_none()),
            "a relist of region ConfigMaps leaves forecasts alone: {s:?}"
        );
    }
}
