use std::fmt;
use std::sync::LazyLock;

use crate::context::ShootContext;
use crate::reason::{Declared, Reason};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, selector_matches};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ShootSelector";

/// The shoot's `spec.seedSelector` label selector. Its `providerTypes` is ignored, as upstream.
pub struct ShootSelector;

impl Predicate for ShootSelector {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        if selector_matches(cx.shoot_selector.as_ref(), &seed.labels) {
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
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        every_seed: bool,
    ) -> FastCheck<'c> {
        match &cx.shoot_selector {
            None => FastCheck::Skip,
            Some(selector) => match cols.shoot_selector_matches(selector, every_seed) {
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

impl Declared for Unmatched {
    fn name(&self) -> &'static str {
        "shootSelector"
    }

    fn summary(&self) -> &'static str {
        "did not match the shoot's seed selector"
    }

    fn hint(&self) -> Option<String> {
        Some("relax spec.seedSelector".into())
    }
}

impl fmt::Display for Unmatched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("labels do not match spec.seedSelector")
    }
}

#[cfg(test)]
mod tests;
