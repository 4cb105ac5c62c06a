use crate::context::ShootContext;
use crate::reason::{Reason, declared};
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Candidates, Narrowed, SetStep, keep_minimal, other_provider, tiers};

pub const NAME: &str = "RegionPrefix";

/// Same provider, and among those the seeds whose region shares the longest common prefix with
/// the shoot's region (`eu-north-1` -> `eu-central-1` before `us-east-1`).
pub struct RegionPrefix;

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// The key of a seed region of the shoot's provider: the negated common prefix length, so
/// that the smallest key is the longest prefix.
fn key(region: &str, cx: &ShootContext) -> i64 {
    -(common_prefix(region, &cx.region) as i64)
}

impl SetStep for RegionPrefix {
    fn name(&self) -> &'static str {
        NAME
    }

    fn narrow(&self, cx: &ShootContext, seeds: &[&SeedInfo], _: &Snapshot) -> Narrowed {
        // Keys are negated prefix lengths so that the minimum is the longest prefix.
        let keys: Vec<Option<i64>> = seeds
            .iter()
            .map(|s| (s.provider == cx.provider).then(|| key(&s.region, cx)))
            .collect();
        let other_provider = other_provider();
        Ok(keep_minimal(&keys, |k, min| match k {
            None => other_provider.clone(),
            Some(k) => Reason::new(ShorterPrefix {
                common: (-k) as usize,
                best: (-min) as usize,
            }),
        }))
    }

    /// The groups of the shoot's provider type, longest common prefix first.
    fn candidates(&self, cx: &ShootContext, snap: &Snapshot) -> Option<Candidates> {
        let groups = snap
            .regions_of(&cx.provider)
            .map(|(region, names)| (key(region, cx), names));
        Some(Candidates::Tiers(tiers(snap.columns(), groups)))
    }
}

/// The seed's region shares a shorter prefix with the shoot's than the best seeds' regions.
#[derive(Debug)]
struct ShorterPrefix {
    common: usize,
    best: usize,
}

declared!(ShorterPrefix {
    name: "shorterRegionPrefix",
    summary: "share a shorter region prefix than the best seeds",
    message(self, f): write!(
        f,
        "common region prefix of {} characters < best {}",
        self.common, self.best
    ),
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::SeedBuilder;
    use crate::strategies::testing::{kept, shoot_in};

    #[test]
    fn longest_common_prefix_of_same_provider_wins() {
        let shoot = shoot_in("eu-north-1").provider("aws").build();
        let seeds = [
            SeedBuilder::new("central")
                .provider("aws")
                .region("eu-central-1"),
            SeedBuilder::new("us").provider("aws").region("us-east-1"),
            SeedBuilder::new("gcp-north")
                .provider("gcp")
                .region("eu-north-1"),
        ];
        assert_eq!(kept(&RegionPrefix, &shoot, &seeds, |_| {}), vec!["central"]);
    }

    #[test]
    fn exact_region_beats_prefix() {
        let shoot = shoot_in("eu-west-1").provider("aws").build();
        let seeds = [
            SeedBuilder::new("w1").provider("aws").region("eu-west-1"),
            SeedBuilder::new("w2").provider("aws").region("eu-west-2"),
        ];
        assert_eq!(kept(&RegionPrefix, &shoot, &seeds, |_| {}), vec!["w1"]);
    }
}
