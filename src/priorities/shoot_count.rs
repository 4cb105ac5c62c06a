use serde::Deserialize;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::snapshot::Snapshot;

use super::framework::{Detail, Details, Priority, lower_is_better};
use crate::plugin::parse_args;

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ShootCount";

/// Arguments that build it, for the generated profiles of the tests.
pub const EXAMPLE: &str = "{relativeToCapacity: true}";

/// Fewer shoots scores higher: upstream's "seed with the least shoots". With
/// `relativeToCapacity: true` the raw value is usage / `status.allocatable.shoots` instead.
pub struct ShootCount {
    relative_to_capacity: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    relative_to_capacity: bool,
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    let a: Args = parse_args(args, path)?;
    Ok(Box::new(ShootCount {
        relative_to_capacity: a.relative_to_capacity,
    }))
}

impl ShootCount {
    pub fn new(relative_to_capacity: bool) -> Self {
        Self {
            relative_to_capacity,
        }
    }
}

impl Priority for ShootCount {
    fn name(&self) -> &'static str {
        NAME
    }

    fn raw(
        &self,
        _: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        mut details: Details<'_>,
    ) -> Vec<f64> {
        let cols = snap.columns();
        details.values(
            positions,
            |i| {
                let used = cols.shoots(i);
                match (self.relative_to_capacity, cols.capacity(i)) {
                    (true, Some(cap)) if cap > 0 => (used as f64 / cap as f64, (used, Some(cap))),
                    _ => (used as f64, (used, None)),
                }
            },
            |(used, cap)| match cap {
                Some(cap) => Detail::lazy(move |f| write!(f, "{used}/{cap} shoots")),
                None => Detail::lazy(move |f| write!(f, "{used} shoots")),
            },
        )
    }

    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        lower_is_better(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

    fn scores(p: &ShootCount, seeds: &[(&str, Option<&str>, usize)]) -> Vec<(f64, String)> {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        for (name, cap, used) in seeds {
            let mut b = SeedBuilder::new(name);
            if let Some(c) = cap {
                b = b.allocatable("shoots", c);
            }
            snap.upsert_seed(&b.build());
            for i in 0..*used {
                snap.upsert_shoot(
                    &ShootBuilder::new("garden-x", &format!("{name}-{i}"))
                        .seed(name)
                        .build(),
                );
            }
        }
        let shoot = ShootBuilder::new("garden-a", "new").build();
        crate::priorities::testing::evaluate(p, &shoot, &snap)
    }

    #[test]
    fn fewer_shoots_score_higher() {
        let got = scores(
            &ShootCount::new(false),
            &[("a", None, 4), ("b", None, 0), ("c", None, 2)],
        );
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            vec![0.0, 100.0, 50.0]
        );
        assert_eq!(got[0].1, "4 shoots");
    }

    #[test]
    fn relative_to_capacity_prefers_the_emptier_seed_by_share() {
        // a: 4/100 = 0.04, b: 2/4 = 0.5 -> a wins although it has more shoots.
        let got = scores(
            &ShootCount::new(true),
            &[("a", Some("100"), 4), ("b", Some("4"), 2)],
        );
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            vec![100.0, 0.0]
        );
        assert_eq!(got[1].1, "2/4 shoots");
    }

    #[test]
    fn unknown_args_are_rejected_with_path() {
        let errs = build(&serde_json::json!({"relative": true}), "p.args")
            .err()
            .unwrap();
        assert!(errs[0].path.starts_with("p.args"), "{:?}", errs);
        assert!(errs[0].message.contains("unknown field"), "{:?}", errs);
    }
}
