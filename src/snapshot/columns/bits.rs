//! Per-seed bits that plugins declare in their own files ([`SeedBit`]), kept in one word per
//! seed so that a decision reads every plugin's bits of a seed at once. The columns know no
//! plugin: a bit is computed for every seed the first time a plugin asks for it
//! ([`SeedColumns::bit`](super::SeedColumns::bit)), kept while the columns live, and computed
//! again for a seed that changes in place; columns built anew start empty.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::slots::Slots;

use crate::snapshot::SeedInfo;

/// A property of a seed a plugin reads for every seed of a decision, declared as a `static` in
/// the plugin's file (its address is its identity).
pub struct SeedBit {
    /// What the bit says, for tests and logs.
    pub name: &'static str,
    /// The bit of one seed; a plugin's seed-by-seed answer may call it too, so that both
    /// answers come from one function.
    pub of: fn(&SeedInfo) -> bool,
}

/// The mask of a declared bit in a seed's word ([`SeedColumns::flags`](super::SeedColumns::flags)).
pub type Mask = u32;

/// How many distinct bits the columns keep; a plugin asking for one more gets none and asks
/// its seeds one by one.
pub const SLOTS: usize = Mask::BITS as usize;

#[derive(Debug, Default)]
pub(super) struct Bits {
    /// The bits asked for so far, by position.
    slots: Slots<SeedBit, (), SLOTS>,
    /// per seed: its declared bits
    words: Vec<AtomicU32>,
}

impl std::fmt::Debug for SeedBit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Bits {
    pub(super) fn new(seeds: usize) -> Self {
        Bits {
            slots: Slots::default(),
            words: (0..seeds).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// The seed's word.
    #[inline]
    pub(super) fn word(&self, i: u32) -> Mask {
        self.words[i as usize].load(Ordering::Relaxed)
    }

    /// The mask of `bit`, computed for every seed of `infos` the first time it is asked;
    /// `None` when every slot is taken.
    pub(super) fn mask(&self, bit: &'static SeedBit, infos: &[Arc<SeedInfo>]) -> Option<Mask> {
        let (k, ()) = self.slots.get_or_add(bit, |k| {
            for (word, info) in self.words.iter().zip(infos) {
                if (bit.of)(info) {
                    word.fetch_or(1 << k, Ordering::Relaxed);
                }
            }
        })?;
        Some(1 << k)
    }

    /// How many bits are kept.
    pub(super) fn taken(&self) -> usize {
        self.slots.iter().count()
    }

    /// Computes the seed's bits again (it changed in place).
    pub(super) fn recompute(&mut self, i: u32, info: &SeedInfo) {
        let mut w = 0;
        for (k, (bit, ())) in self.slots.iter().enumerate() {
            if (bit.of)(info) {
                w |= 1 << k;
            }
        }
        *self.words[i as usize].get_mut() = w;
    }
}

impl Clone for Bits {
    fn clone(&self) -> Self {
        // The words read with the slots: a bit being added is in both or in neither.
        let (slots, words) = self.slots.clone_with(|| {
            self.words
                .iter()
                .map(|w| AtomicU32::new(w.load(Ordering::Relaxed)))
                .collect()
        });
        Bits { slots, words }
    }
}
