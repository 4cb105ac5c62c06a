use std::sync::LazyLock;

use kube::core::Selector;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, compile_selector, selector_matches};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ShootSelector";

/// The shoot's `spec.seedSelector` label selector. Its `providerTypes` is ignored, as upstream.
pub struct ShootSelector;

impl Predicate for ShootSelector {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The selector parsed once per decision; one that does not parse refuses the shoot.
    fn prepare(&self, cx: &ShootContext) -> Result<Prepared, FitError> {
        let Some(s) = &cx.shoot.spec.seed_selector else {
            return Ok(Prepared::default());
        };
        let selector =
            compile_selector(&s.label_selector).map_err(|message| FitError::InvalidShoot {
                field: "spec.seedSelector".into(),
                message,
            })?;
        Ok(Prepared::new(selector))
    }

    fn check(
        &self,
        _: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        if selector_matches(state.get::<Selector>(), &seed.labels) {
            Ok(())
        } else {
            why.reject(|| UNMATCHED.clone())
        }
    }

    /// Nothing to check without a selector; its matches over every seed are kept in the
    /// columns, computed when the decision evaluates every seed anyway and read by the next
    /// shoot with the same selector.
    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        state: &Prepared,
        cols: &'c SeedColumns,
        every_seed: bool,
    ) -> FastCheck<'c> {
        match state.get::<Selector>() {
            None => FastCheck::Skip,
            Some(selector) => match cols.label_selector_matches(selector, every_seed) {
                Some(matches) => FastCheck::SharedBitmap(matches),
                None => FastCheck::Ask,
            },
        }
    }
}

/// The reason this filter rejects a seed with, shared by every seed it rejects.
static UNMATCHED: LazyLock<Reason> = LazyLock::new(|| Reason::new(Unmatched));

#[derive(Debug)]
struct Unmatched;

declared!(Unmatched {
    name: "shootSelector",
    summary: "did not match the shoot's seed selector",
    hint(self): Some("relax spec.seedSelector".into()),
    message(self, f): f.write_str("labels do not match spec.seedSelector"),
});

#[cfg(test)]
mod tests;
