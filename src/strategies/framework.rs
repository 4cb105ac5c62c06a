//! What the region strategies share, and nothing about which strategies exist (the choice is
//! `mod.rs`'s [`super::RegionStrategy`]). Strategy files import this module, never `mod.rs`.
//! A strategy is a set-level step, [`crate::predicates::SetStep`].

pub use crate::predicates::SetStep;
use crate::reason::Reason;

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
