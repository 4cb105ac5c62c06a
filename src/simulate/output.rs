//! The three output formats of `simulate` and the `--explain` view.
//!
//! Outcomes are written as they are decided and dropped: a decision over thousands of seeds
//! holds every seed's scores and rejections, so keeping them all would grow with pending
//! shoots × seeds. The table keeps one row per shoot (its columns are aligned at the end); JSON
//! keeps nothing (its two arrays are written in two passes over the same deterministic run).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::{Map, Value, json};

use super::{Landscape, Outcome, Skipped};
use crate::schedule::{Decision, FitError};

/// The view `simulate` takes, under its table: `explain` decides one shoot alone, so the two may
/// differ on capacity.
const VIEW: &str = "Pending shoots decided in creation order, each placement counted for the \
                    next (explain decides one shoot alone).";

/// One row per shoot: shoot, seed or `-`, total score, short reason; then the summary and the
/// objects skipped while loading.
pub fn write_table(
    out: &mut impl Write,
    outcomes: impl Iterator<Item = Outcome>,
    skipped: &[Skipped],
) -> io::Result<()> {
    let mut rows: Vec<[String; 4]> = vec![[
        "SHOOT".into(),
        "SEED".into(),
        "SCORE".into(),
        "REASON".into(),
    ]];
    let mut placed = 0;
    for o in outcomes {
        rows.push(match o.result {
            Ok(d) => {
                placed += 1;
                [
                    o.shoot,
                    d.seed.clone(),
                    format!("{:.1}", d.winner().total.into_inner()),
                    success_reason(&d),
                ]
            }
            Err(e) => [o.shoot, "-".into(), "-".into(), e.to_string()],
        });
    }
    let widths: Vec<usize> = (0..3)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        for (c, w) in widths.iter().enumerate() {
            write!(out, "{:<w$}  ", r[c], w = w)?;
        }
        writeln!(out, "{}", r[3])?;
    }
    let decided = rows.len() - 1;
    writeln!(
        out,
        "\n{placed}/{decided} pending shoots scheduled, {} unschedulable.\n{VIEW}",
        decided - placed
    )?;
    if !skipped.is_empty() {
        writeln!(
            out,
            "\n{} object(s) skipped while reading the manifests (--strict makes this an error):",
            skipped.len()
        )?;
        for s in skipped {
            writeln!(out, "  {s}")?;
        }
    }
    Ok(())
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

/// `{"decisions":[{"shoot","seed","error","scores"}], "explanations":[...]}`, plus
/// `"skipped": ["file: document N: message", ...]` when objects were skipped while loading.
/// Laid out exactly as `serde_json::to_string_pretty` lays out the whole value; `run` is called
/// once per array and must yield the same outcomes each time.
pub fn write_json<I: Iterator<Item = Outcome>>(
    out: &mut impl Write,
    mut run: impl FnMut() -> I,
    skipped: &[Skipped],
) -> io::Result<()> {
    out.write_all(b"{\n")?;
    write_json_array(out, "decisions", run().map(|o| decision_json(&o)))?;
    out.write_all(b",\n")?;
    write_json_array(
        out,
        "explanations",
        run().map(|o| explanation_json(&o.shoot, &o.result)),
    )?;
    if !skipped.is_empty() {
        out.write_all(b",\n")?;
        write_json_array(out, "skipped", skipped.iter().map(|s| json!(s.to_string())))?;
    }
    out.write_all(b"\n}\n")
}

/// `  "key": [ ...elements... ]` at the indentation of a top-level key.
fn write_json_array(
    out: &mut impl Write,
    key: &str,
    elements: impl Iterator<Item = Value>,
) -> io::Result<()> {
    write!(out, "  {}: [", json!(key))?;
    let mut empty = true;
    for e in elements {
        out.write_all(if empty { b"\n" } else { b",\n" })?;
        empty = false;
        let text = serde_json::to_string_pretty(&e).map_err(io::Error::other)?;
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.write_all(b"\n")?;
            }
            write!(out, "    {line}")?;
        }
    }
    if empty {
        out.write_all(b"]")
    } else {
        out.write_all(b"\n  ]")
    }
}

fn decision_json(o: &Outcome) -> Value {
    let (seed, error, scores) = match &o.result {
        Ok(d) => (json!(d.seed), Value::Null, scores_json(d)),
        Err(e) => (Value::Null, json!(e.to_string()), json!({})),
    };
    json!({"shoot": o.shoot, "seed": seed, "error": error, "scores": scores})
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
pub fn write_yaml(
    out: &mut impl Write,
    landscape: &Landscape,
    outcomes: impl Iterator<Item = Outcome>,
) -> io::Result<()> {
    let placed: HashMap<usize, String> = outcomes
        .filter_map(|o| o.result.ok().map(|d| (o.index, d.seed)))
        .collect();
    let documents = landscape.shoot_docs.len() == landscape.shoots.len();
    for (i, shoot) in landscape.shoots.iter().enumerate() {
        let mut doc: Cow<'_, serde_yaml_ng::Value> = match landscape
            .shoot_docs
            .get(i)
            .filter(|_| documents)
            .and_then(|d| d.value())
        {
            Some(value) => Cow::Owned(value),
            None => Cow::Owned(serde_yaml_ng::to_value(shoot).map_err(io::Error::other)?),
        };
        if let Some(seed) = placed.get(&i)
            && let Some(spec) = doc
                .to_mut()
                .get_mut("spec")
                .and_then(|s| s.as_mapping_mut())
        {
            spec.insert("seedName".into(), seed.as_str().into());
        }
        if i > 0 {
            out.write_all(b"---\n")?;
        }
        out.write_all(
            serde_yaml_ng::to_string(&*doc)
                .map_err(io::Error::other)?
                .as_bytes(),
        )?;
    }
    Ok(())
}

/// Every seed for one shoot: its score breakdown (best first), then the rejected seeds with the
/// stage that rejected them.
/// [`render_explain`] with the defaults that changed how the files are read (see
/// [`Landscape::default_notes`]) after the shoot's line.
pub fn render_explain_with_defaults(
    shoot: &str,
    result: &Result<Decision, FitError>,
    defaults: &[String],
) -> String {
    let mut out = render_explain(shoot, result);
    if !defaults.is_empty() {
        let at = out.find('\n').map_or(out.len(), |i| i + 1);
        let mut block = String::from(
            "Read as gardener-apiserver would store it (--as-written reads the files as they are):\n",
        );
        for d in defaults {
            block.push_str(&format!("  default: {d}\n"));
        }
        out.insert_str(at, &block);
    }
    out
}

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

    /// A landscape of `seeds` and `shoots`, with CloudProfile `aws`.
    fn landscape(seeds: Vec<crate::api::Seed>, shoots: Vec<crate::api::Shoot>) -> Landscape {
        let mut l = Landscape::default();
        l.seeds = seeds;
        l.shoots = shoots;
        l.cloud_profiles = vec![CloudProfileBuilder::new("aws").build()];
        l
    }

    #[test]
    fn yaml_without_kept_documents_writes_the_parsed_shoots_with_their_seed() {
        let landscape = landscape(
            vec![SeedBuilder::new("s1").build()],
            vec![ShootBuilder::new("garden-dev", "web").build()],
        );
        assert!(landscape.shoot_docs.is_empty());
        let profile = Profile::upstream_default();
        let names = ["default-scheduler".to_string()];
        let sim = crate::simulate::Simulator::new(
            &landscape,
            &profile,
            &names,
            &crate::regions::Regions::builtin(),
            chrono::Utc::now(),
        );
        let mut out = Vec::new();
        write_yaml(&mut out, &landscape, sim).unwrap();
        let out = String::from_utf8(out).unwrap();
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&out).expect(&out);
        assert_eq!(doc["metadata"]["name"].as_str(), Some("web"), "{out}");
        assert_eq!(doc["spec"]["seedName"].as_str(), Some("s1"), "{out}");
    }

    #[test]
    fn streamed_json_is_laid_out_as_the_whole_value_pretty_printed() {
        let landscape = landscape(
            vec![
                SeedBuilder::new("s1").build(),
                SeedBuilder::new("s2").region("us-east-1").build(),
            ],
            vec![
                ShootBuilder::new("garden-dev", "a").build(),
                ShootBuilder::new("garden-dev", "b").build(),
                ShootBuilder::new("garden-dev", "far")
                    .region("ap-south-1")
                    .build(),
            ],
        );
        let skipped = [Skipped {
            location: crate::simulate::Location {
                path: "x.yaml".into(),
                document: 1,
                item: None,
            },
            message: "Seed s3: spec.taints: invalid type".into(),
        }];
        let profile = Profile::upstream_default();
        let names = ["default-scheduler".to_string()];
        let now = chrono::Utc::now();
        let regions = crate::regions::Regions::builtin();
        let run = || crate::simulate::Simulator::new(&landscape, &profile, &names, &regions, now);
        for skipped in [&skipped[..], &[]] {
            let mut out = Vec::new();
            write_json(&mut out, run, skipped).unwrap();
            let mut whole = json!({
                "decisions": run().map(|o| decision_json(&o)).collect::<Vec<_>>(),
                "explanations": run().map(|o| explanation_json(&o.shoot, &o.result)).collect::<Vec<_>>(),
            });
            if !skipped.is_empty() {
                whole["skipped"] =
                    json!(["x.yaml: document 1: Seed s3: spec.taints: invalid type"]);
            }
            let want = serde_json::to_string_pretty(&whole).unwrap() + "\n";
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        let mut empty = Vec::new();
        write_json(&mut empty, std::iter::empty, &[]).unwrap();
        assert_eq!(
            String::from_utf8(empty).unwrap(),
            serde_json::to_string_pretty(&json!({"decisions": [], "explanations": []})).unwrap()
                + "\n"
        );
    }
}
