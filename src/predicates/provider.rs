use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Provider";

/// With P = the CloudProfile's `seedSelector.providerTypes`: if P is empty the seed's provider
/// type must equal the shoot's; otherwise P must contain `*` or the seed's type.
pub struct Provider;

impl Predicate for Provider {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
    ) -> Result<(), Reason> {
        let allowed = &cx.cloud_profile.provider_types;
        let ok = if allowed.is_empty() {
            seed.provider == cx.provider
        } else {
            allowed.iter().any(|p| p == "*" || *p == seed.provider)
        };
        if ok {
            Ok(())
        } else {
            Err(Reason::Provider {
                seed: seed.provider.clone(),
                allowed: if allowed.is_empty() {
                    vec![cx.provider.clone()]
                } else {
                    allowed.clone()
                },
            })
        }
    }
}

#[cfg(test)]
mod tests;
