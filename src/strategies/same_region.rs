use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::predicates::SetStep;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

/// Upstream's default: the seed has the shoot's provider type and region.
pub struct SameRegion;

impl SetStep for SameRegion {
    fn name(&self) -> &'static str {
        "SameRegion"
    }

    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        _: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError> {
        // The seeds of one region share its reason.
        let mut regions: FxHashMap<&str, Arc<str>> = FxHashMap::default();
        Ok(seeds
            .iter()
            .map(|s| {
                if s.provider != cx.provider {
                    Some(Reason::OtherProvider)
                } else if s.region != cx.region {
                    let region = regions
                        .entry(&s.region)
                        .or_insert_with(|| s.region.as_str().into());
                    Some(Reason::OtherRegion {
                        region: Arc::clone(region),
                    })
                } else {
                    None
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::strategies::testing::kept;

    #[test]
    fn same_region_keeps_same_provider_and_region_only() {
        let shoot = ShootBuilder::new("garden-a", "s")
            .provider("aws")
            .region("eu-west-1")
            .build();
        let seeds = [
            SeedBuilder::new("a").provider("aws").region("eu-west-1"),
            SeedBuilder::new("b").provider("aws").region("eu-central-1"),
            SeedBuilder::new("c").provider("gcp").region("eu-west-1"),
            SeedBuilder::new("d").provider("aws").region("eu-west-1"),
        ];
        assert_eq!(kept(&SameRegion, &shoot, &seeds, |_| {}), vec!["a", "d"]);
    }
}
