//! Region strategies: the last filtering step, over the whole set of remaining seeds.
//!
//! `purpose: testing` shoots only need a seed of their own provider, whatever the strategy.
//! Otherwise the configured `candidateDeterminationStrategy` applies.

pub mod framework;
mod minimal_distance;
mod region_prefix;
mod same_region;

pub use minimal_distance::MinimalDistance;
pub use region_prefix::RegionPrefix;
pub use same_region::SameRegion;

use crate::config::Strategy;
use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::predicates::framework::{Candidates, SetStep};
use crate::reason::Reason;
use crate::snapshot::{SeedColumns, SeedGroup, SeedInfo, Snapshot};

/// Applies the testing rule, then the configured strategy.
pub struct RegionStrategy {
    strategy: Strategy,
}

impl RegionStrategy {
    pub fn new(strategy: Strategy) -> Self {
        Self { strategy }
    }
}

impl SetStep for RegionStrategy {
    fn name(&self) -> &'static str {
        self.strategy.as_str()
    }

    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        snap: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError> {
        if cx.testing {
            return Ok(seeds
                .iter()
                .map(|s| (s.provider != cx.provider).then(framework::other_provider))
                .collect());
        }
        match self.strategy {
            Strategy::SameRegion => SameRegion.narrow(cx, seeds, snap),
            Strategy::MinimalDistance => MinimalDistance.narrow(cx, seeds, snap),
            Strategy::RegionPrefix => RegionPrefix.narrow(cx, seeds, snap),
            Strategy::Scored => Ok(vec![None; seeds.len()]),
        }
    }

    /// The candidates of this strategy for one shoot, from the columns' provider/region
    /// groups: for `SameRegion` one group of seeds, for the distance strategies the groups in
    /// order of distance.
    fn candidates(&self, cx: &ShootContext, snap: &Snapshot) -> Option<Candidates> {
        Some(self.candidates_of(cx, snap))
    }
}

impl RegionStrategy {
    fn candidates_of(&self, cx: &ShootContext, snap: &Snapshot) -> Candidates {
        let cols = snap.columns();
        if cx.testing {
            let positions = cols
                .provider_id(&cx.provider)
                .map(|p| cols.of_provider(p).to_vec())
                .unwrap_or_default();
            return Candidates::Tiers(vec![positions]);
        }
        match self.strategy {
            Strategy::Scored => Candidates::All,
            Strategy::SameRegion => Candidates::Tiers(vec![
                cols.group_in(&cx.provider, &cx.region)
                    .map(|g| cols.members(g).to_vec())
                    .unwrap_or_default(),
            ]),
            Strategy::RegionPrefix => {
                let groups = snap
                    .regions_of(&cx.provider)
                    .map(|(region, names)| (region_prefix::key(region, cx), names));
                Candidates::Tiers(tiers(cols, groups))
            }
            Strategy::MinimalDistance => match minimal_distance::tiers(cx, snap) {
                Some(groups) => Candidates::Tiers(
                    groups
                        .into_iter()
                        .flat_map(|list| tiers(cols, list.into_iter()))
                        .collect(),
                ),
                None => Candidates::Unknown,
            },
        }
    }
}

/// The positions of the seeds of some groups, in order: each group's seeds read from the
/// columns by the group of its first seed.
fn positions<'a>(cols: &SeedColumns, groups: impl Iterator<Item = &'a SeedGroup>) -> Vec<u32> {
    let mut positions: Vec<u32> = groups
        .filter_map(|g| g.keys().next().and_then(|name| cols.position(name)))
        .flat_map(|first| cols.members(cols.group(first)).iter().copied())
        .collect();
    positions.sort_unstable();
    positions
}

/// Groups with their keys -> tiers of seed positions, lowest key first, groups of one key
/// together.
fn tiers<'a, K: Ord>(
    cols: &SeedColumns,
    groups: impl Iterator<Item = (K, &'a SeedGroup)>,
) -> Vec<Vec<u32>> {
    let mut by_key: std::collections::BTreeMap<K, Vec<_>> = std::collections::BTreeMap::new();
    for (key, group) in groups {
        by_key.entry(key).or_default().push(group);
    }
    by_key
        .into_values()
        .map(|groups| positions(cols, groups.into_iter()))
        .collect()
}

#[cfg(test)]
pub(crate) mod testing {
    use crate::api::Shoot;
    use crate::context::ShootContext;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder};
    use crate::predicates::SetStep;
    use crate::snapshot::{SeedInfo, Snapshot};

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
        for strategy in [
            Strategy::SameRegion,
            Strategy::MinimalDistance,
            Strategy::RegionPrefix,
            Strategy::Scored,
        ] {
            let got = testing::kept(&RegionStrategy::new(strategy), &shoot, &seeds, |_| {});
            assert_eq!(got, vec!["a"], "{strategy:?}");
        }
    }

    #[test]
    fn scored_keeps_every_seed() {
        let shoot = ShootBuilder::new("garden-a", "t")
            .region("eu-west-1")
            .build();
        let seeds = [
            SeedBuilder::new("a").region("ap-south-1"),
            SeedBuilder::new("b").provider("gcp").region("us-east1"),
        ];
        let got = testing::kept(
            &RegionStrategy::new(Strategy::Scored),
            &shoot,
            &seeds,
            |_| {},
        );
        assert_eq!(got, vec!["a", "b"]);
    }
}
