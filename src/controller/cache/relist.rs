//! Relists: a watch that (re)starts lists every object again; what it does not list was deleted
//! while the watch was down.

use std::collections::HashSet;

use super::{Cache, Change, WatchedKind};

impl Cache {
    /// The watch of `kind` starts a (re)list.
    pub fn begin_relist(&mut self, kind: WatchedKind) {
        self.relisting.insert(kind, HashSet::new());
    }

    /// Counts `key` as listed in a running (re)list, even when it could not be decoded.
    pub fn mark_seen(&mut self, kind: WatchedKind, key: &str) {
        if let Some(seen) = self.relisting.get_mut(&kind) {
            seen.insert(key.to_string());
        }
    }

    /// The (re)list of `kind` is complete: objects not listed were deleted meanwhile.
    pub fn end_relist(&mut self, kind: WatchedKind) -> Change {
        let Some(seen) = self.relisting.remove(&kind) else {
            return Change::default();
        };
        let gone: Vec<String> = match kind {
            WatchedKind::Shoot => self
                .shoots
                .keys()
                .filter(|k| !seen.contains(&***k))
                .map(|k| k.to_string())
                .collect(),
            WatchedKind::Seed => self
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
                WatchedKind::Shoot => self.remove_shoot(&key),
                WatchedKind::Seed => self.remove_seed(&key),
                other => self.remove_other(other, &key),
            };
            change.retry_waiting |= c.retry_waiting;
        }
        change
    }
}
