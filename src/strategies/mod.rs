//! Region strategies: the last filtering step, over the whole set of remaining seeds.
//!
//! `purpose: testing` shoots only need a seed of their own provider, whatever the strategy.
//! Otherwise the configured `candidateDeterminationStrategy` applies.

pub mod levenshtein;
mod minimal_distance;
mod region_prefix;
mod same_region;

pub use minimal_distance::MinimalDistance;
pub use region_prefix::RegionPrefix;
pub use same_region::SameRegion;

use crate::config::Strategy;
use crate::context::ShootContext;
use crate::predicates::SetStep;
use crate::reason::Reason;
use crate::schedule::FitError;
use crate::snapshot::{SeedInfo, Snapshot};

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
                .map(|s| (s.provider != cx.provider).then_some(Reason::OtherProvider))
                .collect());
        }
        match self.strategy {
            Strategy::SameRegion => SameRegion.narrow(cx, seeds, snap),
            Strategy::MinimalDistance => MinimalDistance.narrow(cx, seeds, snap),
            Strategy::RegionPrefix => RegionPrefix.narrow(cx, seeds, snap),
            Strategy::Scored => Ok(vec![None; seeds.len()]),
        }
    }
}

/// Keeps the seeds whose key is minimal; the others get `reject(their key, the minimum)`.
pub(crate) fn keep_minimal<K: Ord + Copy>(
    keys: &[Option<K>],
    mut reject: impl FnMut(Option<K>, K) -> Reason,
) -> Vec<Option<Reason>> {
    let Some(min) = keys.iter().flatten().min().copied() else {
        return keys.iter().map(|_| None).collect();
    };
    keys.iter()
        .map(|k| match k {
            Some(k) if *k == min => None,
            other => Some(reject(*other, min)),
        })
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
