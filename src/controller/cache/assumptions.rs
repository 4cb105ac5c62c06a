//! Assumptions: placements decided and being (or just) bound, counted in usage until the watch
//! shows them, and the shoots a seed turned away for capacity while one counted there.

use std::sync::Arc;
use std::time::Duration;

use crate::api::{Shoot, object_key};
use crate::controller::cache::state::{Assumption, Cache, Change};
use crate::schedule::FitError;
use tokio::time::Instant;

/// How long a successful bind may stay unconfirmed by the watch before the shoot is read to
/// confirm it. Longer than any healthy watch lag; the assumption never simply expires (a stalled
/// watch is exactly when it would, and the seed would be overcommitted).
pub const UNCONFIRMED_BIND_CHECK: Duration = Duration::from_secs(30);

impl Cache {
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
        match self.shoots.get(key).and_then(|k| k.pending.clone()) {
            Some(p) => {
                self.snapshot.upsert_shoot(&p.shoot);
            }
            _ => self.snapshot.remove_shoot(key),
        }
        Change {
            enqueue: self.pending(key).is_some(),
            retry_waiting: false,
            requeue: self.take_refused(&a.seed, key),
            freed_on: Some(a.seed),
        }
    }

    /// Records that `key` did not fit: a seed that refused it for capacity while holding an
    /// assumed placement may have room once that placement is dropped.
    pub fn note_refused(&mut self, key: &str, fit: &FitError) {
        for seed in fit.full_seeds() {
            if self.assumed.values().any(|a| *a.seed == **seed) {
                let refused = self.refused_for.entry(seed.to_string()).or_default();
                if !refused.iter().any(|k| **k == *key) {
                    refused.push(key.into());
                }
            }
        }
    }

    /// The shoots `seed` refused while an assumed placement counted there, except `key`, first
    /// refused first; the record is handed over (see [`Cache::refused_again`]).
    pub(super) fn take_refused(&mut self, seed: &str, key: &str) -> Vec<Arc<str>> {
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
    pub(super) fn settle(&mut self, seed: &str) {
        if !self.assumed.values().any(|a| a.seed == seed) {
            self.refused_for.remove(seed);
        }
    }

    pub fn assumption(&self, key: &str) -> Option<&Assumption> {
        self.assumed.get(key)
    }

    /// Binds the watch has not confirmed for `UNCONFIRMED_BIND_CHECK`, with their seeds: the
    /// caller reads each shoot and applies what the read shows.
    pub fn unconfirmed(&self, now: Instant) -> Vec<(String, String)> {
        let mut keys: Vec<(String, String)> = self
            .assumed
            .iter()
            .filter(|(_, a)| {
                a.bound_at
                    .is_some_and(|t| now.duration_since(t) > UNCONFIRMED_BIND_CHECK)
            })
            .map(|(k, a)| (k.to_string(), a.seed.clone()))
            .collect();
        keys.sort();
        keys
    }
}
