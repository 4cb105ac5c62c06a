use std::borrow::Cow;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedIndex};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{SetCheck, SetStep};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "DefaultDomain";

/// A shoot whose `spec.dns.domain` lies under a default domain D of one of the seeds left at
/// this stage must go to a seed whose default D makes the domain exactly
/// `<shoot>.<project>.<D>`. A domain under no remaining seed's default passes every remaining
/// seed, as upstream decides: default domains of seeds filtered out earlier do not count.
pub struct DefaultDomain;

impl SetStep for DefaultDomain {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Index(&BY_DEFAULT_DOMAIN)];
        COLUMNS
    }

    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        _: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError> {
        let Some(domain) = shoot_domain(cx) else {
            return Ok(vec![None; seeds.len()]);
        };
        if !under_default(domain, seeds) {
            return Ok(vec![None; seeds.len()]);
        }
        // Every seed that does not own the domain shares one reason. A seed owns it when the
        // domain is exactly `<shoot>.<project>.<its default>`.
        let reason = Reason::new(OthersDomain {
            domain: domain.into(),
        });
        let owned = below_prefix(domain, &cx.name).and_then(|rest| below_prefix(rest, &cx.project));
        Ok(seeds
            .iter()
            .map(|s| {
                let owns = owned.is_some_and(|d| s.default_domains.iter().any(|own| own == d));
                (!owns).then(|| reason.clone())
            })
            .collect())
    }

    /// A part holding a seed with a default above the domain decides as the whole set does; a
    /// part without one keeps its seeds only if the rest of the set has none either.
    fn narrow_part(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        snap: &Snapshot,
    ) -> Result<Option<Vec<Option<Reason>>>, FitError> {
        match shoot_domain(cx) {
            Some(domain) if !under_default(domain, seeds) => Ok(None),
            _ => self.narrow(cx, seeds, snap).map(Some),
        }
    }

    /// A claim of the seeds with a default domain above the shoot's domain, owned by those
    /// whose default makes it `<shoot>.<project>.<default>`; nothing to check when no seed's
    /// default domain is above it.
    fn fast_check<'c>(&self, cx: &'c ShootContext, cols: &'c SeedColumns, _: bool) -> SetCheck<'c> {
        let Some(domain) = shoot_domain(cx) else {
            return SetCheck::Skip;
        };
        let Some(by_domain) = cols.index(&BY_DEFAULT_DOMAIN) else {
            return SetCheck::Narrow;
        };
        let mut above = domain
            .match_indices('.')
            .map(|(dot, _)| by_domain.seeds(&domain[dot + 1..]))
            .filter(|seeds| !seeds.is_empty());
        let claimants = match (above.next(), above.next()) {
            (None, _) => return SetCheck::Skip,
            (Some(only), None) => Cow::Borrowed(only),
            (Some(a), Some(b)) => {
                let mut all: Vec<u32> =
                    [a, b].into_iter().chain(above).flatten().copied().collect();
                all.sort_unstable();
                all.dedup();
                Cow::Owned(all)
            }
        };
        let owned = below_prefix(domain, &cx.name).and_then(|rest| below_prefix(rest, &cx.project));
        SetCheck::Claim {
            claimants,
            owners: owned.map_or(&[], |d| by_domain.seeds(d)),
            reason: Reason::new(OthersDomain {
                domain: domain.into(),
            }),
        }
    }
}

/// The seeds of each default domain: the claimants and owners of a shoot's domain.
static BY_DEFAULT_DOMAIN: SeedIndex = SeedIndex {
    name: "defaultDomains",
    keys: |seed| seed.default_domains.clone(),
};

/// Does the domain lie under a default domain of one of these seeds?
fn under_default(domain: &str, seeds: &[&SeedInfo]) -> bool {
    seeds
        .iter()
        .flat_map(|s| s.default_domains.iter())
        .any(|d| below(domain, d).is_some())
}

/// `a.b` below `b` is `Some("a")`: what precedes `.suffix` at the end of `name`.
fn below<'a>(name: &'a str, suffix: &str) -> Option<&'a str> {
    let dot = name.len().checked_sub(suffix.len() + 1)?;
    if name.as_bytes()[dot] != b'.' {
        return None;
    }
    name.strip_suffix(suffix)?.strip_suffix('.')
}

/// `a.b` below prefix `a` is `Some("b")`: what follows `prefix.` at the start of `name`.
fn below_prefix<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    name.strip_prefix(prefix)?.strip_prefix('.')
}

/// The shoot's domain lies under a default domain of another seed.
#[derive(Debug)]
struct OthersDomain {
    domain: String,
}

declared!(OthersDomain {
    name: "defaultDomain",
    summary: "do not own the shoot's default domain",
    message(self, f): write!(
        f,
        "domain {:?} is a default domain of another seed",
        self.domain
    ),
});

/// `spec.dns.domain` without its leading and trailing dots, when it names one.
fn shoot_domain<'s>(cx: &ShootContext<'s>) -> Option<&'s str> {
    let dns = cx.shoot.spec.dns.as_ref()?;
    Some(dns.domain.as_deref()?.trim_matches('.')).filter(|d| !d.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

    fn kept(domain: &str) -> Vec<bool> {
        kept_among(domain, |_| true)
    }

    /// Which of the seeds a, b, c (those `left` at this stage) the step keeps.
    fn kept_among(domain: &str, left: impl Fn(&str) -> bool) -> Vec<bool> {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        let a = SeedBuilder::new("a")
            .default_domain("a.example.com")
            .build();
        let b = SeedBuilder::new("b")
            .default_domain("b.example.com")
            .build();
        let c = SeedBuilder::new("c").build();
        for s in [&a, &b, &c] {
            snap.upsert_seed(s);
        }
        let shoot = ShootBuilder::new("garden-dev", "web")
            .domain(domain)
            .build();
        let cx = ShootContext::new(&shoot, &snap, chrono::Utc::now()).unwrap();
        let infos: Vec<&SeedInfo> = snap.seeds().filter(|s| left(&s.name)).collect();
        DefaultDomain
            .narrow(&cx, &infos, &snap)
            .unwrap()
            .iter()
            .map(Option::is_none)
            .collect()
    }

    #[test]
    fn default_domain_pins_the_owning_seed() {
        assert_eq!(kept("web.dev.b.example.com"), vec![false, true, false]);
    }

    #[test]
    fn custom_domain_passes_every_seed() {
        assert_eq!(kept("api.mycompany.io"), vec![true, true, true]);
    }

    #[test]
    fn wrong_shoot_or_project_label_under_a_default_matches_no_seed() {
        assert_eq!(kept("other.dev.b.example.com"), vec![false, false, false]);
    }

    #[test]
    fn a_default_domain_of_a_seed_filtered_out_earlier_does_not_count() {
        // Seed b owns web.dev.b.example.com but did not reach this stage: like upstream, the
        // domain is then treated as custom and every remaining seed passes.
        assert_eq!(
            kept_among("web.dev.b.example.com", |s| s != "b"),
            vec![true, true]
        );
    }
}
