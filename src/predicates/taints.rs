use std::fmt;

use crate::context::ShootContext;
use crate::reason::{Declared, Reason};
use crate::snapshot::columns::flags;
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Taints";

/// Every seed taint must be tolerated, as upstream's `TaintsAreTolerated` decides: the shoot's
/// tolerations form a key -> value map (no value counts as the empty value; of two tolerations
/// with the same key the later one wins); a taint needs its key in the map and, when the taint
/// has a value, exactly that value. Taints have no effects.
pub struct Taints;

impl Predicate for Taints {
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
        // Upstream's shortcut: more taints than tolerations is never tolerated, even when the
        // taints repeat a key (a seed may carry `k` and `k=v`, or `k=a` and `k=b`).
        let too_many = seed.taints.len() > cx.toleration_count;
        let untolerated: Vec<String> = seed
            .taints
            .iter()
            .filter(|(key, value)| {
                too_many
                    || match cx.tolerations.get(key) {
                        None => true,
                        Some(tolerated) => value.as_ref().is_some_and(|v| v != tolerated),
                    }
            })
            .map(|(key, value)| match value {
                Some(v) => format!("{key}={v}"),
                None => key.clone(),
            })
            .collect();
        if untolerated.is_empty() {
            Ok(())
        } else {
            Err(Reason::new(Untolerated { untolerated }))
        }
    }

    fn passes(&self, cx: &ShootContext, _: &Prepared, seed: &SeedInfo, _: &Snapshot) -> bool {
        seed.taints.len() <= cx.toleration_count
            && seed.taints.iter().all(|(key, value)| {
                cx.tolerations
                    .get(key)
                    .is_some_and(|tolerated| value.as_ref().is_none_or(|v| v == tolerated))
            })
    }

    /// Untainted seeds pass whatever the tolerations.
    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        _: &Prepared,
        _: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        FastCheck::Flag(flags::NO_TAINTS)
    }
}

/// The seed carries taints the shoot does not tolerate.
#[derive(Debug)]
struct Untolerated {
    untolerated: Vec<String>,
}

impl Declared for Untolerated {
    fn name(&self) -> &'static str {
        "taints"
    }

    fn summary(&self) -> &'static str {
        "had taints that the shoot does not tolerate"
    }

    fn hint(&self) -> Option<String> {
        Some(format!(
            "add a toleration for {}",
            self.untolerated.join(", ")
        ))
    }
}

impl fmt::Display for Untolerated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "untolerated taint(s) {}", self.untolerated.join(", "))
    }
}

#[cfg(test)]
mod tests;
