use kube::core::Selector;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot, selector_matches};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "CloudProfileSelector";

/// The CloudProfile's `spec.seedSelector` label selector (none matches every seed).
pub struct CloudProfileSelector;

impl Predicate for CloudProfileSelector {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Every seed the selector does not match is rejected with the same reason: built once per
    /// decision.
    /// A selector that does not parse refuses the shoot, naming its CloudProfile.
    fn prepare(&self, cx: &ShootContext) -> Result<Prepared, FitError> {
        match &cx.cloud_profile.selector {
            Err(e) => Err(FitError::InvalidShoot {
                field: "spec.cloudProfile".into(),
                message: format!(
                    "{} has an invalid spec.seedSelector: {e}",
                    cx.cloud_profile.display
                ),
            }),
            Ok(Some(_)) => Ok(Prepared::new(Unmatched(unmatched(cx)))),
            Ok(None) => Ok(Prepared::default()),
        }
    }

    fn check(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        if selector_matches(selector(cx), &seed.labels) {
            Ok(())
        } else {
            why.reject(|| match state.get::<Unmatched>() {
                Some(Unmatched(reason)) => reason.clone(),
                None => unmatched(cx),
            })
        }
    }

    fn shared_reason(&self, _: &ShootContext, state: &Prepared) -> Option<Reason> {
        state
            .get::<Unmatched>()
            .map(|Unmatched(reason)| reason.clone())
    }

    /// Nothing to check without a selector; its matches over every seed are kept in the
    /// columns, computed by the first shoot of the CloudProfile and read by the next ones.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        let Some(selector) = selector(cx) else {
            return FastCheck::Skip;
        };
        match cols.label_selector_matches(selector, true) {
            Some(matches) => FastCheck::SharedBitmap(matches),
            None => FastCheck::Ask,
        }
    }
}

/// The CloudProfile's seed selector (one that does not parse refuses the shoot in `prepare`).
fn selector<'c>(cx: &'c ShootContext) -> Option<&'c Selector> {
    cx.cloud_profile.selector.as_ref().ok()?.as_ref()
}

/// What `prepare` keeps: the reason of a seed the selector does not match.
struct Unmatched(Reason);

fn unmatched(cx: &ShootContext) -> Reason {
    Reason::new(ProfileUnmatched {
        cloud_profile: cx.cloud_profile.display.clone(),
    })
}

/// The seed's labels do not match the CloudProfile's seed selector.
#[derive(Debug)]
struct ProfileUnmatched {
    cloud_profile: String,
}

declared!(ProfileUnmatched {
    name: "cloudProfileSelector",
    summary: "did not match the CloudProfile's seed selector",
    message(self, f): write!(
        f,
        "labels do not match the seed selector of CloudProfile {:?}",
        self.cloud_profile
    ),
});

#[cfg(test)]
mod tests;
