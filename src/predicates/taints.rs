use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

use super::Predicate;

/// Every seed taint must be tolerated: a toleration with the same key, and the same value when
/// the taint has one. Taints have no effects.
pub struct Taints;

impl Predicate for Taints {
    fn name(&self) -> &'static str {
        "Taints"
    }

    fn filter(&self, cx: &ShootContext, seed: &SeedInfo, _: &Snapshot) -> Result<(), Reason> {
        let untolerated: Vec<String> = seed
            .taints
            .iter()
            .filter(|(key, value)| {
                !cx.tolerations.iter().any(|(tk, tv)| {
                    tk == key && value.as_ref().is_none_or(|v| tv.as_ref() == Some(v))
                })
            })
            .map(|(key, value)| match value {
                Some(v) => format!("{key}={v}"),
                None => key.clone(),
            })
            .collect();
        if untolerated.is_empty() {
            Ok(())
        } else {
            Err(Reason::Taints { untolerated })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    #[test]
    fn taints_table() {
        let p = "seed.gardener.cloud/protected";
        let cases = [
            (
                "untainted seed takes any shoot",
                SeedBuilder::new("s1"),
                ShootBuilder::new("garden-a", "s"),
                true,
            ),
            (
                "taint without toleration rejects",
                SeedBuilder::new("s1").taint(p, None),
                ShootBuilder::new("garden-a", "s"),
                false,
            ),
            (
                "taint_without_value_is_tolerated_by_any_toleration_with_same_key",
                SeedBuilder::new("s1").taint(p, None),
                ShootBuilder::new("garden-a", "s").toleration(p, Some("whatever")),
                true,
            ),
            (
                "taint with value needs the same value",
                SeedBuilder::new("s1").taint("dedicated", Some("payments")),
                ShootBuilder::new("garden-a", "s").toleration("dedicated", Some("web")),
                false,
            ),
            (
                "taint with value tolerated by equal value",
                SeedBuilder::new("s1").taint("dedicated", Some("payments")),
                ShootBuilder::new("garden-a", "s").toleration("dedicated", Some("payments")),
                true,
            ),
            (
                "taint with value not tolerated by valueless toleration",
                SeedBuilder::new("s1").taint("dedicated", Some("payments")),
                ShootBuilder::new("garden-a", "s").toleration("dedicated", None),
                false,
            ),
            (
                "every taint must be tolerated",
                SeedBuilder::new("s1").taint("a", None).taint("b", None),
                ShootBuilder::new("garden-a", "s").toleration("a", None),
                false,
            ),
        ];
        for (name, seed, shoot, ok) in cases {
            let got = run(&Taints, &shoot.build(), &seed.build(), &[], &[]);
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }
}
