//! What the region strategies share, and nothing about which strategies exist (the registry is
//! `mod.rs`). Strategy files import this module, never `mod.rs`. A strategy is a set-level
//! step, [`crate::predicates::SetStep`], that also names its candidates
//! ([`SetStep::candidates`]).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::outcome::FitError;
pub use crate::predicates::{Candidates, SetStep};
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedColumns, SeedGroup};

/// What a strategy's [`SetStep::narrow`] answers: for each seed, the reason it is dropped, or
/// `None` when it is kept.
pub type Narrowed = Result<Vec<Option<Reason>>, FitError>;

/// Keeps the seeds whose key is minimal; the others get `reject(their key, the minimum)`.
pub fn keep_minimal<K: Ord + Copy>(
    keys: &[Option<K>],
    mut reject: impl FnMut(Option<K>, K) -> Reason,
) -> Vec<Option<Reason>> {
    let Some(min) = keys.iter().flatten().min().copied() else {
        return keys.iter().map(|_| None).collect();
    };
    keys.iter()
        .map(|k| match k {
            Some(k) if *k == min => None,
            other => Some(reject(*other, min)),
        })
        .collect()
}

/// Groups with their keys -> tiers of seed positions, lowest key first, groups of one key
/// together.
pub fn tiers<'a, K: Ord>(
    cols: &SeedColumns,
    groups: impl Iterator<Item = (K, &'a SeedGroup)>,
) -> Vec<Vec<u32>> {
    let mut by_key: BTreeMap<K, Vec<_>> = BTreeMap::new();
    for (key, group) in groups {
        by_key.entry(key).or_default().push(group);
    }
    by_key
        .into_values()
        .map(|groups| positions(cols, groups.into_iter()))
        .collect()
}

/// The positions of the seeds of some groups, in order: each group's seeds read from the
/// columns by the group of its first seed.
fn positions<'a>(cols: &SeedColumns, groups: impl Iterator<Item = &'a SeedGroup>) -> Vec<u32> {
    let mut positions: Vec<u32> = groups
        .filter_map(|g| g.keys().next().and_then(|name| cols.position(name)))
        .flat_map(|first| cols.members(cols.group(first)).iter().copied())
        .collect();
    positions.sort_unstable();
    positions
}

/// The reason a strategy drops a seed of another provider type with (a `purpose: testing`
/// shoot's rule, and the strategies that compare regions of one provider), shared.
pub fn other_provider() -> Reason {
    static OTHER: LazyLock<Reason> = LazyLock::new(|| Reason::new(OtherProvider));
    OTHER.clone()
}

#[derive(Debug)]
struct OtherProvider;

declared!(OtherProvider {
    name: "otherProvider",
    summary: "have another provider type",
    message(self, f): f.write_str("testing shoots need a seed of their own provider"),
});
