//! The three output formats of `simulate` and the `--explain` view.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{Landscape, Simulation};
use crate::schedule::{Decision, FitError};

/// One row per shoot: shoot, seed or `-`, total score, short reason.
pub fn render_table(sim: &Simulation) -> String {
    let mut rows: Vec<[String; 4]> = vec![[
        "SHOOT".into(),
        "SEED".into(),
        "SCORE".into(),
        "REASON".into(),
    ]];
    for o in &sim.outcomes {
        rows.push(match &o.result {
            Ok(d) => [
                o.shoot.clone(),
                d.seed.clone(),
                format!("{:.1}", d.winner().total.into_inner()),
                success_reason(d),
            ],
            Err(e) => [o.shoot.clone(), "-".into(), "-".into(), e.to_string()],
        });
    }
    let widths: Vec<usize> = (0..3)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        for (c, w) in widths.iter().enumerate() {
            out.push_str(&format!("{:<w$}  ", r[c], w = w));
        }
        out.push_str(&r[3]);
        out.push('\n');
    }
    let placed = sim.outcomes.iter().filter(|o| o.result.is_ok()).count();
    out.push_str(&format!(
        "\n{placed}/{} pending shoots scheduled, {} unschedulable.\n",
        sim.outcomes.len(),
        sim.outcomes.len() - placed
    ));
    out
}

fn success_reason(d: &Decision) -> String {
    let w = d.winner();
    let best: Vec<String> = w
        .priorities
        .iter()
        .map(|p| format!("{} ({})", p.name, p.detail))
        .collect();
    format!(
        "best of {} feasible seed(s): {}",
        d.ranking.len(),
        best.join(", ")
    )
}

/// `{"decisions":[{"shoot","seed","error","scores"}], "explanations":[...]}`.
pub fn render_json(sim: &Simulation) -> String {
    let mut decisions = Vec::new();
    let mut explanations = Vec::new();
    for o in &sim.outcomes {
        let (seed, error, scores) = match &o.result {
            Ok(d) => (json!(d.seed), Value::Null, scores_json(d)),
            Err(e) => (Value::Null, json!(e.to_string()), json!({})),
        };
        decisions.push(json!({"shoot": o.shoot, "seed": seed, "error": error, "scores": scores}));
        explanations.push(explanation_json(&o.shoot, &o.result));
    }
    let out = json!({"decisions": decisions, "explanations": explanations});
    serde_json::to_string_pretty(&out).expect("JSON of plain values") + "\n"
}

fn scores_json(d: &Decision) -> Value {
    let mut scores = Map::new();
    for s in &d.ranking {
        let prios: Map<String, Value> = s
            .priorities
            .iter()
            .map(|p| (p.name.to_string(), json!(round(p.weighted))))
            .collect();
        scores.insert(
            s.seed.to_string(),
            json!({"total": round(s.total.into_inner()), "priorities": prios}),
        );
    }
    Value::Object(scores)
}

fn explanation_json(shoot: &str, result: &Result<Decision, FitError>) -> Value {
    match result {
        Ok(d) => {
            let raw: Map<String, Value> = d
                .ranking
                .iter()
                .map(|s| {
                    let per: Map<String, Value> = s
                        .priorities
                        .iter()
                        .map(|p| {
                            (
                                p.name.to_string(),
                                json!({"raw": round(p.raw), "detail": p.detail, "score": round(p.score), "weight": p.weight}),
                            )
                        })
                        .collect();
                    (s.seed.to_string(), Value::Object(per))
                })
                .collect();
            json!({"shoot": shoot, "profile": d.profile, "priorities": raw, "rejected": rejections_json(&d.rejected)})
        }
        Err(FitError::NoFit { rejected, .. }) => {
            json!({"shoot": shoot, "rejected": rejections_json(rejected), "hints": result.as_ref().err().map(FitError::hints)})
        }
        Err(e) => json!({"shoot": shoot, "error": serde_json::to_value(e).unwrap_or(Value::Null)}),
    }
}

fn rejections_json(rejected: &[crate::schedule::Rejection]) -> Value {
    let m: Map<String, Value> = rejected
        .iter()
        .map(|r| {
            (
                r.seed.to_string(),
                json!({"stage": r.stage, "reason": r.reason.to_string()}),
            )
        })
        .collect();
    Value::Object(m)
}

fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The input Shoots, with `spec.seedName` filled in where a seed was found: the original
/// documents when the landscape kept them, else the shoots as parsed. Written one document at a
/// time, so only the output grows with the landscape.
pub fn render_yaml(landscape: &Landscape, sim: &Simulation) -> String {
    let placed: HashMap<usize, &str> = sim
        .outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().map(|d| (o.index, d.seed.as_str())))
        .collect();
    let documents = landscape.shoot_docs.len() == landscape.shoots.len();
    let mut out = String::new();
    for (i, shoot) in landscape.shoots.iter().enumerate() {
        let mut doc: Cow<'_, serde_yaml_ng::Value> = if documents {
            Cow::Borrowed(&landscape.shoot_docs[i])
        } else {
            Cow::Owned(serde_yaml_ng::to_value(shoot).expect("YAML of a parsed shoot"))
        };
        if let Some(seed) = placed.get(&i)
            && let Some(spec) = doc
                .to_mut()
                .get_mut("spec")
                .and_then(|s| s.as_mapping_mut())
        {
            spec.insert("seedName".into(), (*seed).into());
        }
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&serde_yaml_ng::to_string(&*doc).expect("YAML of parsed YAML"));
    }
    out
}

/// Every seed for one shoot: its score breakdown (best first), then the rejected seeds with the
/// stage that rejected them.
pub fn render_explain(shoot: &str, result: &Result<Decision, FitError>) -> String {
    let mut out = format!("Shoot {shoot}\n");
    let rejected = match result {
        Ok(d) => {
            out.push_str(&format!(
                "Scheduled to seed {:?} by profile {:?}\n\nFeasible seeds, best first:\n",
                d.seed, d.profile
            ));
            for (rank, s) in d.ranking.iter().enumerate() {
                out.push_str(&format!(
                    "  {}. {:<24} total {:>8.2}\n",
                    rank + 1,
                    s.seed,
                    s.total.into_inner()
                ));
                for p in &s.priorities {
                    out.push_str(&format!(
                        "       {:<20} {:>6.2} × {:<5} = {:>8.2}   {}\n",
                        p.name, p.score, p.weight, p.weighted, p.detail
                    ));
                }
            }
            &d.rejected[..]
        }
        Err(e) => {
            out.push_str(&format!("Unschedulable: {e}\n"));
            for h in e.hints() {
                out.push_str(&format!("  hint: {h}\n"));
            }
            match e {
                FitError::NoFit { rejected, .. } => &rejected[..],
                _ => &[],
            }
        }
    };
    if !rejected.is_empty() {
        out.push_str("\nRejected seeds:\n");
        for r in rejected {
            out.push_str(&format!("  {:<24} {:<22} {}\n", r.seed, r.stage, r.reason));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    use crate::profile::Profile;

    #[test]
    fn yaml_without_kept_documents_writes_the_parsed_shoots_with_their_seed() {
        let mut landscape = Landscape::default();
        landscape.seeds.push(SeedBuilder::new("s1").build());
        landscape
            .shoots
            .push(ShootBuilder::new("garden-dev", "web").build());
        landscape
            .cloud_profiles
            .push(CloudProfileBuilder::new("aws").build());
        assert!(landscape.shoot_docs.is_empty());
        let sim = crate::simulate::simulate(
            &landscape,
            &Profile::upstream_default(),
            &["default-scheduler".to_string()],
            &crate::regions::Regions::builtin(),
            chrono::Utc::now(),
        );
        let out = render_yaml(&landscape, &sim);
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&out).expect(&out);
        assert_eq!(doc["metadata"]["name"].as_str(), Some("web"), "{out}");
        assert_eq!(doc["spec"]["seedName"].as_str(), Some("s1"), "{out}");
    }
}
