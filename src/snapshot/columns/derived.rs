//! Per-seed numbers a plugin derives from each seed's usage (what runs there), declared in the
//! plugin's own file ([`UsageColumn`]): derived for every seed the first time a decision asks
//! for them, then kept up to date as usage changes.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::snapshot::SeedUsage;

/// Numbers a plugin derives from a seed's usage, [`UsageColumn::width`] of them per seed, kept
/// by the columns seed by seed (`seed * width + k`, [`super::SeedColumns::derived`]).
pub trait UsageColumn: fmt::Debug + Send + Sync + 'static {
    /// How many numbers per seed.
    fn width(&self) -> usize;

    /// The seed's numbers from its usage, into `out` (`width` long); `false` when they cannot
    /// be derived (a kind of usage the column does not know): the column is then dropped and
    /// derived again for every seed when next asked for.
    fn derive(&self, usage: &SeedUsage, out: &mut [f64]) -> bool;

    /// Whether `other` is the same column (its numbers are then reused).
    fn same(&self, other: &dyn Any) -> bool;
}

/// How many derived columns are kept, the least recently added dropped first (one per plugin
/// configuration in use).
const KEPT: usize = 8;

/// The derived columns asked for so far, with their numbers.
#[derive(Clone, Debug, Default)]
pub(super) struct Derived {
    columns: Vec<Kept>,
}

/// A derived column and its numbers, shared with the decisions that read them.
#[derive(Clone, Debug)]
struct Kept {
    column: Arc<dyn UsageColumn>,
    numbers: Arc<Vec<f64>>,
}

impl Derived {
    /// The numbers of `column`, derived now from `usage` (per seed) when not kept yet.
    pub(super) fn get<C: UsageColumn>(&mut self, column: C, usage: &[SeedUsage]) -> Arc<Vec<f64>> {
        if let Some(kept) = self.columns.iter().find(|k| k.column.same(&column)) {
            return Arc::clone(&kept.numbers);
        }
        let width = column.width();
        let mut numbers = vec![0.0; usage.len() * width];
        let mut derived = true;
        if width > 0 {
            for (seed, out) in usage.iter().zip(numbers.chunks_mut(width)) {
                derived &= column.derive(seed, out);
            }
        }
        let numbers = Arc::new(numbers);
        if !derived {
            // Not kept, as a column that fails on a refresh is dropped: asked again, it is
            // derived again.
            return numbers;
        }
        if self.columns.len() >= KEPT {
            self.columns.remove(0);
        }
        self.columns.push(Kept {
            column: Arc::new(column),
            numbers: Arc::clone(&numbers),
        });
        numbers
    }

    /// Derives the numbers of seed `i` again from its new usage.
    pub(super) fn refresh(&mut self, i: usize, usage: &SeedUsage) {
        self.columns.retain_mut(|kept| {
            let width = kept.column.width();
            let numbers = Arc::make_mut(&mut kept.numbers);
            kept.column
                .derive(usage, &mut numbers[i * width..(i + 1) * width])
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::snapshot::Snapshot;

    /// Each seed's shoots times a factor.
    #[derive(Debug)]
    struct Shoots(f64);

    impl UsageColumn for Shoots {
        fn width(&self) -> usize {
            1
        }

        fn derive(&self, usage: &SeedUsage, out: &mut [f64]) -> bool {
            out[0] = usage.shoots as f64 * self.0;
            true
        }

        fn same(&self, other: &dyn Any) -> bool {
            other.downcast_ref::<Self>().is_some_and(|o| o.0 == self.0)
        }
    }

    #[test]
    fn a_derived_column_is_kept_per_declaration_and_follows_the_usage() {
        let mut snap = Snapshot::new();
        for name in ["a", "b"] {
            snap.upsert_seed(&SeedBuilder::new(name).build());
        }
        snap.upsert_shoot(&ShootBuilder::new("garden-p", "one").seed("a").build());
        let before = snap.columns().derived(Shoots(2.0));
        assert_eq!(*before, [2.0, 0.0]);
        assert!(Arc::ptr_eq(&before, &snap.columns().derived(Shoots(2.0))));
        assert_eq!(*snap.columns().derived(Shoots(10.0)), [10.0, 0.0]);

        snap.upsert_shoot(&ShootBuilder::new("garden-p", "two").seed("b").build());
        assert_eq!(*snap.columns().derived(Shoots(2.0)), [2.0, 2.0]);
        assert_eq!(*snap.columns().derived(Shoots(10.0)), [10.0, 10.0]);
        assert_eq!(
            *before,
            [2.0, 0.0],
            "a decision's numbers stay as they were read"
        );
    }

    /// Fails for every seed with shoots.
    #[derive(Debug)]
    struct Empty;

    impl UsageColumn for Empty {
        fn width(&self) -> usize {
            1
        }

        fn derive(&self, usage: &SeedUsage, out: &mut [f64]) -> bool {
            out[0] = 0.0;
            usage.shoots == 0
        }

        fn same(&self, other: &dyn Any) -> bool {
            other.is::<Self>()
        }
    }

    #[test]
    fn a_column_that_cannot_be_derived_for_a_seed_is_not_kept() {
        let mut snap = Snapshot::new();
        snap.upsert_seed(&SeedBuilder::new("a").build());
        let empty = snap.columns().derived(Empty);
        assert!(Arc::ptr_eq(&empty, &snap.columns().derived(Empty)));
        snap.upsert_shoot(&ShootBuilder::new("garden-p", "one").seed("a").build());
        let first = snap.columns().derived(Empty);
        assert!(!Arc::ptr_eq(&first, &snap.columns().derived(Empty)));
    }
}
