use std::sync::Arc;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedIndex};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "AccessRestrictions";

/// Every access restriction the shoot requests must be offered by the seed, as upstream's
/// `AccessRestrictionsAreSupported` decides, including its shortcut: a shoot listing more
/// restrictions than the seed (repeats counted) is not supported.
pub struct AccessRestrictions;

impl Predicate for AccessRestrictions {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Index(&BY_RESTRICTION)];
        COLUMNS
    }

    /// The reason of a seed that offers none of the restrictions, shared by those seeds.
    fn prepare(&self, cx: &ShootContext) -> Result<Prepared, FitError> {
        if requested(cx).len() == 0 {
            return Ok(Prepared::default());
        }
        Ok(Prepared::new(NoneOffered(Reason::new(NotOffered {
            missing: requested(cx).map(str::to_string).collect(),
        }))))
    }

    fn check(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        let count = requested(cx).len();
        let too_many = count > seed.access_restriction_count;
        if !too_many && requested(cx).all(|r| offers(seed, r)) {
            return Ok(());
        }
        why.reject(|| {
            let missing: Vec<String> = requested(cx)
                .filter(|r| too_many || !offers(seed, r))
                .map(str::to_string)
                .collect();
            match state.get::<NoneOffered>() {
                Some(NoneOffered(none)) if missing.len() == count => none.clone(),
                _ => Reason::new(NotOffered { missing }),
            }
        })
    }

    /// With one restriction requested, every seed rejected lacks it.
    fn shared_reason(&self, cx: &ShootContext, state: &Prepared) -> Option<Reason> {
        match state.get::<NoneOffered>() {
            Some(NoneOffered(none)) if requested(cx).len() == 1 => Some(none.clone()),
            _ => None,
        }
    }

    /// Nothing to check when none is requested; otherwise the seeds filed under every
    /// requested restriction in the index of offered ones, that list at least as many as
    /// requested, pass.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        if requested(cx).len() == 0 {
            return FastCheck::Skip;
        }
        let Some(index) = cols.index(&BY_RESTRICTION) else {
            return FastCheck::Ask;
        };
        let mut passing = vec![false; cols.len()];
        let mut names = requested(cx);
        if let (Some(only), None) = (names.next(), names.next()) {
            // One restriction: the seeds offering it (each lists at least one).
            for &i in index.seeds(only) {
                passing[i as usize] = true;
            }
        } else {
            let mut distinct: Vec<&str> = requested(cx).collect();
            distinct.sort_unstable();
            distinct.dedup();
            let count = requested(cx).len();
            // The seeds of the rarest restriction that list enough and offer every other one.
            let rarest = distinct
                .iter()
                .map(|r| index.seeds(r))
                .min_by_key(|s| s.len());
            for &i in rarest.unwrap_or_default() {
                let seed = cols.info(i);
                passing[i as usize] = count <= seed.access_restriction_count
                    && distinct.iter().all(|r| offers(seed, r));
            }
        }
        FastCheck::SharedBitmap(Arc::new(passing))
    }
}

/// The names of the access restrictions the shoot requests, as listed (a name may repeat).
fn requested<'s>(cx: &ShootContext<'s>) -> impl ExactSizeIterator<Item = &'s str> + Clone {
    cx.shoot
        .spec
        .access_restrictions
        .iter()
        .map(|a| a.name.as_str())
}

/// The seed offers the restriction `r`.
fn offers(seed: &SeedInfo, r: &str) -> bool {
    seed.access_restrictions.contains(r)
}

/// The seeds offering each access restriction.
static BY_RESTRICTION: SeedIndex = SeedIndex {
    name: "accessRestrictions",
    keys: |seed| seed.access_restrictions.iter().cloned().collect(),
};

/// What `prepare` keeps: the reason of a seed that offers none of the requested restrictions.
struct NoneOffered(Reason);

/// The seed does not offer every access restriction the shoot asks for.
#[derive(Debug)]
struct NotOffered {
    missing: Vec<String>,
}

declared!(NotOffered {
    name: "accessRestriction",
    summary: "do not offer the access restrictions",
    hint(self): Some(format!(
        "remove access restriction {} or offer it on a seed",
        self.missing.join(", ")
    )),
    message(self, f): write!(
        f,
        "seed does not offer access restriction(s) {}",
        self.missing.join(", ")
    ),
});

#[cfg(test)]
mod tests;
