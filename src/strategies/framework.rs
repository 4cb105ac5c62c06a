//! What the region strategies share, and nothing about which strategies exist (the choice is
//! `mod.rs`'s [`super::RegionStrategy`]). Strategy files import this module, never `mod.rs`.
//! A strategy is a set-level step, [`crate::predicates::SetStep`].

use std::fmt;
use std::sync::LazyLock;

pub use crate::predicates::SetStep;
use crate::reason::{Declared, Reason};

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

/// The reason a strategy drops a seed of another provider type with (a `purpose: testing`
/// shoot's rule, and the strategies that compare regions of one provider), shared.
pub fn other_provider() -> Reason {
    static OTHER: LazyLock<Reason> = LazyLock::new(|| Reason::new(OtherProvider));
    OTHER.clone()
}

#[derive(Debug)]
struct OtherProvider;

impl Declared for OtherProvider {
    fn name(&self) -> &'static str {
        "otherProvider"
    }

    fn summary(&self) -> &'static str {
        "have another provider type"
    }
}

impl fmt::Display for OtherProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("testing shoots need a seed of their own provider")
    }
}
