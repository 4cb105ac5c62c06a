//! `simulate --compare OLD`: the same landscape decided under two configurations, the shoots
//! whose placement differs (with why), and a summary of each configuration's outcome.
//!
//! Each run keeps one compact record per shoot (its seed, or why it could not be placed, and
//! the winner's score line), never whole decisions, so memory grows with shoots, not with
//! shoots × seeds.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Landscape, Simulator};
use crate::profile::Profile;
use crate::regions::Regions;
use crate::schedule::{Decision, FitError};
use crate::snapshot::Snapshot;

/// One configuration to decide with.
pub struct Side<'a> {
    /// `old` or `new`
    pub label: &'a str,
    pub profile: &'a Profile,
    pub scheduler_names: &'a [String],
    pub regions: &'a Regions,
}

/// One shoot's outcome under one configuration, compactly.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// The seed, or `None` when unschedulable.
    pub seed: Option<String>,
    /// The winner's score line, or why the shoot could not be placed.
    pub reason: String,
}

/// A shoot placed differently by the two configurations.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    pub shoot: String,
    /// `None`: the old configuration does not decide this shoot (another schedulerName).
    pub old: Option<Placement>,
    pub new: Option<Placement>,
    /// Where the old configuration's seed stood under the new one (scored lower, or rejected).
    pub old_seed_under_new: Option<String>,
    /// The new decision with every seed (the `simulate --explain` view), for the HTML report.
    #[serde(skip)]
    pub explanation: Option<String>,
}

/// Latency of the placements made, from `LatencyDistance`'s estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LatencySummary {
    pub shoots: usize,
    pub mean_ms: f64,
    pub p95_ms: f64,
}

/// Shoots ÷ `status.allocatable.shoots` over the seeds that state it, after every placement.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Utilisation {
    pub seeds: usize,
    /// percent
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// population standard deviation, percentage points
    pub stddev: f64,
}

/// One configuration's outcome over the landscape.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub configuration: String,
    pub decided: usize,
    pub placed: usize,
    pub unschedulable: usize,
    /// `None` when the profile has no `LatencyDistance` priority (no latency data configured).
    pub latency: Option<LatencySummary>,
    pub utilisation: Option<Utilisation>,
    /// Shoots on the seeds of each region after every placement (bound ones included).
    pub shoots_per_region: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub differences: Vec<Difference>,
    pub old: Summary,
    pub new: Summary,
}

struct Run {
    /// shoot -> placement, in decision order
    order: Vec<String>,
    placements: HashMap<String, Placement>,
    summary: Summary,
}

fn placement(result: &Result<Decision, FitError>) -> Placement {
    match result {
        Ok(d) => Placement {
            seed: Some(d.seed.clone()),
            reason: d.winner().short(),
        },
        Err(e) => Placement {
            seed: None,
            reason: e.to_string(),
        },
    }
}

/// Where `seed` stood in a decision: its score line, or the stage that rejected it.
fn standing(result: &Result<Decision, FitError>, seed: &str) -> String {
    let rejected = match result {
        Ok(d) => {
            if let Some(s) = d.ranking.iter().find(|s| &*s.seed == seed) {
                return format!("{seed}: {}", s.short());
            }
            &d.rejected
        }
        Err(FitError::NoFit { rejected, .. }) => rejected,
        Err(e) => return format!("{seed}: not considered ({e})"),
    };
    match rejected.iter().find(|r| &*r.seed == seed) {
        Some(r) => format!("{seed}: rejected by {}: {}", r.stage, r.reason),
        None => format!("{seed}: not a candidate (no such seed)"),
    }
}

/// Decides the landscape with one configuration; `old` (for the new run) gives the shoots
/// whose old seed is to be located in the new decision.
fn run(
    landscape: &Landscape,
    side: &Side,
    now: DateTime<Utc>,
    old: Option<&HashMap<String, Placement>>,
    standings: &mut HashMap<String, (Option<String>, String)>,
) -> Run {
    let mut sim = Simulator::new(
        landscape,
        side.profile,
        side.scheduler_names,
        side.regions,
        now,
    );
    let mut order = Vec::new();
    let mut placements = HashMap::new();
    let mut latencies = Vec::new();
    // The priorities of a breakdown are in the profile's order.
    let latency = side
        .profile
        .priorities
        .iter()
        .position(|p| p.priority.raw_is_latency_ms());
    let (mut placed, mut unschedulable) = (0, 0);
    for o in sim.by_ref() {
        let p = placement(&o.result);
        match &o.result {
            Ok(d) => {
                placed += 1;
                if let Some(l) = latency.and_then(|j| d.winner().priorities.get(j)) {
                    latencies.push(l.raw);
                }
            }
            Err(_) => unschedulable += 1,
        }
        if let Some(q) = old
            .and_then(|m| m.get(&o.shoot))
            .filter(|q| q.seed != p.seed)
        {
            let standing = q.seed.as_deref().map(|seed| standing(&o.result, seed));
            let explanation = super::render_explain_with_defaults(
                &o.shoot,
                &o.result,
                &landscape.default_notes(&o.shoot),
            );
            standings.insert(o.shoot.clone(), (standing, explanation));
        }
        order.push(o.shoot.clone());
        placements.insert(o.shoot, p);
    }
    let has_latency = latency.is_some();
    let snapshot = sim.into_snapshot();
    let summary = Summary {
        configuration: side.label.to_string(),
        decided: placed + unschedulable,
        placed,
        unschedulable,
        latency: has_latency
            .then(|| latency_summary(&mut latencies))
            .flatten(),
        utilisation: utilisation(&snapshot),
        shoots_per_region: shoots_per_region(&snapshot),
    };
    Run {
        order,
        placements,
        summary,
    }
}

/// Mean and nearest-rank 95th percentile; `None` without values.
pub fn latency_summary(values: &mut [f64]) -> Option<LatencySummary> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let rank = (0.95 * n as f64).ceil() as usize;
    Some(LatencySummary {
        shoots: n,
        mean_ms: round1(mean),
        p95_ms: round1(values[rank.clamp(1, n) - 1]),
    })
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn utilisation(snap: &Snapshot) -> Option<Utilisation> {
    let shares: Vec<f64> = snap
        .seeds()
        .filter_map(|s| {
            let cap = *s.allocatable.get("shoots")?;
            (cap > 0.0).then(|| 100.0 * snap.usage().shoots_on(&s.name) as f64 / cap)
        })
        .collect();
    if shares.is_empty() {
        return None;
    }
    let n = shares.len() as f64;
    let mean = shares.iter().sum::<f64>() / n;
    let var = shares.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    Some(Utilisation {
        seeds: shares.len(),
        min: round1(shares.iter().copied().fold(f64::INFINITY, f64::min)),
        max: round1(shares.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        mean: round1(mean),
        stddev: round1(var.sqrt()),
    })
}

fn shoots_per_region(snap: &Snapshot) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for s in snap.seeds() {
        let n = snap.usage().shoots_on(&s.name);
        if n > 0 {
            *out.entry(s.region.clone()).or_insert(0) += n;
        }
    }
    out
}

/// Decides the landscape under `old` and `new`; the differences follow the new run's order
/// (creation order), then shoots only the old configuration decides.
pub fn compare(landscape: &Landscape, old: &Side, new: &Side, now: DateTime<Utc>) -> Comparison {
    let mut standings = HashMap::new();
    let old_run = run(landscape, old, now, None, &mut standings);
    let new_run = run(
        landscape,
        new,
        now,
        Some(&old_run.placements),
        &mut standings,
    );
    let mut differences = Vec::new();
    for shoot in &new_run.order {
        let n = &new_run.placements[shoot];
        let o = old_run.placements.get(shoot);
        if o.is_some_and(|o| o.seed == n.seed) {
            continue;
        }
        let standing = standings.remove(shoot);
        differences.push(Difference {
            shoot: shoot.clone(),
            old: o.cloned(),
            new: Some(n.clone()),
            old_seed_under_new: standing.as_ref().and_then(|(s, _)| s.clone()),
            explanation: standing.map(|(_, e)| e),
        });
    }
    for shoot in &old_run.order {
        if !new_run.placements.contains_key(shoot) {
            differences.push(Difference {
                shoot: shoot.clone(),
                old: Some(old_run.placements[shoot].clone()),
                new: None,
                old_seed_under_new: None,
                explanation: None,
            });
        }
    }
    Comparison {
        differences,
        old: old_run.summary,
        new: new_run.summary,
    }
}

fn seed_or_dash(p: Option<&Placement>) -> &str {
    match p {
        Some(Placement { seed: Some(s), .. }) => s,
        Some(Placement { seed: None, .. }) => "-",
        None => "(not decided)",
    }
}

/// The differing shoots (`shoot: old -> new` and why), then one summary per configuration.
pub fn write_compare_table(out: &mut impl Write, c: &Comparison) -> io::Result<()> {
    if c.differences.is_empty() {
        writeln!(
            out,
            "No shoot is placed differently ({} decided).",
            c.new.decided
        )?;
    } else {
        writeln!(
            out,
            "{} shoot(s) placed differently (old -> new):",
            c.differences.len()
        )?;
    }
    for d in &c.differences {
        writeln!(
            out,
            "\n{}: {} -> {}",
            d.shoot,
            seed_or_dash(d.old.as_ref()),
            seed_or_dash(d.new.as_ref())
        )?;
        if let Some(o) = &d.old {
            writeln!(out, "  old: {}", o.reason)?;
        }
        if let Some(n) = &d.new {
            writeln!(out, "  new: {}", n.reason)?;
        }
        if let Some(s) = &d.old_seed_under_new {
            writeln!(out, "  under new, old seed {s}")?;
        }
    }
    for s in [&c.old, &c.new] {
        write_summary(out, s)?;
    }
    Ok(())
}

fn write_summary(out: &mut impl Write, s: &Summary) -> io::Result<()> {
    writeln!(out, "\nSummary ({}):", s.configuration)?;
    writeln!(
        out,
        "  placed {}/{}, unschedulable {}",
        s.placed, s.decided, s.unschedulable
    )?;
    match &s.latency {
        Some(l) => writeln!(
            out,
            "  latency: mean {} ms, p95 {} ms ({} placements)",
            l.mean_ms, l.p95_ms, l.shoots
        )?,
        None => writeln!(
            out,
            "  latency: - (no LatencyDistance priority, or nothing placed)"
        )?,
    }
    match &s.utilisation {
        Some(u) => writeln!(
            out,
            "  utilisation: min {}%, max {}%, mean {}%, stddev {} pp ({} seeds with allocatable shoots)",
            u.min, u.max, u.mean, u.stddev, u.seeds
        )?,
        None => writeln!(out, "  utilisation: - (no seed states allocatable shoots)")?,
    }
    let regions: Vec<String> = s
        .shoots_per_region
        .iter()
        .map(|(r, n)| format!("{r} {n}"))
        .collect();
    writeln!(
        out,
        "  shoots per region: {}",
        if regions.is_empty() {
            "-".to_string()
        } else {
            regions.join(", ")
        }
    )
}

/// The comparison as one JSON document.
pub fn write_compare_json(out: &mut impl Write, c: &Comparison) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, c).map_err(io::Error::other)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p95_is_the_nearest_rank() {
        let mut v: Vec<f64> = (1..=20).map(f64::from).collect();
        let s = latency_summary(&mut v).unwrap();
        assert_eq!((s.shoots, s.mean_ms, s.p95_ms), (20, 10.5, 19.0));
        let mut one = [7.0];
        assert_eq!(latency_summary(&mut one).unwrap().p95_ms, 7.0);
        assert!(latency_summary(&mut []).is_none());
    }
}
