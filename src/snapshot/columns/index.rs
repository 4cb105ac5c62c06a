//! Per-seed indexes that plugins declare in their own files ([`SeedIndex`]): from each key a
//! seed has (a zone, a default domain, a label key) to the positions of the seeds that have it.
//! As with the bits, the columns know no plugin: an index is built the first time a plugin asks
//! for it ([`SeedColumns::index`](super::SeedColumns::index)), kept while the columns live, and
//! mended for a seed that changes in place.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::slots::Slots;
use crate::snapshot::SeedInfo;

/// An index a plugin reads, declared as a `static` in the plugin's file (its address is its
/// identity).
pub struct SeedIndex {
    /// What the index maps, for tests and logs.
    pub name: &'static str,
    /// The keys of one seed.
    pub keys: fn(&SeedInfo) -> Vec<String>,
}

impl std::fmt::Debug for SeedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Seeds by key: the positions of the seeds with each key, in order.
#[derive(Clone, Debug, Default)]
pub struct Index(FxHashMap<String, Vec<u32>>);

impl Index {
    /// The positions of the seeds with `key`, in order (empty when none has it).
    pub fn seeds(&self, key: &str) -> &[u32] {
        self.0.get(key).map_or(&[], Vec::as_slice)
    }

    /// Per seed position (`seeds` in all), whether the seed has one of `keys`.
    pub fn mark<'k>(&self, seeds: usize, keys: impl IntoIterator<Item = &'k String>) -> Vec<bool> {
        let mut marked = vec![false; seeds];
        for k in keys {
            for &i in self.seeds(k) {
                marked[i as usize] = true;
            }
        }
        marked
    }

    fn build(of: &SeedIndex, infos: &[Arc<SeedInfo>]) -> Self {
        let mut index = Index::default();
        for (i, info) in infos.iter().enumerate() {
            index.add(i as u32, (of.keys)(info));
        }
        index
    }

    /// Adds a seed under its keys, keeping each key's positions in order.
    fn add(&mut self, i: u32, keys: Vec<String>) {
        for k in keys {
            let seeds = self.0.entry(k).or_default();
            if let Err(at) = seeds.binary_search(&i) {
                seeds.insert(at, i);
            }
        }
    }
}

/// How many distinct indexes the columns keep; a plugin asking for one more gets none and asks
/// its seeds one by one.
pub const SLOTS: usize = 8;

#[derive(Debug, Default)]
pub(super) struct Indexes {
    slots: Slots<SeedIndex, Index, SLOTS>,
}

impl Indexes {
    /// The index `of`, built over `infos` the first time it is asked; `None` when every slot
    /// is taken.
    pub(super) fn get(&self, of: &'static SeedIndex, infos: &[Arc<SeedInfo>]) -> Option<&Index> {
        let (_, index) = self.slots.get_or_add(of, |_| Index::build(of, infos))?;
        Some(index)
    }

    /// How many indexes are kept.
    pub(super) fn taken(&self) -> usize {
        self.slots.iter().count()
    }

    /// Files the seed at `i` under its keys again (it changed in place).
    pub(super) fn recompute(&mut self, i: u32, info: &SeedInfo) {
        for (of, index) in self.slots.iter_mut() {
            for seeds in index.0.values_mut() {
                seeds.retain(|&p| p != i);
            }
            index.add(i, (of.keys)(info));
        }
    }
}

impl Clone for Indexes {
    fn clone(&self) -> Self {
        Indexes {
            slots: self.slots.clone_with(|| ()).0,
        }
    }
}
