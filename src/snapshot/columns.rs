//! Per-seed data in flat arrays, indexed by the seed's position in name order: what the
//! production decision reads for every seed without a map lookup or a string comparison.
//!
//! Rebuilt when a seed is added or removed (positions move), updated in place when a seed
//! changes, and its usage entries refreshed when a shoot changes, so a decision only indexes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rustc_hash::FxHashMap;

use kube::core::Selector;

use super::usage::{SeedUsage, Usage};
use super::{SeedInfo, selector_matches};
use bits::Bits;
pub use bits::{Mask, SeedBit};
use derived::Derived;
pub use derived::UsageColumn;
use index::Indexes;
pub use index::{Index, SeedIndex};

/// A per-seed column a plugin declares: what its `columns` method lists, so that the columns
/// can be built before a decision asks for them ([`SeedColumns::build_declared`]).
#[derive(Clone, Copy, Debug)]
pub enum Column {
    Bit(&'static SeedBit),
    Index(&'static SeedIndex),
}

/// A (provider type, region) pair that has seeds: the unit of everything that depends only on
/// where a seed is (latency, region distance).
#[derive(Clone, Debug)]
pub struct Group {
    pub provider: u32,
}

/// A partition of the seeds the columns keep: each seed's key, and each key's seeds.
#[derive(Clone, Copy, Debug)]
pub struct Partition<'c> {
    /// per seed position: its key
    key: &'c [u32],
    /// per key: the positions of its seeds, in order
    members: &'c [Vec<u32>],
}

impl<'c> Partition<'c> {
    /// The key of the seed at position `i`.
    #[inline]
    pub fn key(&self, i: u32) -> usize {
        self.key[i as usize] as usize
    }

    /// The positions of the seeds with `key`, in order.
    pub fn members(&self, key: usize) -> &'c [u32] {
        &self.members[key]
    }

    /// How many keys there are.
    pub fn keys(&self) -> usize {
        self.members.len()
    }
}

#[derive(Debug, Default)]
pub struct SeedColumns {
    infos: Vec<Arc<SeedInfo>>,
    position: FxHashMap<Arc<str>, u32>,
    providers: Vec<String>,
    /// per seed: its provider type's id in `providers`
    provider: Vec<u32>,
    groups: Vec<Group>,
    /// per seed: its group's id in `groups`
    group: Vec<u32>,
    /// per group: the positions of its seeds, in order
    members: Vec<Vec<u32>>,
    /// per region: the ids of its groups
    region_groups: FxHashMap<String, Vec<u32>>,
    /// per provider id: the positions of its seeds, in order
    by_provider: Vec<Vec<u32>>,
    /// per seed: `status.allocatable.shoots`, when published
    capacity: Vec<Option<u64>>,
    /// per resource any seed publishes: per seed, its `status.allocatable`
    allocatable: Vec<(String, Vec<Option<f64>>)>,
    /// per seed: what runs there
    usage: Vec<SeedUsage>,
    /// per seed: the bits plugins declared ([`SeedBit`]) and asked for so far
    bits: Bits,
    /// the indexes plugins declared ([`SeedIndex`]) and asked for so far
    indexes: Indexes,
    /// the numbers plugins derive from each seed's usage ([`UsageColumn`]) asked for so far
    derived: Mutex<Derived>,
    /// per label selector asked for lately (a CloudProfile's, a shoot's), the least recently
    /// asked first: per seed, whether it matches the seed's labels
    label_selectors: Mutex<Vec<(Selector, Arc<Vec<bool>>)>>,
}

/// How many label selectors' matches are kept (the most recently asked for).
const LABEL_SELECTORS: usize = 32;

impl Clone for SeedColumns {
    fn clone(&self) -> Self {
        Self {
            infos: self.infos.clone(),
            position: self.position.clone(),
            providers: self.providers.clone(),
            provider: self.provider.clone(),
            groups: self.groups.clone(),
            group: self.group.clone(),
            members: self.members.clone(),
            region_groups: self.region_groups.clone(),
            by_provider: self.by_provider.clone(),
            capacity: self.capacity.clone(),
            allocatable: self.allocatable.clone(),
            usage: self.usage.clone(),
            bits: self.bits.clone(),
            indexes: self.indexes.clone(),
            derived: Mutex::new(
                self.derived
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
            ),
            label_selectors: Mutex::new(
                self.label_selectors
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
            ),
        }
    }
}

impl SeedColumns {
    /// The columns of `seeds` (in name order) with their usage.
    pub(super) fn build<'a>(seeds: impl Iterator<Item = &'a Arc<SeedInfo>>, usage: &Usage) -> Self {
        let mut c = SeedColumns::default();
        let mut group_ids: HashMap<(u32, &str), u32> = HashMap::new();
        let infos: Vec<Arc<SeedInfo>> = seeds.cloned().collect();
        for (i, s) in infos.iter().enumerate() {
            let i = i as u32;
            let provider = match c.providers.iter().position(|p| *p == s.provider) {
                Some(p) => p as u32,
                None => {
                    c.providers.push(s.provider.clone());
                    c.by_provider.push(Vec::new());
                    (c.providers.len() - 1) as u32
                }
            };
            let group = *group_ids
                .entry((provider, s.region.as_str()))
                .or_insert_with(|| {
                    c.groups.push(Group { provider });
                    c.members.push(Vec::new());
                    let id = (c.groups.len() - 1) as u32;
                    c.region_groups
                        .entry(s.region.clone())
                        .or_default()
                        .push(id);
                    id
                });
            c.members[group as usize].push(i);
            c.by_provider[provider as usize].push(i);
            c.position.insert(Arc::clone(&s.name), i);
            c.provider.push(provider);
            c.group.push(group);
            c.capacity.push(s.allocatable_shoots());
            c.usage
                .push(usage.seed(&s.name).cloned().unwrap_or_default());
        }
        for (i, s) in infos.iter().enumerate() {
            for (resource, v) in &s.allocatable {
                let column = match c.allocatable.iter().position(|(r, _)| r == resource) {
                    Some(k) => k,
                    None => {
                        c.allocatable
                            .push((resource.clone(), vec![None; infos.len()]));
                        c.allocatable.len() - 1
                    }
                };
                c.allocatable[column].1[i] = Some(*v);
            }
        }
        c.bits = Bits::new(infos.len());
        c.infos = infos;
        c
    }

    /// Replaces a seed in place when its position, provider type, region, allocatable amounts and
    /// labels stay; `false` when the columns must be rebuilt.
    pub(super) fn replace(&mut self, info: &Arc<SeedInfo>) -> bool {
        let Some(&i) = self.position.get(&info.name) else {
            return false;
        };
        let old = &self.infos[i as usize];
        // What the columns hold themselves; the bits and indexes plugins declared are computed
        // again for the seed below, whatever changed.
        if old.provider != info.provider
            || old.region != info.region
            || old.allocatable != info.allocatable
            || old.labels != info.labels
        {
            return false;
        }
        self.capacity[i as usize] = info.allocatable_shoots();
        self.bits.recompute(i, info);
        self.indexes.recompute(i, info);
        self.infos[i as usize] = Arc::clone(info);
        true
    }

    /// Reads a seed's usage again after a shoot change.
    pub(super) fn refresh_usage(&mut self, seed: &str, usage: &Usage) {
        if let Some(&i) = self.position.get(seed) {
            let i = i as usize;
            self.usage[i] = usage.seed(seed).cloned().unwrap_or_default();
            self.derived
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .refresh(i, &self.usage[i]);
        }
    }

    /// The numbers `column` derives from each seed's usage (`seed * width + k`): derived for
    /// every seed the first time the column is asked for, then kept up to date as usage changes.
    pub fn derived<C: UsageColumn>(&self, column: C) -> Arc<Vec<f64>> {
        self.derived
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(column, &self.usage)
    }

    pub fn len(&self) -> usize {
        self.infos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    pub fn info(&self, i: u32) -> &SeedInfo {
        &self.infos[i as usize]
    }

    /// The position of a seed by name.
    pub fn position(&self, name: &str) -> Option<u32> {
        self.position.get(name).copied()
    }

    /// The id of a provider type, `None` when no seed has it.
    pub fn provider_id(&self, provider: &str) -> Option<u32> {
        self.providers
            .iter()
            .position(|p| p == provider)
            .map(|p| p as u32)
    }

    pub fn providers(&self) -> &[String] {
        &self.providers
    }

    pub fn provider(&self, i: u32) -> u32 {
        self.provider[i as usize]
    }

    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    pub fn group(&self, i: u32) -> u32 {
        self.group[i as usize]
    }

    /// The positions of a group's seeds, in order.
    pub fn members(&self, group: u32) -> &[u32] {
        &self.members[group as usize]
    }

    /// The group of the seeds of one provider type in one region, if it has seeds.
    pub fn group_in(&self, provider: &str, region: &str) -> Option<u32> {
        let provider = self.provider_id(provider)?;
        self.region_groups
            .get(region)?
            .iter()
            .copied()
            .find(|&g| self.groups[g as usize].provider == provider)
    }

    /// The positions of the seeds of one provider type (by id), in order.
    pub fn of_provider(&self, provider: u32) -> &[u32] {
        &self.by_provider[provider as usize]
    }

    /// The seeds by provider type ([`SeedColumns::providers`] gives each key's name).
    pub fn by_provider(&self) -> Partition<'_> {
        Partition {
            key: &self.provider,
            members: &self.by_provider,
        }
    }

    /// `status.allocatable.shoots`, when the seed publishes it.
    pub fn capacity(&self, i: u32) -> Option<u64> {
        self.capacity[i as usize]
    }

    /// Per seed, its allocatable amount of `resource`; `None` when no seed publishes it.
    pub fn allocatable(&self, resource: &str) -> Option<&[Option<f64>]> {
        self.allocatable
            .iter()
            .find(|(r, _)| r == resource)
            .map(|(_, column)| &column[..])
    }

    pub fn usage(&self, i: u32) -> &SeedUsage {
        &self.usage[i as usize]
    }

    pub fn shoots(&self, i: u32) -> u64 {
        self.usage[i as usize].shoots
    }

    /// The seed has room for one more shoot (no published capacity: always).
    pub fn has_room(&self, i: u32) -> bool {
        self.capacity(i).is_none_or(|c| self.shoots(i) < c)
    }

    /// The seed's declared bits ([`SeedColumns::bit`] gives each one's mask).
    #[inline]
    pub fn flags(&self, i: u32) -> Mask {
        self.bits.word(i)
    }

    /// The mask of a bit a plugin declares ([`SeedBit`]), computed for every seed the first
    /// time it is asked for and kept while the columns live; `None` when the columns keep as
    /// many distinct bits as they can ([`bits::SLOTS`]): the plugin then asks its seeds.
    pub fn bit(&self, bit: &'static SeedBit) -> Option<Mask> {
        self.bits.mask(bit, &self.infos)
    }

    /// Per seed, whether a label selector (a CloudProfile's, a shoot's) matches its labels:
    /// computed for every seed the first time the selector is asked for with `compute`, then read
    /// (shoots of one CloudProfile or project tend to share one); `None` when not kept and not to
    /// be computed. Kept while the columns are: a seed whose labels change rebuilds them.
    pub fn label_selector_matches(
        &self,
        selector: &Selector,
        compute: bool,
    ) -> Option<Arc<Vec<bool>>> {
        let mut known = self
            .label_selectors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = known.iter().position(|(s, _)| s == selector) {
            let entry = known.remove(k);
            let matches = Arc::clone(&entry.1);
            known.push(entry);
            return Some(matches);
        }
        if !compute {
            return None;
        }
        let matches: Arc<Vec<bool>> = Arc::new(
            self.infos
                .iter()
                .map(|s| selector_matches(Some(selector), &s.labels))
                .collect(),
        );
        if known.len() >= LABEL_SELECTORS {
            known.remove(0);
        }
        known.push((selector.clone(), Arc::clone(&matches)));
        Some(matches)
    }

    /// Builds the declared columns now (those already built are kept): with the landscape, so
    /// that the first decision that reads them does not.
    pub fn build_declared(&self, columns: &[Column]) {
        for c in columns {
            match c {
                Column::Bit(b) => {
                    self.bit(b);
                }
                Column::Index(i) => {
                    self.index(i);
                }
            }
        }
    }

    /// How many distinct bits and indexes have been built so far.
    pub fn declared_built(&self) -> (usize, usize) {
        (self.bits.taken(), self.indexes.taken())
    }

    /// An index a plugin declares ([`SeedIndex`]), built over every seed the first time it is
    /// asked for and kept while the columns live; `None` when the columns keep as many distinct
    /// indexes as they can ([`index::SLOTS`]): the plugin then asks its seeds.
    pub fn index(&self, of: &'static SeedIndex) -> Option<&Index> {
        self.indexes.get(of, &self.infos)
    }
}

/// A count of column builds (a snapshot's clone starts from the same count).
#[derive(Debug, Default)]
pub struct BuildCount(AtomicUsize);

impl BuildCount {
    pub(super) fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

impl Clone for BuildCount {
    fn clone(&self) -> Self {
        Self(AtomicUsize::new(self.get()))
    }
}

pub mod bits;
mod derived;
pub mod index;
mod slots;

#[cfg(test)]
mod tests;
