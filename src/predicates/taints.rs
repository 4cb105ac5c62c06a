use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedBit};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Taints";

/// Every seed taint must be tolerated, as upstream's `TaintsAreTolerated` decides: the shoot's
/// tolerations form a key -> value map (no value counts as the empty value; of two tolerations
/// with the same key the later one wins); a taint needs its key in the map and, when the taint
/// has a value, exactly that value. Taints have no effects.
pub struct Taints;

/// `spec.tolerations` as upstream reads them (what `prepare` keeps).
#[derive(Clone, Default)]
struct Tolerations {
    /// key -> value, a toleration without a value counting as the empty value, and of two
    /// tolerations with one key the later one winning
    by_key: BTreeMap<String, String>,
    /// The number of entries, duplicates included: upstream rejects a seed with more taints
    /// than the shoot has tolerations before looking at keys.
    count: usize,
}

impl Tolerations {
    /// Kept by `prepare`, or read again when a caller asks one seed without preparing (cheap
    /// for a shoot without tolerations, which `prepare` keeps nothing for).
    fn of<'s>(cx: &ShootContext, state: &'s Prepared) -> Cow<'s, Tolerations> {
        match state.get::<Tolerations>() {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(Tolerations::read(cx)),
        }
    }

    fn read(cx: &ShootContext) -> Self {
        let tolerations = &cx.shoot.spec.tolerations;
        Tolerations {
            by_key: tolerations
                .iter()
                .map(|t| (t.key.clone(), t.value.clone().unwrap_or_default()))
                .collect(),
            count: tolerations.len(),
        }
    }
}

impl Predicate for Taints {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&UNTAINTED)];
        COLUMNS
    }

    fn prepare(&self, cx: &ShootContext) -> Result<Prepared, FitError> {
        Ok(if cx.shoot.spec.tolerations.is_empty() {
            Prepared::default()
        } else {
            Prepared::new(Tolerations::read(cx))
        })
    }

    fn check(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        let tolerations = Tolerations::of(cx, state);
        let tolerated = |(key, value): &(String, Option<String>)| {
            tolerations
                .by_key
                .get(key)
                .is_some_and(|tolerated| value.as_ref().is_none_or(|v| v == tolerated))
        };
        // Upstream's shortcut: more taints than tolerations is never tolerated, even when the
        // taints repeat a key (a seed may carry `k` and `k=v`, or `k=a` and `k=b`).
        let too_many = seed.taints.len() > tolerations.count;
        if !too_many && seed.taints.iter().all(tolerated) {
            return Ok(());
        }
        why.reject(|| {
            let untolerated = seed
                .taints
                .iter()
                .filter(|taint| too_many || !tolerated(taint))
                .map(|(key, value)| match value {
                    Some(v) => format!("{key}={v}"),
                    None => key.clone(),
                })
                .collect();
            Reason::new(Untolerated { untolerated })
        })
    }

    /// Untainted seeds pass whatever the tolerations; without tolerations they alone pass.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        if cx.shoot.spec.tolerations.is_empty() {
            FastCheck::flag_only(cols, &UNTAINTED)
        } else {
            FastCheck::flag(cols, &UNTAINTED)
        }
    }
}

/// The seed has no taints, so every shoot tolerates it; the others are asked.
static UNTAINTED: SeedBit = SeedBit {
    name: "noTaints",
    of: |seed| seed.taints.is_empty(),
};

/// The seed carries taints the shoot does not tolerate.
#[derive(Debug)]
struct Untolerated {
    untolerated: Vec<String>,
}

declared!(Untolerated {
    name: "taints",
    summary: "had taints that the shoot does not tolerate",
    hint(self): Some(format!(
        "add a toleration for {}",
        self.untolerated.join(", ")
    )),
    message(self, f): write!(f, "untolerated taint(s) {}", self.untolerated.join(", ")),
});

#[cfg(test)]
mod tests;
