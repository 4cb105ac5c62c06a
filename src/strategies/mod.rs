//! Region strategies: the last filtering step, over the whole set of remaining seeds.
//!
//! `purpose: testing` shoots only need a seed of their own provider, whatever the strategy.
//! Otherwise the configured `candidateDeterminationStrategy` applies.

pub mod framework;
mod minimal_distance;
mod region_prefix;
mod same_region;
mod scored;

pub use minimal_distance::MinimalDistance;
pub use region_prefix::RegionPrefix;
pub use same_region::SameRegion;
pub use scored::Scored;

use crate::context::ShootContext;
use crate::predicates::framework::{Candidates, SetStep};
use crate::snapshot::{SeedInfo, Snapshot};
use framework::Narrowed;

/// Makes a strategy's set step.
type Builder = fn() -> Box<dyn SetStep>;

/// Every region strategy by its `candidateDeterminationStrategy` value, upstream's default
/// first; error messages list them in this order.
pub const REGISTRY: &[(&str, Builder)] = &[
    (same_region::NAME, || Box::new(SameRegion)),
    (minimal_distance::NAME, || Box::new(MinimalDistance)),
    (region_prefix::NAME, || Box::new(RegionPrefix)),
    (scored::NAME, || Box::new(Scored)),
];

/// The values `candidateDeterminationStrategy` accepts, in registry order.
pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|(name, _)| *name)
}

/// Applies the testing rule, then the configured strategy.
pub struct RegionStrategy {
    strategy: Box<dyn SetStep>,
}

impl RegionStrategy {
    /// The strategy registered under `name`; `None` when no strategy has that name.
    pub fn named(name: &str) -> Option<Self> {
        REGISTRY
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, build)| Self { strategy: build() })
    }
}

impl SetStep for RegionStrategy {
    fn name(&self) -> &'static str {
        self.strategy.name()
    }

    fn narrow(&self, cx: &ShootContext, seeds: &[&SeedInfo], snap: &Snapshot) -> Narrowed {
        if cx.testing {
            return Ok(seeds
                .iter()
                .map(|s| (s.provider != cx.provider).then(framework::other_provider))
                .collect());
        }
        self.strategy.narrow(cx, seeds, snap)
    }

    /// The candidates of this strategy for one shoot, from the columns' provider/region
    /// groups; a testing shoot's are the seeds of its provider type.
    fn candidates(&self, cx: &ShootContext, snap: &Snapshot) -> Option<Candidates> {
        if cx.testing {
            let cols = snap.columns();
            let positions = cols
                .provider_id(&cx.provider)
                .map(|p| cols.of_provider(p).to_vec())
                .unwrap_or_default();
            return Some(Candidates::Tiers(vec![positions]));
        }
        self.strategy.candidates(cx, snap)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use crate::api::Shoot;
    use crate::context::ShootContext;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    use crate::predicates::SetStep;
    use crate::snapshot::{SeedInfo, Snapshot};

    /// Shoot `garden-a/s` in `region`.
    pub fn shoot_in(region: &str) -> ShootBuilder {
        ShootBuilder::new("garden-a", "s").region(region)
    }

    /// Names of the seeds a step keeps, given seeds and extra snapshot content.
    pub fn kept(
        step: &dyn SetStep,
        shoot: &Shoot,
        seeds: &[SeedBuilder],
        setup: impl FnOnce(&mut Snapshot),
    ) -> Vec<String> {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(
            &CloudProfileBuilder::new("aws")
                .provider_types(&["*"])
                .build(),
        );
        setup(&mut snap);
        for s in seeds {
            snap.upsert_seed(&s.clone().build());
        }
        let cx = ShootContext::new(shoot, &snap, chrono::Utc::now()).unwrap();
        let infos: Vec<&SeedInfo> = snap.seeds().collect();
        let verdicts = step.narrow(&cx, &infos, &snap).unwrap();
        infos
            .iter()
            .zip(verdicts)
            .filter(|(_, v)| v.is_none())
            .map(|(s, _)| s.name.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};

    #[test]
    fn testing_shoots_only_need_the_same_provider_under_any_strategy() {
        let shoot = ShootBuilder::new("garden-a", "t")
            .provider("aws")
            .region("eu-west-1")
            .purpose("testing")
            .build();
        let seeds = [
            SeedBuilder::new("a").provider("aws").region("ap-south-1"),
            SeedBuilder::new("b").provider("gcp").region("eu-west-1"),
        ];
        for strategy in names() {
            let step = RegionStrategy::named(strategy).unwrap();
            let got = testing::kept(&step, &shoot, &seeds, |_| {});
            assert_eq!(got, vec!["a"], "{strategy}");
        }
    }

    #[test]
    fn every_registered_strategy_is_found_by_its_name() {
        for name in names() {
            assert_eq!(RegionStrategy::named(name).map(|s| s.name()), Some(name));
        }
        assert!(RegionStrategy::named("Nearest").is_none());
    }
}
