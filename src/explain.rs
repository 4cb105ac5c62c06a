//! `gardener-scheduler explain`: one shoot's decision as it was recorded and as it would be made
//! now, on the same landscape `simulate` reads, and what changed between the two.
//!
//! A bound shoot is decided again as if it were pending (its own load taken off its seed), with
//! the profile active now; a pending shoot is decided as the scheduler would decide it. Beside
//! the decision, every filter is asked about every seed, so that `explain` can say which
//! filters now turn the shoot's seed away, and which seed is nearest when none fits.

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

mod record;
mod text;
#[cfg(test)]
use crate::api::ANNOTATION_DECISION;
use crate::api::{Gates, Shoot, object_key};
use crate::profile::Profile;
use crate::regions::Regions;
use crate::schedule::{Decision, FitError, Rejection, every_rejection, schedule};
use crate::simulate::{Landscape, snapshot_of};
pub use text::render_explanation;

/// What `explain` found for one shoot.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// `namespace/name`
    pub shoot: String,
    /// When the shoot was decided again (RFC 3339).
    pub time: String,
    /// The view the decision takes, in one line: this shoot alone on the landscape as it is.
    pub view: &'static str,
    /// `spec.seedName` now; `None` for a pending shoot.
    pub seed: Option<String>,
    /// The decision record the binding left (`scheduling.gardener.cloud/decision`), as stored,
    /// when it agrees with the shoot.
    pub record: Option<serde_json::Value>,
    /// A record that contradicts the shoot (another seed, a pending shoot, a time that is not
    /// one or lies ahead, values out of range), as stored: not this shoot's decision.
    pub untrusted_record: Option<serde_json::Value>,
    /// Why the annotation is not a record, or why the record is untrusted.
    pub record_problem: Option<String>,
    /// The decision made now.
    pub now: Redecision,
    /// The answer in one word: `same`, `wouldMove` (bound, and a decision now picks another
    /// seed; nothing moved), `noFit` (bound, but no seed fits now), `wouldBind`,
    /// `unschedulable`, `gated`, `invalid`.
    pub verdict: &'static str,
    /// What changed since the record, or what holds a pending shoot, one sentence each.
    pub changes: Vec<String>,
    /// For a bound shoot: what every filter says of its seed now.
    pub current_seed: Option<SeedVerdict>,
    /// When no seed fits: the seed that the fewest filters reject (the first by name among
    /// equals), and what they say.
    pub nearest: Option<SeedVerdict>,
    /// How many other seeds are rejected by as few filters as the nearest.
    pub as_near: usize,
}

/// The decision made now.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Redecision {
    /// The profile that decided (the one active now).
    pub profile: String,
    /// The chosen seed, if one fits.
    pub seed: Option<String>,
    /// Its weighted total.
    pub total: Option<f64>,
    /// How far it is ahead of the next feasible seed.
    pub margin: Option<f64>,
    /// Its per-priority scores.
    pub priorities: Vec<PriorityScore>,
    /// Feasible seeds now.
    pub feasible: usize,
    /// Every feasible seed now with its total, best first.
    pub ranking: Vec<RankedSeed>,
    /// The highest total the profile allows (the priorities' weights × 100).
    pub max_total: Option<f64>,
    /// How many seeds each filter rejected (each seed under the first that rejects it).
    pub rejected: Vec<StageCount>,
    /// The reason line when no seed fits (as the `SchedulingFailed` event says it).
    pub message: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RankedSeed {
    pub seed: String,
    pub total: f64,
}

#[derive(Debug, Serialize)]
pub struct PriorityScore {
    pub name: String,
    pub score: f64,
    pub weight: f64,
}

#[derive(Debug, Serialize)]
pub struct StageCount {
    pub stage: &'static str,
    pub seeds: usize,
}

/// What every filter says of one seed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedVerdict {
    pub seed: String,
    /// Whether every filter keeps it.
    pub feasible: bool,
    /// Its place among the feasible seeds now (1 = chosen), when feasible.
    pub rank: Option<usize>,
    pub total: Option<f64>,
    /// Every filter that rejects it, in stage order.
    pub rejected_by: Vec<StageReason>,
}

#[derive(Debug, Serialize)]
pub struct StageReason {
    pub stage: &'static str,
    pub reason: String,
    /// What would make the filter keep the seed, when the filter can say.
    pub hint: Option<String>,
}

/// The view of a pending shoot's decision: `simulate` decides the pending shoots in order, each
/// taking capacity from the ones after it; `explain` decides one alone.
pub const VIEW_PENDING: &str = "this shoot alone, on the landscape as it is \
     (simulate also counts the capacity taken by the shoots it decided before)";

/// The view of a bound shoot's decision.
pub const VIEW_BOUND: &str =
    "this shoot alone, as if pending (its own load taken off its seed), on the landscape as it is";

/// Why `explain` has nothing to say.
#[derive(Debug, PartialEq)]
pub struct NotFound(pub String);

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no shoot {} in the landscape", self.0)
    }
}

fn short(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn stage_reasons(rejections: &[Rejection]) -> Vec<StageReason> {
    rejections
        .iter()
        .map(|r| StageReason {
            stage: r.stage,
            reason: r.reason.to_string(),
            hint: r.reason.hint(),
        })
        .collect()
}

/// Explains the shoot `key` (`namespace/name`) of `landscape` with `profile` at `now`.
pub fn explain(
    landscape: &Landscape,
    key: &str,
    profile: &Profile,
    regions: &Regions,
    now: DateTime<Utc>,
) -> Result<Explanation, NotFound> {
    let shoot = landscape
        .shoots
        .iter()
        .find(|s| object_key(&s.metadata) == key)
        .ok_or_else(|| NotFound(key.to_string()))?;
    let seed = shoot.spec.seed_name.clone().filter(|s| !s.is_empty());
    let record::ReadRecord {
        trusted: record,
        untrusted: untrusted_record,
        problem: record_problem,
    } = record::read_record(shoot, seed.as_deref(), now);
    // Decided again as if pending: its own load is no longer on its seed.
    let mut pending = shoot.clone();
    pending.spec.seed_name = None;
    if let Some(status) = pending.status.as_mut() {
        status.seed_name = None;
    }
    let mut snap = snapshot_of(landscape);
    snap.set_regions(regions.clone());
    snap.upsert_shoot(&pending);
    let result = match Gates::of(&shoot.metadata).reason() {
        Some(reason) => Err(FitError::Gated { reason }),
        None => schedule(&pending, &snap, profile, now),
    };
    let every = match &result {
        Err(FitError::Gated { .. }) => Vec::new(),
        _ => every_rejection(&pending, &snap, profile, now).unwrap_or_default(),
    };
    let verdict_of = |name: &str| -> SeedVerdict {
        let rejected = every
            .iter()
            .find(|(s, _)| &**s == name)
            .map(|(_, r)| &r[..]);
        let ranked = result.as_ref().ok().and_then(|d| {
            d.ranking
                .iter()
                .position(|s| &*s.seed == name)
                .map(|i| (i + 1, short(d.ranking[i].total.into_inner())))
        });
        SeedVerdict {
            seed: name.to_string(),
            feasible: ranked.is_some(),
            rank: ranked.map(|r| r.0),
            total: ranked.map(|r| r.1),
            rejected_by: rejected.map(stage_reasons).unwrap_or_default(),
        }
    };
    let current_seed = seed.as_deref().map(verdict_of);
    let nearest = match &result {
        Err(FitError::NoFit { .. }) => nearest(&every).map(|name| verdict_of(&name)),
        _ => None,
    };
    let as_near = nearest.as_ref().map_or(0, |n| {
        let fewest = n.rejected_by.len();
        every.iter().filter(|(_, r)| r.len() == fewest).count() - 1
    });
    let now_decision = redecision(&result, profile);
    let (verdict, changes) = compare(
        landscape,
        shoot,
        seed.as_deref(),
        record.as_ref(),
        &result,
        current_seed.as_ref(),
        profile,
    );
    Ok(Explanation {
        shoot: key.to_string(),
        time: now.to_rfc3339_opts(SecondsFormat::Secs, true),
        view: if seed.is_some() {
            VIEW_BOUND
        } else {
            VIEW_PENDING
        },
        seed,
        record,
        untrusted_record,
        record_problem,
        now: now_decision,
        verdict,
        changes,
        current_seed,
        nearest,
        as_near,
    })
}

/// The seed the fewest filters reject (name order among equals), when any seed exists.
fn nearest(every: &[(Arc<str>, Vec<Rejection>)]) -> Option<String> {
    every
        .iter()
        .min_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| a.0.cmp(&b.0)))
        .map(|(s, _)| s.to_string())
}

fn redecision(result: &Result<Decision, FitError>, profile: &Profile) -> Redecision {
    match result {
        Ok(d) => Redecision {
            profile: d.profile.clone(),
            seed: Some(d.seed.clone()),
            total: Some(short(d.winner().total.into_inner())),
            margin: d.margin.map(short),
            priorities: d
                .winner()
                .priorities
                .iter()
                .map(|p| PriorityScore {
                    name: p.name.to_string(),
                    score: short(p.score),
                    weight: short(p.weight),
                })
                .collect(),
            feasible: d.ranking.len(),
            ranking: d
                .ranking
                .iter()
                .map(|s| RankedSeed {
                    seed: s.seed.to_string(),
                    total: short(s.total.into_inner()),
                })
                .collect(),
            max_total: Some(short(
                d.winner().priorities.iter().map(|p| p.weight * 100.0).sum(),
            )),
            rejected: d
                .rejected_by_stage
                .iter()
                .map(|&(stage, seeds)| StageCount { stage, seeds })
                .collect(),
            message: None,
        },
        Err(e) => {
            let mut rejected: Vec<StageCount> = Vec::new();
            if let FitError::NoFit { rejected: r, .. } = e {
                for stage in profile.stages.iter().map(|s| s.name()) {
                    let seeds = r.iter().filter(|x| x.stage == stage).count();
                    if seeds > 0 {
                        rejected.push(StageCount { stage, seeds });
                    }
                }
            }
            Redecision {
                profile: profile.name.clone(),
                seed: None,
                total: None,
                margin: None,
                priorities: Vec::new(),
                feasible: 0,
                ranking: Vec::new(),
                max_total: None,
                rejected,
                message: Some(e.to_string()),
            }
        }
    }
}

/// The verdict and the sentences that explain it.
fn compare(
    landscape: &Landscape,
    shoot: &Shoot,
    seed: Option<&str>,
    record: Option<&serde_json::Value>,
    result: &Result<Decision, FitError>,
    current: Option<&SeedVerdict>,
    profile: &Profile,
) -> (&'static str, Vec<String>) {
    let mut changes = Vec::new();
    if let Some(r) = record
        && let Some(was) = r.get("profile").and_then(|p| p.as_str())
        && was != profile.name
    {
        changes.push(format!(
            "The profile active now is {:?}; the decision was made by {was:?}.",
            profile.name
        ));
    }
    let verdict = match (seed, result) {
        (_, Err(FitError::Gated { .. })) => {
            changes.push(match Gates::of(&shoot.metadata) {
                Gates::Malformed(problem) => format!(
                    "It is not decided while its scheduling gates annotation is malformed \
                     ({problem}): fix or remove the annotation."
                ),
                gates => format!(
                    "It waits for {}; it is not decided until they are removed.",
                    gates.listed()
                ),
            });
            "gated"
        }
        (_, Err(e @ (FitError::InvalidShoot { .. } | FitError::InvalidRegionConfig { .. }))) => {
            changes.push(format!("It cannot be decided: {e}."));
            "invalid"
        }
        (Some(s), Ok(d)) if d.seed == s => {
            if let Some(r) = record
                && let Some(total) = r.get("total").and_then(|t| t.as_f64())
            {
                changes.push(format!(
                    "It would still go to {s}: total {:.2} now, {total:.2} at the decision.",
                    d.winner().total.into_inner()
                ));
            } else {
                changes.push(format!("It would still go to {s}."));
            }
            "same"
        }
        (Some(s), Ok(d)) => {
            changes.push(format!("It would go to {} now, not to {s}.", d.seed));
            match current {
                Some(c) if !c.feasible => {
                    for r in &c.rejected_by {
                        changes.push(format!("{s} is now rejected by {}: {}.", r.stage, r.reason));
                    }
                }
                Some(c) => {
                    changes.push(format!(
                        "{s} still fits but ranks {} with total {:.2}; {} totals {:.2}.",
                        c.rank.unwrap_or(0),
                        c.total.unwrap_or(0.0),
                        d.seed,
                        d.winner().total.into_inner()
                    ));
                    changes.extend(scores_moved(record, d, s));
                }
                None => {}
            }
            if let Some(r) = record
                && let Some(time) = r.get("time").and_then(|t| t.as_str())
                && let Ok(decided) = DateTime::parse_from_rfc3339(time)
                && let Some(new) = landscape.seeds.iter().find(|x| {
                    x.metadata.name.as_deref() == Some(&d.seed)
                        && x.metadata
                            .creation_timestamp
                            .as_ref()
                            .is_some_and(|c| c.0.as_second() > decided.timestamp())
                })
            {
                changes.push(format!(
                    "{} was registered after the decision ({}).",
                    d.seed,
                    new.metadata
                        .creation_timestamp
                        .as_ref()
                        .map_or(String::new(), |c| c.0.to_string())
                ));
            }
            changes.push(
                "The scheduler does not move a bound shoot: this is where a new decision would put it."
                    .to_string(),
            );
            "wouldMove"
        }
        (Some(s), Err(e)) => {
            changes.push(format!(
                "No seed fits it now, {s} included (reasons: {}).",
                e.reason_names().join(", ")
            ));
            if let Some(c) = current {
                for r in &c.rejected_by {
                    changes.push(format!("{s} is now rejected by {}: {}.", r.stage, r.reason));
                }
            }
            "noFit"
        }
        (None, Ok(d)) => {
            changes.push(format!(
                "It would go to {} now (schedulerName {:?}).",
                d.seed,
                shoot.scheduler_name()
            ));
            "wouldBind"
        }
        (None, Err(e)) => {
            changes.push(format!(
                "It stays pending: no seed fits now (reasons: {}).",
                e.reason_names().join(", ")
            ));
            "unschedulable"
        }
    };
    (verdict, changes)
}

/// The priorities whose score for `seed` differs now from the record's, one sentence each.
fn scores_moved(record: Option<&serde_json::Value>, d: &Decision, seed: &str) -> Vec<String> {
    let Some(was) = record
        .and_then(|r| r.get("priorities"))
        .and_then(|p| p.as_object())
    else {
        return Vec::new();
    };
    let Some(now) = d.ranking.iter().find(|s| &*s.seed == seed) else {
        return Vec::new();
    };
    now.priorities
        .iter()
        .filter_map(|p| {
            let before = was.get(p.name)?.get("score")?.as_f64()?;
            ((before - short(p.score)).abs() >= 0.01).then(|| {
                format!(
                    "{} scores {seed} {:.2} now, {before:.2} at the decision.",
                    p.name, p.score
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

    fn landscape(seeds: Vec<crate::api::Seed>, shoot: Shoot) -> Landscape {
        let mut l = Landscape::default();
        l.seeds = seeds;
        l.shoots.push(shoot);
        l.cloud_profiles
            .push(CloudProfileBuilder::new("aws").build());
        l
    }

    fn run(l: &Landscape) -> Explanation {
        explain(
            l,
            "garden-dev/web",
            &Profile::upstream_default(),
            &Regions::builtin(),
            Utc::now(),
        )
        .unwrap()
    }

    const RECORD: &str = r#"{"v":1,"profile":"default","time":"2026-12-01T09:00:00Z","seed":"s1","total":100.0,"margin":null,"priorities":{"ShootCount":{"score":100.0,"weight":1.0}},"rejected":{},"scheduler":"0.1.0"}"#;

    /// Shoot `garden-dev/web` on `seed`, its decision record annotation `record`.
    fn bound(seed: &str, record: &str) -> Shoot {
        ShootBuilder::new("garden-dev", "web")
            .seed(seed)
            .annotation(ANNOTATION_DECISION, record)
            .build()
    }

    #[test]
    fn a_bound_shoot_that_would_stay_says_so_with_its_record() {
        let shoot = bound("s1", RECORD);
        let e = run(&landscape(vec![SeedBuilder::new("s1").build()], shoot));
        assert_eq!(e.verdict, "same", "{e:?}");
        assert_eq!(e.record.as_ref().unwrap()["seed"], "s1");
        assert_eq!(e.now.seed.as_deref(), Some("s1"));
        assert!(render_explanation(&e).contains("It would still go to s1"));
    }

    #[test]
    fn a_bound_shoot_whose_seed_is_now_tainted_would_move_and_says_which_filter() {
        let shoot = bound("s1", RECORD);
        let seeds = vec![
            SeedBuilder::new("s1").taint("dedicated", None).build(),
            SeedBuilder::new("s2").build(),
        ];
        let e = run(&landscape(seeds, shoot));
        assert_eq!(e.verdict, "wouldMove", "{e:?}");
        assert_eq!(e.now.seed.as_deref(), Some("s2"));
        let c = e.current_seed.as_ref().unwrap();
        assert!(!c.feasible);
        assert_eq!(c.rejected_by[0].stage, "Taints");
        let text = render_explanation(&e);
        assert!(text.contains("s1 is now rejected by Taints"), "{text}");
    }

    #[test]
    fn a_bound_shoot_outscored_now_names_the_priority_whose_score_moved() {
        let shoot = bound("s1", RECORD);
        let mut l = landscape(
            vec![
                SeedBuilder::new("s1").build(),
                SeedBuilder::new("s2").build(),
            ],
            shoot,
        );
        for i in 0..2 {
            l.shoots.push(
                ShootBuilder::new("garden-x", &format!("o{i}"))
                    .seed("s1")
                    .build(),
            );
        }
        let e = run(&l);
        assert_eq!(e.verdict, "wouldMove", "{e:?}");
        let c = e.current_seed.as_ref().unwrap();
        assert!(c.feasible && c.rank == Some(2), "{c:?}");
        assert!(
            e.changes
                .iter()
                .any(|c| c.starts_with("ShootCount scores s1")
                    && c.ends_with("100.00 at the decision.")),
            "{:?}",
            e.changes
        );
    }

    #[test]
    fn a_pending_shoot_nothing_fits_names_its_nearest_seed_and_every_filter_against_it() {
        let shoot = ShootBuilder::new("garden-dev", "web").build();
        let seeds = vec![
            // two reasons against s1, one against s2
            SeedBuilder::new("s1")
                .provider("gcp")
                .taint("dedicated", None)
                .build(),
            SeedBuilder::new("s2").taint("dedicated", None).build(),
        ];
        let e = run(&landscape(seeds, shoot));
        assert_eq!(e.verdict, "unschedulable", "{e:?}");
        let n = e.nearest.as_ref().unwrap();
        assert_eq!(n.seed, "s2");
        assert_eq!(n.rejected_by.len(), 1);
        assert_eq!(n.rejected_by[0].stage, "Taints");
        assert!(e.now.message.as_deref().unwrap().starts_with("0/2 seeds"));
    }

    #[test]
    fn a_gated_shoot_is_not_decided_and_names_its_gates() {
        let shoot = ShootBuilder::new("garden-dev", "web")
            .annotation(crate::api::ANNOTATION_GATES, "quota-approval")
            .build();
        let e = run(&landscape(vec![SeedBuilder::new("s1").build()], shoot));
        assert_eq!(e.verdict, "gated");
        assert_eq!(
            e.changes,
            [
                "It waits for scheduling gate(s) quota-approval; it is not decided until they are removed."
            ]
        );
        assert!(e.now.seed.is_none());
        let shoot = ShootBuilder::new("garden-dev", "web")
            .annotation(crate::api::ANNOTATION_GATES, "quota approval")
            .build();
        let e = run(&landscape(vec![SeedBuilder::new("s1").build()], shoot));
        assert_eq!(e.verdict, "gated");
        assert_eq!(e.changes.len(), 1, "{:?}", e.changes);
        assert!(
            e.changes[0].starts_with("It is not decided while its scheduling gates annotation is malformed (metadata.annotations[scheduling.gardener.cloud/gates]: item 1 \"quota approval\" is not a qualified name")
                && e.changes[0].ends_with("): fix or remove the annotation."),
            "{:?}",
            e.changes
        );
    }

    #[test]
    fn an_unreadable_record_is_said_not_fatal() {
        let shoot = bound("s1", "{not json");
        let e = run(&landscape(vec![SeedBuilder::new("s1").build()], shoot));
        assert!(e.record.is_none());
        assert!(e.record_problem.as_deref().unwrap().contains("not JSON"));
        assert_eq!(e.verdict, "same");
    }

    #[test]
    fn a_record_of_another_seed_is_shown_untrusted_never_as_the_shoots_decision() {
        let shoot = bound("s2", RECORD);
        let e = run(&landscape(vec![SeedBuilder::new("s2").build()], shoot));
        assert!(e.record.is_none(), "{e:?}");
        assert_eq!(e.untrusted_record.as_ref().unwrap()["seed"], "s1");
        assert_eq!(e.verdict, "same");
        // The record's total is not compared with the decision now.
        assert_eq!(e.changes, ["It would still go to s2."]);
        let text = render_explanation(&e);
        assert!(
            text.contains("  untrusted: the record contradicts the shoot, so it is not taken as its decision: it names seed \"s1\", but spec.seedName is \"s2\".\n  as stored (not this shoot's decision):\n  seed s1 "),
            "{text}"
        );
    }

    #[test]
    fn an_unknown_shoot_is_an_error() {
        let l = landscape(vec![], ShootBuilder::new("garden-dev", "web").build());
        let err = explain(
            &l,
            "garden-dev/other",
            &Profile::upstream_default(),
            &Regions::builtin(),
            Utc::now(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no shoot garden-dev/other in the landscape"
        );
    }
}
