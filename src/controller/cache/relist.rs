//! Relists: a watch that (re)starts lists every object again; what it does not list was deleted
//! while the watch was down.
//!
//! Each cached object carries the number of the last list of its kind that brought it (its
//! mark). A (re)list takes a new number and marks what it brings; at its end, what still carries
//! an older number was not listed again. A relist of 100,000 shoots thus costs no memory beyond
//! the number each object already holds, instead of a set of every key listed so far. A list
//! interrupted and started again takes yet another number: what only the interrupted one
//! brought counts as not listed.

use crate::controller::cache::kind::WatchedKind;
use crate::controller::cache::state::{Cache, Change};

impl Cache {
    /// The watch of `kind` starts a (re)list.
    pub fn begin_relist(&mut self, kind: WatchedKind) {
        self.lists.begin(kind);
    }

    /// Counts `key` as listed in a running (re)list, even when it could not be decoded: the
    /// object exists, so what the cache knows of it stays.
    pub fn mark_seen(&mut self, kind: WatchedKind, key: &str) {
        let mark = self.lists.mark(kind);
        match kind {
            WatchedKind::Shoot => {
                if let Some(known) = self.shoots.get_mut(key) {
                    known.listed = mark;
                }
            }
            WatchedKind::Seed => {
                if let Some(listed) = self.seeds_listed.get_mut(key) {
                    *listed = mark;
                }
            }
            other => {
                if let Some(f) = self.fingerprints.get_mut(&(other, key.to_string())) {
                    f.listed = mark;
                }
            }
        }
    }

    /// The (re)list of `kind` is complete: objects not listed were deleted meanwhile.
    pub fn end_relist(&mut self, kind: WatchedKind) -> Change {
        let Some(mark) = self.lists.end(kind) else {
            return Change::default();
        };
        let gone: Vec<String> = match kind {
            WatchedKind::Shoot => self
                .shoots
                .iter()
                .filter(|(_, known)| known.listed != mark)
                .map(|(k, _)| k.to_string())
                .collect(),
            WatchedKind::Seed => self
                .snapshot
                .seeds()
                .filter(|s| self.seeds_listed.get(&*s.name) != Some(&mark))
                .map(|s| s.name.to_string())
                .collect(),
            _ => self
                .fingerprints
                .iter()
                .filter(|((k, _), f)| *k == kind && f.listed != mark)
                .map(|((_, key), _)| key.clone())
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
