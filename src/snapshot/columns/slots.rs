//! Slots filled once each, in order, by what a plugin declares (a `static`, known by its
//! address): the store behind the declared bits and indexes. Reads only load the slots; adding
//! one is serialised, so that what a new slot describes is complete before the slot is seen.

use std::sync::{Mutex, OnceLock, PoisonError};

#[derive(Debug)]
pub(super) struct Slots<K: 'static, V, const N: usize> {
    slots: [OnceLock<(&'static K, V)>; N],
    adding: Mutex<()>,
}

impl<K, V, const N: usize> Default for Slots<K, V, N> {
    fn default() -> Self {
        Slots {
            slots: std::array::from_fn(|_| OnceLock::new()),
            adding: Mutex::new(()),
        }
    }
}

impl<K, V, const N: usize> Slots<K, V, N> {
    /// The slot of `key`: `Ok` with its position and value, or `Err` with the first free
    /// position (`N` when every slot is taken).
    fn find(&self, key: &'static K) -> Result<(usize, &V), usize> {
        for (k, slot) in self.slots.iter().enumerate() {
            match slot.get() {
                Some((d, v)) if std::ptr::eq(*d, key) => return Ok((k, v)),
                Some(_) => {}
                None => return Err(k),
            }
        }
        Err(N)
    }

    /// The slot of `key`, filled with `make(position)` the first time it is asked; `None` when
    /// every slot is taken. `make` runs alone, before the slot is seen.
    pub(super) fn get_or_add(
        &self,
        key: &'static K,
        make: impl FnOnce(usize) -> V,
    ) -> Option<(usize, &V)> {
        if let Ok(found) = self.find(key) {
            return Some(found);
        }
        let _adding = self.adding.lock().unwrap_or_else(PoisonError::into_inner);
        match self.find(key) {
            Ok(found) => Some(found),
            Err(k) if k == N => None,
            Err(k) => Some((k, &self.slots[k].get_or_init(|| (key, make(k))).1)),
        }
    }

    /// The filled slots, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &(&'static K, V)> {
        self.slots.iter().map_while(OnceLock::get)
    }

    /// The filled slots, in order, to change their values.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut (&'static K, V)> {
        self.slots.iter_mut().map_while(OnceLock::get_mut)
    }

    /// A copy made while no slot is being added, with `also` (what the slots describe) read at
    /// the same moment.
    pub(super) fn clone_with<R>(&self, also: impl FnOnce() -> R) -> (Self, R)
    where
        V: Clone,
    {
        let _adding = self.adding.lock().unwrap_or_else(PoisonError::into_inner);
        let copy = Slots {
            slots: self.slots.clone(),
            adding: Mutex::new(()),
        };
        (copy, also())
    }
}
