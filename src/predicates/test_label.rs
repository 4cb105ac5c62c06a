//! `TestLabel` (tests only, the `test-util` feature): keeps the seeds that carry the label
//! `label`. It is the example of adding a filter that `docs/development/architecture.md` walks
//! through: this file and its line in the registry are all there is to it; its reason, the
//! per-seed index its fast answer reads, its example arguments and its tests are here, and it
//! runs in both modes of the decision.

use std::sync::Arc;

use serde::Deserialize;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::plugin::parse_args;
use crate::reason::{Reason, declared};
use crate::snapshot::columns::{Column, SeedIndex};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

pub const NAME: &str = "TestLabel";

/// Arguments that make it keep some seeds of generated landscapes and reject others.
pub const EXAMPLE: &str = "{label: env}";

struct TestLabel {
    label: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    /// the label key a seed must carry; empty: every seed passes
    label: String,
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Predicate>, Vec<FieldError>> {
    let a: Args = parse_args(args, path)?;
    Ok(Box::new(TestLabel { label: a.label }))
}

/// The reason this filter rejects a seed with, declared here.
#[derive(Debug)]
struct Unlabelled {
    label: String,
}

declared!(Unlabelled {
    name: "unlabelled",
    summary: "lack the test label",
    hint(self): Some(format!("label a seed {}", self.label)),
    message(self, f): write!(f, "seed has no label {}", self.label),
});

impl Predicate for TestLabel {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Index(&LABEL_KEYS)];
        COLUMNS
    }

    fn check(
        &self,
        _: &ShootContext,
        _: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        if self.label.is_empty() || seed.labels.contains_key(&self.label) {
            Ok(())
        } else {
            why.reject(|| {
                Reason::new(Unlabelled {
                    label: self.label.clone(),
                })
            })
        }
    }

    /// Without a label to look for it keeps every seed; otherwise the seeds filed under the
    /// label in the index of label keys pass.
    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        if self.label.is_empty() {
            return FastCheck::Skip;
        }
        match cols.index(&LABEL_KEYS) {
            Some(index) => FastCheck::SharedBitmap(Arc::new(index.mark(cols.len(), [&self.label]))),
            None => FastCheck::Ask,
        }
    }
}

/// The seeds carrying each label key.
static LABEL_KEYS: SeedIndex = SeedIndex {
    name: "labelKeys",
    keys: |seed| seed.labels.keys().cloned().collect(),
};

#[cfg(test)]
mod tests {
    use crate::config::FilterConfig;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    use crate::predicates::SetStep;
    use crate::profile::Profile;
    use crate::schedule::{FitError, decide, schedule};
    use crate::snapshot::Snapshot;
    use crate::strategies::SameRegion;

    fn profile(label: &str) -> Profile {
        let filters = [FilterConfig {
            name: super::NAME.into(),
            args: serde_json::json!({ "label": label }),
        }];
        Profile::build("test", SameRegion.name(), &[], &filters, "schedulers.shoot")
            .expect("the test filter is configured like an opt-in one")
    }

    fn snapshot() -> Snapshot {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        for (name, label) in [("a", None), ("b", Some("pick")), ("c", None)] {
            let mut seed = SeedBuilder::new(name);
            if let Some(label) = label {
                seed = seed.label(label, "yes");
            }
            snap.upsert_seed(&seed.build());
        }
        snap
    }

    #[test]
    fn a_filter_added_in_one_file_rejects_in_explain_mode_and_decides_in_fast_mode() {
        let snap = snapshot();
        let shoot = ShootBuilder::new("garden-p", "s").build();
        let p = profile("pick");
        let explained = schedule(&shoot, &snap, &p, chrono::Utc::now()).expect("b fits");
        let rejected: Vec<String> = explained
            .rejected
            .iter()
            .map(|r| format!("{} {}: {}", r.seed, r.stage, r.reason))
            .collect();
        assert_eq!(
            rejected,
            [
                "a TestLabel: seed has no label pick",
                "c TestLabel: seed has no label pick"
            ]
        );
        let fast = decide(&shoot, &snap, &p, chrono::Utc::now()).expect("b fits");
        assert_eq!((explained.seed.as_str(), fast.seed.as_str()), ("b", "b"));
    }

    #[test]
    fn its_declared_reason_adds_up_in_the_failure_of_both_modes() {
        let snap = snapshot();
        let shoot = ShootBuilder::new("garden-p", "s").build();
        let p = profile("nowhere");
        let explained = schedule(&shoot, &snap, &p, chrono::Utc::now()).unwrap_err();
        let fast = decide(&shoot, &snap, &p, chrono::Utc::now()).unwrap_err();
        assert_eq!(
            fast.to_string(),
            "0/3 seeds are available: 3 seed(s) lack the test label."
        );
        assert_eq!(fast, explained.clone().counted_only());
        assert_eq!(fast.hints(), ["label a seed nowhere"]);
        assert_eq!(fast.reason_names(), ["unlabelled"]);
        let FitError::NoFit { rejected, .. } = &explained else {
            panic!("{explained:?}");
        };
        assert_eq!(
            serde_json::to_value(&rejected[0]).unwrap(),
            serde_json::json!({
                "seed": "a",
                "stage": "TestLabel",
                "reason": "unlabelled",
                "message": "seed has no label nowhere"
            })
        );
    }
}
