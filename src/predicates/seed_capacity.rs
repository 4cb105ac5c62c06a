use crate::context::ShootContext;
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "SeedCapacity";

/// A seed publishing `status.allocatable.shoots` takes a shoot only while usage is below it, read
/// as upstream reads it (`Quantity.Value()`: `1500m` is 2, a negative value is full).
pub struct SeedCapacity;

impl Predicate for SeedCapacity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(
        &self,
        _: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        snap: &Snapshot,
        why: Why,
    ) -> Verdict {
        let Some(allocatable) = seed.allocatable_shoots() else {
            return Ok(());
        };
        let used = snap.usage().shoots_on(&seed.name);
        if used < allocatable {
            Ok(())
        } else {
            why.reject(|| Reason::new(Full { used, allocatable }))
        }
    }

    /// The columns keep each seed's capacity and usage.
    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        _: &Prepared,
        _: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        FastCheck::Read(SeedColumns::has_room)
    }
}

/// The seed has as many shoots as it allows.
#[derive(Debug)]
struct Full {
    used: u64,
    allocatable: u64,
}

declared!(Full {
    name: "capacity",
    summary: "have no capacity left",
    hint(self): Some("raise status.allocatable.shoots or add a seed".into()),
    lacks_room: true,
    message(self, f): write!(f, "{}/{} shoots allocated", self.used, self.allocatable),
});

#[cfg(test)]
mod tests;
