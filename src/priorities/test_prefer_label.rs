//! `TestPreferLabel` (tests only, the `test-util` feature): seeds that carry the label `label`
//! score 100, the others 0. It is the example of adding a priority that
//! `docs/development/architecture.md` walks through: this file, its `mod` line and its line in
//! the registry are all there is to it; its arguments, its example arguments, its detail and its
//! tests are here, and the generated profiles of the tests take it from the registry.

use serde::Deserialize;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::plugin::parse_args;
use crate::snapshot::Snapshot;

use super::framework::{Detail, Details, MAX_SCORE, Priority};

pub const NAME: &str = "TestPreferLabel";

/// Arguments that build it, for the generated profiles of the tests.
pub const EXAMPLE: &str = "{label: env}";

struct TestPreferLabel {
    label: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    /// the label key a seed is preferred for; empty: every seed scores alike
    label: String,
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    let a: Args = parse_args(args, path)?;
    Ok(Box::new(TestPreferLabel { label: a.label }))
}

impl Priority for TestPreferLabel {
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
                let labelled =
                    self.label.is_empty() || cols.info(i).labels.contains_key(&self.label);
                (if labelled { 1.0 } else { 0.0 }, labelled)
            },
            |labelled| Detail::from(if labelled { "labelled" } else { "not labelled" }),
        )
    }

    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        values.iter().map(|v| v * MAX_SCORE).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

    #[test]
    fn labelled_seeds_score_highest_and_say_why() {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        snap.upsert_seed(&SeedBuilder::new("a").label("env", "dev").build());
        snap.upsert_seed(&SeedBuilder::new("b").build());
        let shoot = ShootBuilder::new("garden-a", "new").build();
        let p = build(&serde_json::json!({"label": "env"}), "args").unwrap();
        let got = crate::priorities::testing::evaluate(p.as_ref(), &shoot, &snap);
        assert_eq!(
            got,
            [
                (100.0, "labelled".to_string()),
                (0.0, "not labelled".into())
            ]
        );
        let every = build(&serde_json::json!({}), "args").unwrap();
        let got = crate::priorities::testing::evaluate(every.as_ref(), &shoot, &snap);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [100.0, 100.0]);
    }

    #[test]
    fn an_unknown_argument_is_named() {
        let e = build(&serde_json::json!({"lable": "env"}), "p.args")
            .err()
            .unwrap();
        assert!(e[0].to_string().contains("p.args"), "{e:?}");
    }
}
