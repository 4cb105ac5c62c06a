//! `ResourceFit`: weigh the seeds' free capacity, as kube-scheduler's NodeResourcesFit weighs a
//! node's: spread control planes over the emptiest seeds (`LeastAllocated`) or pack them onto the
//! fullest seeds that still have room (`MostAllocated`) to free whole seeds.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::snapshot::{DemandClass, Snapshot};

mod args;
mod priced;

use priced::PricedUsage;

use super::framework::{Detail, Details, MAX_SCORE, Priority};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "ResourceFit";

/// Arguments that build it, for the generated profiles of the tests.
pub const EXAMPLE: &str =
    "{strategy: LeastAllocated, controlPlaneRequests: [{requests: {cpu: \"2\", memory: 8Gi}}]}";

pub const SHOOTS: &str = "shoots";

/// Gardener's shoot purposes (`spec.purpose`, defaulted to `evaluation`).
const PURPOSES: [&str; 5] = [
    "evaluation",
    "testing",
    "development",
    "production",
    "infrastructure",
];
/// `spec.controlPlane.highAvailability.failureTolerance.type`, `none` without high availability.
const FAILURE_TOLERANCES: [&str; 3] = ["none", "node", "zone"];

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum FitStrategy {
    /// Prefer the seed with the most free capacity (spread).
    #[default]
    LeastAllocated,
    /// Prefer the seed with the least free capacity that still fits (bin-pack).
    MostAllocated,
}

/// What one class of shoot (purpose, failure tolerance) demands of a seed besides a shoot slot.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestRule {
    pub purpose: Option<String>,
    pub failure_tolerance: Option<String>,
    pub requests: BTreeMap<String, f64>,
}

impl RequestRule {
    fn matches(&self, class: &DemandClass) -> bool {
        let purpose = class.purpose.as_deref().unwrap_or("evaluation");
        let tolerance = class.failure_tolerance.as_deref().unwrap_or("none");
        self.purpose.as_deref().is_none_or(|p| p == purpose)
            && self
                .failure_tolerance
                .as_deref()
                .is_none_or(|t| t == tolerance)
    }
}

/// For each resource a seed publishes in `status.allocatable` and the profile scores, the
/// utilisation after placing the shoot, `(used + demand) / allocatable`; the seed's raw value is
/// the weighted mean over those resources. `LeastAllocated` scores `100 × (1 − mean)`,
/// `MostAllocated` `100 × mean`, both on an absolute scale.
///
/// A seed the shoot does not fit on (some resource over 100% after placement; the raw value is
/// then that resource's utilisation) scores 0 under both strategies, so that packing never
/// prefers a seed that is already full. A seed that publishes none of the scored resources
/// scores 0 too: nothing shows that the shoot fits there.
pub struct ResourceFit {
    strategy: FitStrategy,
    /// The scored resources in configuration order, shared with the details that name them.
    names: Arc<[String]>,
    /// Their weights, in the same order.
    weights: Vec<f64>,
    rules: Vec<RequestRule>,
    /// per rule, then for a shoot no rule matches: its demand of each scored resource, in order
    rule_demands: Vec<Vec<f64>>,
}

/// One resource of a seed after placing the shoot, for explanations.
#[derive(Clone, Copy)]
struct Part {
    /// index into `ResourceFit::names`
    resource: usize,
    after: f64,
    allocatable: f64,
    util: f64,
}

impl Part {
    fn write(&self, f: &mut fmt::Formatter<'_>, names: &[String]) -> fmt::Result {
        write!(
            f,
            "{} {}/{} (",
            names[self.resource],
            amount(self.after),
            amount(self.allocatable)
        )?;
        if self.util.is_finite() {
            write!(f, "{}%)", percent(self.util))
        } else {
            f.write_str("∞%)")
        }
    }
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    Ok(Box::new(args::from_args(args, path)?))
}

impl ResourceFit {
    pub fn new(
        strategy: FitStrategy,
        resources: Vec<(String, f64)>,
        rules: Vec<RequestRule>,
    ) -> Self {
        let (names, weights): (Vec<String>, Vec<f64>) = resources.into_iter().unzip();
        let demand = |rule: Option<&RequestRule>, resource: &str| {
            if resource == SHOOTS {
                return 1.0;
            }
            rule.and_then(|r| r.requests.get(resource).copied())
                .unwrap_or(0.0)
        };
        let rule_demands = rules
            .iter()
            .map(Some)
            .chain([None])
            .map(|rule| names.iter().map(|r| demand(rule, r)).collect())
            .collect();
        Self {
            strategy,
            names: names.into(),
            weights,
            rules,
            rule_demands,
        }
    }

    /// What one shoot of `class` demands of each scored resource, in order (first matching
    /// rule; none matches: 0, and 1 shoot).
    fn demands(&self, class: &DemandClass) -> &[f64] {
        let rule = self
            .rules
            .iter()
            .position(|r| r.matches(class))
            .unwrap_or(self.rules.len());
        &self.rule_demands[rule]
    }
}

/// Percent with at most one decimal.
fn percent(v: f64) -> f64 {
    (v * 1000.0).round() / 10.0
}

/// Quantities in explanations, in Kubernetes notation: `28`, `0.5`, `112Gi`, `500G`.
fn amount(v: f64) -> String {
    const UNITS: [(&str, f64); 6] = [
        ("Ti", 1_099_511_627_776.0),
        ("Gi", 1_073_741_824.0),
        ("Mi", 1_048_576.0),
        ("T", 1e12),
        ("G", 1e9),
        ("M", 1e6),
    ];
    for (suffix, unit) in UNITS {
        if v >= unit && (v / unit).fract() == 0.0 {
            return format!("{}{suffix}", v / unit);
        }
    }
    format!("{}", (v * 1000.0).round() / 1000.0)
}

impl ResourceFit {
    /// The shoot's own demand of each scored resource, and what one shoot of each demand class
    /// in the landscape demands of each (class-major), priced once per decision: a seed's usage
    /// is then O(classes × resources).
    fn priced(&self, cx: &ShootContext, snap: &Snapshot) -> (Vec<f64>, Vec<f64>) {
        let own_demand = self.demands(&DemandClass::of(cx.shoot)).to_vec();
        let classes = snap.usage().classes();
        let mut priced = Vec::with_capacity(classes.len() * self.names.len());
        for class in classes {
            priced.extend_from_slice(self.demands(class));
        }
        (own_demand, priced)
    }

    /// Each seed's raw value (NaN when it publishes none of the scored resources, or only
    /// resources weighted 0), a seed at a time over the resources' columns (looked up once);
    /// `part` gets each seed's (index in `positions`) resources after placement, in the order of
    /// the scored resources.
    fn fit(
        &self,
        cx: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        mut part: impl FnMut(usize, Part),
    ) -> Vec<f64> {
        let (own_demand, priced) = self.priced(cx, snap);
        let n = self.names.len();
        let cols = snap.columns();
        // Kept in the columns per seed as usage changes, not priced per decision.
        let priced_usage = cols.derived(PricedUsage { n, prices: priced });
        // The published resources: (index, column, weight, demand, counts shoots).
        let resources: Vec<_> = self
            .names
            .iter()
            .zip(&self.weights)
            .zip(&own_demand)
            .enumerate()
            .filter_map(|(resource, ((name, &weight), &demand))| {
                let column = cols.allocatable(name)?;
                Some((resource, column, weight, demand, name == SHOOTS))
            })
            .collect();
        positions
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let (mut sum, mut weights) = (0.0, 0.0);
                // The highest utilisation above 100%, if any (1.0: none).
                let mut worst = 1.0_f64;
                for &(resource, column, weight, demand, shoots) in &resources {
                    let Some(allocatable) = column[s as usize] else {
                        continue;
                    };
                    let used = if shoots {
                        cols.shoots(s) as f64
                    } else {
                        priced_usage[s as usize * n + resource]
                    };
                    let after = used + demand;
                    let util = utilisation(after, allocatable);
                    worst = worst.max(util);
                    sum += weight * util;
                    weights += weight;
                    part(
                        k,
                        Part {
                            resource,
                            after,
                            allocatable,
                            util,
                        },
                    );
                }
                if weights == 0.0 {
                    f64::NAN
                } else if worst > 1.0 {
                    worst
                } else {
                    sum / weights
                }
            })
            .collect()
    }
}

/// The share of `allocatable` that `after` takes (nothing allocatable: 0 when nothing is
/// asked for, infinite otherwise).
fn utilisation(after: f64, allocatable: f64) -> f64 {
    if allocatable > 0.0 {
        after / allocatable
    } else if after > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

impl Priority for ResourceFit {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Allocatable amounts and usage read from the snapshot's columns a resource at a time;
    /// with details, each seed's resources after placement are kept for its detail.
    fn raw(
        &self,
        cx: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        mut details: Details<'_>,
    ) -> Vec<f64> {
        if !details.on() {
            return self.fit(cx, positions, snap, |_, _| {});
        }
        let mut parts: Vec<Vec<Part>> = vec![Vec::with_capacity(self.names.len()); positions.len()];
        let values = self.fit(cx, positions, snap, |k, part| parts[k].push(part));
        for (&value, parts) in values.iter().zip(parts) {
            let names = Arc::clone(&self.names);
            details.put(|| {
                if value.is_nan() {
                    return Detail::lazy(move |f| {
                        write!(f, "no allocatable {} published", names.join(", "))
                    });
                }
                if value > 1.0
                    && let Some(&part) = parts.iter().find(|p| p.util == value)
                {
                    return Detail::lazy(move |f| {
                        f.write_str("does not fit: ")?;
                        part.write(f, &names)?;
                        f.write_str(" after placement")
                    });
                }
                Detail::lazy(move |f| {
                    write!(f, "{}% allocated after placement: ", percent(value))?;
                    for (k, part) in parts.iter().enumerate() {
                        if k > 0 {
                            f.write_str(", ")?;
                        }
                        part.write(f, &names)?;
                    }
                    Ok(())
                })
            });
        }
        values
    }

    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        values
            .iter()
            .map(|&v| {
                if !(v.is_finite() && v <= 1.0) {
                    return 0.0;
                }
                match self.strategy {
                    FitStrategy::LeastAllocated => MAX_SCORE * (1.0 - v),
                    FitStrategy::MostAllocated => MAX_SCORE * v,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

    /// `(seed, [(resource, allocatable)], [(purpose, shoots placed there)])`.
    type SeedSpec<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [(&'a str, usize)]);

    /// Scores for a new `production` shoot over the given seeds.
    fn run(p: &ResourceFit, seeds: &[SeedSpec]) -> Vec<(f64, String)> {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        for (name, alloc, placed) in seeds {
            let mut b = SeedBuilder::new(name);
            for (r, q) in alloc.iter() {
                b = b.allocatable(r, q);
            }
            snap.upsert_seed(&b.build());
            for (purpose, n) in placed.iter() {
                for i in 0..*n {
                    snap.upsert_shoot(
                        &ShootBuilder::new("garden-x", &format!("{name}-{purpose}-{i}"))
                            .purpose(purpose)
                            .seed(name)
                            .build(),
                    );
                }
            }
        }
        let shoot = ShootBuilder::new("garden-a", "new")
            .purpose("production")
            .build();
        crate::priorities::testing::evaluate(p, &shoot, &snap)
    }

    fn scores(got: &[(f64, String)]) -> Vec<f64> {
        crate::priorities::testing::rounded(got)
    }

    fn fit(args: serde_json::Value) -> ResourceFit {
        super::args::from_args(&args, "p").unwrap_or_else(|e| panic!("{e:?}"))
    }

    const CPU_RULES: &str = r#"[
        {"purpose": "production", "requests": {"cpu": "4"}},
        {"requests": {"cpu": "1"}}
    ]"#;

    fn rules() -> serde_json::Value {
        serde_json::from_str(CPU_RULES).unwrap()
    }

    #[test]
    fn quantities_are_shown_in_kubernetes_notation() {
        let cases = [
            (28.0, "28"),
            (0.5, "0.5"),
            (112.0 * 1024.0 * 1024.0 * 1024.0, "112Gi"),
            (1536.0 * 1024.0 * 1024.0, "1536Mi"),
            (500e9, "500G"),
            (2048.0, "2048"),
            (1.0 / 3.0, "0.333"),
        ];
        for (v, want) in cases {
            assert_eq!(amount(v), want, "{v}");
        }
    }

    #[test]
    fn least_allocated_prefers_the_emptiest_seed_after_placement() {
        let p = fit(serde_json::json!({"strategy": "LeastAllocated"}));
        // shoots only: a 1+1/10 = 20%, b 5+1/10 = 60%.
        let got = run(
            &p,
            &[
                ("a", &[("shoots", "10")], &[("evaluation", 1)]),
                ("b", &[("shoots", "10")], &[("evaluation", 5)]),
            ],
        );
        assert_eq!(scores(&got), vec![80.0, 40.0]);
        assert_eq!(got[0].1, "20% allocated after placement: shoots 2/10 (20%)");
    }

    #[test]
    fn most_allocated_prefers_the_fullest_seed() {
        let p = fit(serde_json::json!({"strategy": "MostAllocated"}));
        let got = run(
            &p,
            &[
                ("a", &[("shoots", "10")], &[("evaluation", 1)]),
                ("b", &[("shoots", "10")], &[("evaluation", 5)]),
            ],
        );
        assert_eq!(scores(&got), vec![20.0, 60.0]);
    }

    #[test]
    fn demand_of_other_resources_is_priced_per_purpose_and_weighted_per_resource() {
        let p = fit(serde_json::json!({
            "resources": [{"name": "shoots", "weight": 1}, {"name": "cpu", "weight": 3}],
            "controlPlaneRequests": rules(),
        }));
        // a: shoots (2+1)/10 = 30%; cpu 2 production × 4 + 0 + own 4 = 12/16 = 75%.
        // mean = (0.3 + 3 × 0.75) / 4 = 0.6375 -> LeastAllocated 36.25.
        let got = run(
            &p,
            &[(
                "a",
                &[("shoots", "10"), ("cpu", "16")],
                &[("production", 2)],
            )],
        );
        assert_eq!(scores(&got), vec![36.25]);
        assert_eq!(
            got[0].1,
            "63.8% allocated after placement: shoots 3/10 (30%), cpu 12/16 (75%)"
        );
        // An evaluation shoot matches the catch-all rule: 1 cpu each.
        let got = run(
            &p,
            &[(
                "a",
                &[("shoots", "10"), ("cpu", "16")],
                &[("evaluation", 4)],
            )],
        );
        // shoots 5/10 = 0.5; cpu 4 + 4 = 8/16 = 0.5 -> 50.
        assert_eq!(scores(&got), vec![50.0]);
    }

    #[test]
    fn resources_a_seed_does_not_publish_are_left_out_of_its_mean() {
        let p = fit(serde_json::json!({"controlPlaneRequests": rules()}));
        let got = run(
            &p,
            &[("a", &[("shoots", "4")], &[]), ("b", &[("cpu", "8")], &[])],
        );
        // a: shoots 1/4 -> 75; b: cpu 4/8 -> 50.
        assert_eq!(scores(&got), vec![75.0, 50.0]);
    }

    #[test]
    fn a_seed_publishing_nothing_scores_zero_and_says_so() {
        let p = fit(serde_json::json!({}));
        let got = run(&p, &[("a", &[], &[]), ("b", &[("shoots", "2")], &[])]);
        assert_eq!(scores(&got), vec![0.0, 50.0]);
        assert_eq!(got[0].1, "no allocatable shoots published");
        let p = fit(serde_json::json!({"strategy": "MostAllocated"}));
        assert_eq!(scores(&run(&p, &[("a", &[], &[])])), vec![0.0]);
    }

    #[test]
    fn equal_seeds_score_equally_and_a_single_seed_keeps_its_absolute_score() {
        let p = fit(serde_json::json!({}));
        let got = run(
            &p,
            &[
                ("a", &[("shoots", "4")], &[("evaluation", 1)]),
                ("b", &[("shoots", "4")], &[("evaluation", 1)]),
            ],
        );
        assert_eq!(scores(&got), vec![50.0, 50.0]);
        assert_eq!(
            scores(&run(&p, &[("a", &[("shoots", "4")], &[("evaluation", 3)])])),
            vec![0.0]
        );
    }

    #[test]
    fn a_seed_the_shoot_does_not_fit_on_scores_zero_under_both_strategies() {
        // a: 2 production shoots use 8 cpu, the new one needs 4 more: 12/10.
        let seeds: &[SeedSpec] = &[
            (
                "a",
                &[("shoots", "10"), ("cpu", "10")],
                &[("production", 2)],
            ),
            ("b", &[("shoots", "10"), ("cpu", "40")], &[]),
        ];
        let p =
            fit(serde_json::json!({"controlPlaneRequests": rules(), "strategy": "MostAllocated"}));
        let got = run(&p, seeds);
        // b: shoots 1/10, cpu 4/40 -> 10% -> 10.
        assert_eq!(scores(&got), vec![0.0, 10.0]);
        assert_eq!(got[0].1, "does not fit: cpu 12/10 (120%) after placement");
        let p = fit(serde_json::json!({"controlPlaneRequests": rules()}));
        assert_eq!(scores(&run(&p, seeds)), vec![0.0, 90.0]);
    }

    fn errors(args: serde_json::Value) -> Vec<String> {
        match build(&args, "p.args") {
            Ok(_) => Vec::new(),
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn bad_args_are_all_reported_with_their_paths() {
        let got = errors(serde_json::json!({
            "resources": [{"name": "cpu", "weight": 0}, {"name": "gpu"}, {"name": "cpu"}],
            "controlPlaneRequests": [
                {"purpose": "prod", "failureTolerance": "region", "requests": {"cpu": "lots", "memory": "-1Gi", "shoots": 1}},
                {"requests": {"cpu": 2}}
            ],
        }));
        assert_eq!(
            got,
            vec![
                "p.args.controlPlaneRequests[0].purpose: unsupported value \"prod\": supported values: \"evaluation\", \"testing\", \"development\", \"production\", \"infrastructure\"",
                "p.args.controlPlaneRequests[0].failureTolerance: unsupported value \"region\": supported values: \"none\", \"node\", \"zone\"",
                "p.args.controlPlaneRequests[0].requests.cpu: \"lots\" is not a quantity: a number with an optional sign, fraction and suffix (e.g. 250, 1500m, 16Gi, 1e3)",
                "p.args.controlPlaneRequests[0].requests.memory: must not be negative, got -1073741824",
                "p.args.controlPlaneRequests[0].requests.shoots: a shoot always demands exactly one shoot slot; remove this entry",
                "p.args.resources[0].weight: must be a positive number of at most 1000000, got 0",
                "p.args.resources[1].name: no shoot demands \"gpu\": add it to the requests of controlPlaneRequests",
                "p.args.resources[2].name: duplicate resource \"cpu\"",
            ]
        );
        let got = errors(serde_json::json!({"strategy": "Balanced"}));
        assert!(
            got[0].starts_with("p.args.strategy: unknown variant `Balanced`"),
            "{got:?}"
        );
    }
}
