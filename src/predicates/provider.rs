use std::sync::Arc;

use crate::context::ShootContext;
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Provider";

/// With P = the CloudProfile's `seedSelector.providerTypes`: if P is empty the seed's provider
/// type must equal the shoot's; otherwise P must contain `*` or the seed's type.
pub struct Provider;

impl Predicate for Provider {
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
        let allowed = &cx.cloud_profile.provider_types;
        if allows(cx, &seed.provider) {
            Ok(())
        } else {
            why.reject(|| {
                Reason::new(NotAllowed {
                    seed: seed.provider.as_str().into(),
                    allowed: if allowed.is_empty() {
                        Arc::from([cx.provider.clone()])
                    } else {
                        allowed.as_slice().into()
                    },
                })
            })
        }
    }

    /// The verdict and the reason depend on the seed's provider type alone.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        FastCheck::Keyed {
            keys: cols.by_provider(),
            allowed: cols.providers().iter().map(|p| allows(cx, p)).collect(),
        }
    }
}

/// Whether the shoot's CloudProfile allows seeds of provider type `seed`.
fn allows(cx: &ShootContext, seed: &str) -> bool {
    let allowed = &cx.cloud_profile.provider_types;
    if allowed.is_empty() {
        seed == cx.provider
    } else {
        allowed.iter().any(|p| p == "*" || p == seed)
    }
}

/// The seed's provider type is not among those the CloudProfile allows.
#[derive(Debug)]
struct NotAllowed {
    seed: Arc<str>,
    allowed: Arc<[String]>,
}

declared!(NotAllowed {
    name: "provider",
    summary: "have a provider the CloudProfile does not allow",
    message(self, f): write!(
        f,
        "provider type {:?} is not in [{}]",
        self.seed,
        self.allowed.join(", ")
    ),
});

#[cfg(test)]
mod tests;
