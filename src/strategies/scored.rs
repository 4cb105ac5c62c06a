use crate::context::ShootContext;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Candidates, Narrowed, SetStep};

pub const NAME: &str = "Scored";

/// No region restriction: every feasible seed is scored (latency decides).
pub struct Scored;

impl SetStep for Scored {
    fn name(&self) -> &'static str {
        NAME
    }

    fn narrow(&self, _: &ShootContext, seeds: &[&SeedInfo], _: &Snapshot) -> Narrowed {
        Ok(vec![None; seeds.len()])
    }

    fn candidates(&self, _: &ShootContext, _: &Snapshot) -> Option<Candidates> {
        Some(Candidates::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::strategies::testing::kept;

    #[test]
    fn scored_keeps_every_seed() {
        let shoot = ShootBuilder::new("garden-a", "t")
            .region("eu-west-1")
            .build();
        let seeds = [
            SeedBuilder::new("a").region("ap-south-1"),
            SeedBuilder::new("b").provider("gcp").region("us-east1"),
        ];
        assert_eq!(kept(&Scored, &shoot, &seeds, |_| {}), vec!["a", "b"]);
    }
}
