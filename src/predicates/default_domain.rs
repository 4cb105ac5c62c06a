use crate::context::ShootContext;
use crate::reason::Reason;
use crate::schedule::FitError;
use crate::snapshot::{SeedInfo, Snapshot};

use super::SetStep;

/// A shoot whose `spec.dns.domain` lies under some seed's default domain D must go to a seed
/// whose default D makes the domain exactly `<shoot>.<project>.<D>`. A custom domain under no
/// default passes every seed. Default domains are collected from every seed in the landscape,
/// so a domain owned by a seed filtered out earlier is not handed to another seed.
pub struct DefaultDomain;

impl SetStep for DefaultDomain {
    fn name(&self) -> &'static str {
        "DefaultDomain"
    }

    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        snap: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError> {
        let Some(domain) = cx.domain.as_deref() else {
            return Ok(vec![None; seeds.len()]);
        };
        let under_default = snap
            .seeds()
            .flat_map(|s| s.default_domains.iter())
            .any(|d| domain.ends_with(&format!(".{d}")));
        if !under_default {
            return Ok(vec![None; seeds.len()]);
        }
        Ok(seeds
            .iter()
            .map(|s| {
                let owns = s
                    .default_domains
                    .iter()
                    .any(|d| domain == format!("{}.{}.{}", cx.name, cx.project, d));
                (!owns).then(|| Reason::DefaultDomain {
                    domain: domain.to_string(),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

    fn kept(domain: &str) -> Vec<bool> {
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
        let infos: Vec<&SeedInfo> = snap.seeds().collect();
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
}
