use std::sync::LazyLock;

use crate::context::ShootContext;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedBit};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "EmergencyStop";

/// Seeds annotated `shoot.gardener.cloud/emergency-stop-reconciliations: "true"` take no shoots.
pub struct EmergencyStop;

impl Predicate for EmergencyStop {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&NOT_STOPPED)];
        COLUMNS
    }

    fn check(
        &self,
        _: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        if (NOT_STOPPED.of)(seed) {
            Ok(())
        } else {
            why.reject(|| STOPPED.clone())
        }
    }

    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        FastCheck::flag_only(cols, &NOT_STOPPED)
    }
}

/// The seed is not stopped: the filter's verdict for every seed.
static NOT_STOPPED: SeedBit = SeedBit {
    name: "noEmergencyStop",
    of: |seed| !seed.emergency_stop,
};

/// The reason this filter rejects a seed with, shared by every seed it rejects.
static STOPPED: LazyLock<Reason> = LazyLock::new(|| Reason::new(Stopped));

#[derive(Debug)]
struct Stopped;

declared!(Stopped {
    name: "emergencyStop",
    summary: "have reconciliations stopped",
    message(self, f): f.write_str("seed has emergency-stop-reconciliations set"),
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ANNOTATION_EMERGENCY_STOP;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    #[test]
    fn emergency_stop_table() {
        let shoot = ShootBuilder::new("garden-a", "s").build();
        let cases = [
            ("annotation true stops scheduling", Some("true"), false),
            ("annotation false is ignored", Some("false"), true),
            ("no annotation", None, true),
        ];
        for (name, value, ok) in cases {
            let mut seed = SeedBuilder::new("s1");
            if let Some(v) = value {
                seed = seed.annotation(ANNOTATION_EMERGENCY_STOP, v);
            }
            let got = run(&EmergencyStop, &shoot, &seed.build(), &[], &[]);
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }
}
