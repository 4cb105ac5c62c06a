use rustc_hash::FxHashMap;

use crate::context::ShootContext;
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Candidates, Narrowed, SetStep, other_provider};

pub const NAME: &str = "SameRegion";

/// Upstream's default: the seed has the shoot's provider type and region.
pub struct SameRegion;

impl SetStep for SameRegion {
    fn name(&self) -> &'static str {
        NAME
    }

    fn narrow(&self, cx: &ShootContext, seeds: &[&SeedInfo], _: &Snapshot) -> Narrowed {
        // The seeds of one region share its reason.
        let mut regions: FxHashMap<&str, Reason> = FxHashMap::default();
        let other_provider = other_provider();
        Ok(seeds
            .iter()
            .map(|s| {
                if s.provider != cx.provider {
                    Some(other_provider.clone())
                } else if s.region != cx.region {
                    let reason = regions.entry(&s.region).or_insert_with(|| {
                        Reason::new(OtherRegion {
                            region: s.region.clone(),
                        })
                    });
                    Some(reason.clone())
                } else {
                    None
                }
            })
            .collect())
    }

    /// One group of seeds: the shoot's provider type and region.
    fn candidates(&self, cx: &ShootContext, snap: &Snapshot) -> Option<Candidates> {
        let cols = snap.columns();
        Some(Candidates::Tiers(vec![
            cols.group_in(&cx.provider, &cx.region)
                .map(|g| cols.members(g).to_vec())
                .unwrap_or_default(),
        ]))
    }
}

/// The seed is in another region than the shoot.
#[derive(Debug)]
struct OtherRegion {
    region: String,
}

declared!(OtherRegion {
    name: "otherRegion",
    summary: "are in another region",
    hint(self): Some(format!(
        "add a seed in the shoot's region or use candidateDeterminationStrategy {}",
        super::minimal_distance::NAME
    )),
    message(self, f): write!(f, "seed is in region {:?}", self.region),
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::SeedBuilder;
    use crate::strategies::testing::{kept, shoot_in};

    #[test]
    fn same_region_keeps_same_provider_and_region_only() {
        let shoot = shoot_in("eu-west-1").provider("aws").build();
        let seeds = [
            SeedBuilder::new("a").provider("aws").region("eu-west-1"),
            SeedBuilder::new("b").provider("aws").region("eu-central-1"),
            SeedBuilder::new("c").provider("gcp").region("eu-west-1"),
            SeedBuilder::new("d").provider("aws").region("eu-west-1"),
        ];
        assert_eq!(kept(&SameRegion, &shoot, &seeds, |_| {}), vec!["a", "d"]);
    }
}
