//! Choosing a destination for one shoot, and why it stays or goes: the blockers of a move
//! (source and destination, as gardener-apiserver checks them), its migration kind and
//! warnings, the best destination under the profile, and the lines that explain a decision.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::{Gates, Shoot, object_key};
use crate::profile::Profile;
use crate::schedule::{Decision, FitError, schedule};
use crate::simulate::render_explain_with_defaults;
use crate::snapshot::Snapshot;

use super::{Context, migration};

/// The shoot as if it were pending: no seed in spec nor status, everything else kept.
pub(crate) fn unplaced(shoot: &Shoot) -> Shoot {
    let mut s = shoot.clone();
    s.spec.seed_name = None;
    if let Some(status) = s.status.as_mut() {
        status.seed_name = None;
    }
    s
}

/// The shoot placed on `seed`.
pub(crate) fn placed_on(shoot: &Shoot, seed: &str) -> Shoot {
    let mut s = unplaced(shoot);
    s.spec.seed_name = Some(seed.to_string());
    s
}

/// Why a shoot cannot leave its seed at all, if it cannot.
pub(crate) fn source_blocker(cx: &Context, shoot: &Shoot, from: &str) -> Option<(String, String)> {
    if shoot.metadata.deletion_timestamp.is_some() {
        return Some(("deleting".into(), "the shoot is being deleted".into()));
    }
    if let Some(why) = Gates::of(&shoot.metadata).reason() {
        return Some(("gated".into(), format!("the shoot is {why}")));
    }
    if shoot.is_self_hosted() {
        return Some((
            "self-hosted".into(),
            "the control plane runs on the shoot's own workers: no seed to move from".into(),
        ));
    }
    match cx.seed(from) {
        Some(seed) if seed.spec.backup.is_none() => Some((
            "source without backup".into(),
            format!(
                "seed {from} has no spec.backup: control-plane migration restores etcd from the \
                 source seed's backup"
            ),
        )),
        _ => None,
    }
}

/// Why gardener-apiserver would refuse to move `shoot` from `from` to `to`, if it would
/// (beyond the scheduler's own filters; see [`migration::refusal`]).
pub(crate) fn destination_blocker(
    cx: &Context,
    shoot: &Shoot,
    from: &str,
    to: &str,
) -> Option<String> {
    match cx.seed(to) {
        Some(seed) => migration::refusal(migration::domain_of(shoot), cx.seed(from), seed),
        None => Some(format!("seed {to} is not in the landscape")),
    }
}

/// The kind of the migration of `shoot` from `from` to `to`.
pub(crate) fn migration_of(
    cx: &Context,
    shoot: &Shoot,
    from: &str,
    to: &str,
    snap: &Snapshot,
) -> migration::Migration {
    match (cx.seed(from), cx.seed(to)) {
        (Some(a), Some(b)) => migration::kind(
            shoot,
            a,
            b,
            snap,
            &cx.landscape.config_maps,
            cx.live_migration,
        ),
        _ => migration::Migration {
            kind: migration::Kind::Classic,
            not_live: vec!["a seed of the move is not in the landscape".into()],
        },
    }
}

/// Warnings for a move between `from` and `to` that does not block it.
pub(crate) fn move_warnings(cx: &Context, from: &str, to: &str) -> Vec<String> {
    let provider = |n: &str| {
        cx.seed(n)
            .and_then(|s| s.spec.provider.as_ref())
            .map(|p| p.type_.clone())
            .unwrap_or_default()
    };
    let (a, b) = (provider(from), provider(to));
    if a != b {
        vec![format!(
            "provider type changes ({a} -> {b}): pods on {to} need network access to the backup \
             storage of {from}, and the shoot's nodes to the new control plane"
        )]
    } else {
        Vec::new()
    }
}

/// Where a shoot can go, or why it cannot.
pub(crate) enum Choice {
    To {
        seed: String,
        score: f64,
        reason: String,
        explanation: String,
        migration: migration::Migration,
    },
    None {
        category: String,
        reason: String,
    },
}

/// The best destination for `shoot` (already unplaced in `snap`) among the seeds the profile
/// ranks, skipping `excluded` and seeds gardener-apiserver would refuse; with
/// [`Context::prefer_live`], a highly available shoot takes the best one it can move to live,
/// if there is one.
pub(crate) fn choose(
    cx: &Context,
    shoot: &Shoot,
    snap: &Snapshot,
    excluded: &BTreeSet<String>,
) -> Choice {
    let pending = unplaced(shoot);
    let key = object_key(&shoot.metadata);
    let from = shoot.spec.seed_name.clone().unwrap_or_default();
    let wants_live = cx.prefer_live
        && cx.live_migration
        && shoot
            .spec
            .control_plane
            .as_ref()
            .and_then(|c| c.high_availability.as_ref())
            .is_some();
    match schedule(&pending, snap, cx.profile, cx.now) {
        Ok(d) => {
            let mut skipped = Vec::new();
            let mut best: Option<(&crate::schedule::SeedScore, migration::Migration)> = None;
            // what was skipped above the destination chosen so far
            let mut skipped_above = 0;
            for s in &d.ranking {
                if excluded.contains(&*s.seed) {
                    continue;
                }
                if let Some(why) = destination_blocker(cx, shoot, &from, &s.seed) {
                    skipped.push(why);
                    continue;
                }
                let m = migration_of(cx, shoot, &from, &s.seed, snap);
                let live = m.is_live();
                if best.is_none() {
                    best = Some((s, m));
                    skipped_above = skipped.len();
                } else if live {
                    // a better-ranked destination that is not live is passed over
                    let (first, _) = best.take().expect("set above");
                    skipped.push(format!(
                        "{} (score {:.1}) ranks higher but cannot be reached live; --prefer-live",
                        first.seed,
                        first.total.into_inner()
                    ));
                    best = Some((s, m));
                    skipped_above = skipped.len();
                }
                if live || !wants_live {
                    break;
                }
            }
            if let Some((s, migration)) = best {
                skipped.truncate(skipped_above);
                return Choice::To {
                    seed: s.seed.to_string(),
                    score: s.total.into_inner(),
                    reason: reason_line(&d, &s.seed, &skipped),
                    explanation: explain(&key, &d, cx.explain, &cx.landscape.default_notes(&key)),
                    migration,
                };
            }
            Choice::None {
                category: "no migration destination".into(),
                reason: if skipped.is_empty() {
                    "every feasible seed is being drained".into()
                } else {
                    format!(
                        "the feasible seeds fail a migration precondition: {}",
                        skipped.join("; ")
                    )
                },
            }
        }
        Err(e) => Choice::None {
            category: category_of(cx.profile, &e),
            reason: e.to_string(),
        },
    }
}

/// The `simulate --explain` view of a decision, or, with `limit`, its best `limit` feasible
/// seeds and the rejections counted by reason; `defaults`: the defaults that changed how the
/// files are read ([`Landscape::default_notes`](crate::simulate::Landscape::default_notes)).
pub fn explain(shoot: &str, d: &Decision, limit: Option<usize>, defaults: &[String]) -> String {
    let Some(limit) = limit else {
        return render_explain_with_defaults(shoot, &Ok(d.clone()), defaults);
    };
    let top = Decision {
        seed: d.seed.clone(),
        profile: d.profile.clone(),
        ranking: d.ranking.iter().take(limit).cloned().collect(),
        rejected: Vec::new(),
        margin: d.margin,
        rejected_by_stage: d.rejected_by_stage.clone(),
    };
    let mut out = render_explain_with_defaults(shoot, &Ok(top), defaults);
    if d.ranking.len() > limit {
        out.push_str(&format!(
            "  … and {} more feasible seed(s) (--explain lists every seed)\n",
            d.ranking.len() - limit
        ));
    }
    if !d.rejected.is_empty() {
        let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for r in &d.rejected {
            *counts.entry((r.stage, r.reason.summary())).or_default() += 1;
        }
        let mut counts: Vec<_> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out.push_str(&format!("\nRejected seeds: {}\n", d.rejected.len()));
        for ((stage, why), n) in counts {
            out.push_str(&format!("  {n:>6} seed(s) {why} ({stage})\n"));
        }
    }
    out
}

/// Why the decision rejected `seed`: each of its rejections as `reason (stage)`; empty when it
/// did not.
pub(crate) fn rejections_of(d: &Decision, seed: &str) -> Vec<String> {
    d.rejected
        .iter()
        .filter(|r| &*r.seed == seed)
        .map(|r| format!("{} ({})", r.reason, r.stage))
        .collect()
}

pub(crate) fn reason_line(d: &Decision, seed: &str, skipped: &[String]) -> String {
    let Some(s) = d.ranking.iter().find(|s| &*s.seed == seed) else {
        return String::new();
    };
    let rank = d.ranking.iter().position(|x| &*x.seed == seed).unwrap_or(0) + 1;
    let parts: Vec<String> = s
        .priorities
        .iter()
        .map(|p| format!("{} ({})", p.name, p.detail))
        .collect();
    let mut line = format!(
        "rank {rank} of {} feasible seed(s), score {:.1}: {}",
        d.ranking.len(),
        s.total.into_inner(),
        parts.join(", ")
    );
    if !skipped.is_empty() {
        line.push_str(&format!("; skipped: {}", skipped.join("; ")));
    }
    line
}

/// The histogram category of a failed decision: what rejected the seeds that got furthest,
/// i.e. the rejections of the last stage (in profile order) that rejected any seed.
pub(crate) fn category_of(profile: &Profile, e: &FitError) -> String {
    match e {
        FitError::NoFit { rejected, .. } => {
            let last = profile
                .stages
                .iter()
                .rev()
                .map(|s| s.name())
                .find(|name| rejected.iter().any(|r| r.stage == *name));
            let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
            for r in rejected.iter().filter(|r| Some(r.stage) == last) {
                *counts.entry(r.reason.summary()).or_default() += 1;
            }
            counts
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
                .map(|(s, _)| format!("no seed fits: the last seeds {s}"))
                .unwrap_or_else(|| "no seed fits".into())
        }
        FitError::InvalidShoot { field, .. } => format!("invalid shoot ({field})"),
        FitError::InvalidRegionConfig { .. } => "invalid region ConfigMap".into(),
        FitError::OverBudget { stage, .. } => format!("decision over its budget ({stage})"),
        FitError::Gated { .. } => "scheduling gated".into(),
    }
}
