//! A fail-back plan: the shoots that left a seed, back to it once it is healthy again.
//!
//! Each shoot is decided by the production decision on a snapshot counting the moves planned
//! before it, as a drain decides; it goes back only where that decision still ranks the seed
//! (every filter of the active profile passes, capacity included) and gardener-apiserver would
//! accept the seed change. The shoots that stay are listed with the reason. Start times come
//! from the shoots' maintenance windows, as every plan's do.

use std::collections::BTreeSet;

use crate::api::object_key;
use crate::schedule::schedule;

use super::{
    Blocked, Context, Figure, Goal, Move, Plan, PlanError, Timing, destination_blocker, explain,
    migration_of, placed_on, reason_line, rejections_of, source_blocker, unplaced, windows,
};

/// Plans moving `shoots` (`namespace/name`; those still on `seed`, or gone, are left out) back
/// to `seed`; fails before planning when `seed` is unknown or a maintenance window cannot be
/// read.
pub fn failback(
    cx: &Context,
    seed: &str,
    shoots: &[String],
    settings: windows::Settings,
) -> Result<Plan, PlanError> {
    if cx.seed(seed).is_none() {
        let known: BTreeSet<&str> = cx.landscape.seeds.iter().map(|s| s.name()).collect();
        return Err(PlanError::UnknownSeed {
            name: seed.to_string(),
            known: known.into_iter().collect::<Vec<_>>().join(", "),
        });
    }
    let wanted: BTreeSet<&str> = shoots.iter().map(String::as_str).collect();
    let mut candidates: Vec<usize> = (0..cx.landscape.shoots.len())
        .filter(|&i| {
            let s = &cx.landscape.shoots[i];
            wanted.contains(object_key(&s.metadata).as_str())
                && s.spec.seed_name.as_deref().is_some_and(|on| on != seed)
        })
        .collect();
    candidates.sort_by_key(|&i| {
        let s = &cx.landscape.shoots[i];
        (
            s.metadata.creation_timestamp.as_ref().map(|t| t.0),
            object_key(&s.metadata),
        )
    });
    let mut all_windows = Vec::with_capacity(candidates.len());
    for &i in &candidates {
        let key = object_key(&cx.landscape.shoots[i].metadata);
        let doc = cx.landscape.shoot_docs.get(i).and_then(|d| d.value());
        all_windows.push(windows::window_of(&key, doc.as_ref())?);
    }
    let mut snap = cx.snapshot();
    let before = super::Before::of(&snap, &BTreeSet::new());
    let was = snap.usage().shoots_on(seed);
    let (mut moves, mut move_windows, mut blocked) = (Vec::new(), Vec::new(), Vec::new());
    for (&i, window) in candidates.iter().zip(all_windows) {
        let shoot = &cx.landscape.shoots[i];
        let key = object_key(&shoot.metadata);
        let from = shoot.spec.seed_name.clone().unwrap_or_default();
        let stays = |category: &str, reason: String| Blocked {
            shoot: key.clone(),
            from: from.clone(),
            category: category.into(),
            reason,
        };
        if let Some((category, reason)) = source_blocker(cx, shoot, &from) {
            blocked.push(stays(&category, reason));
            continue;
        }
        snap.remove_shoot(&key);
        let verdict = match schedule(&unplaced(shoot), &snap, cx.profile, cx.now) {
            Err(e) => Err(stays("no seed fits", e.to_string())),
            Ok(d) => match d.ranking.iter().find(|s| &*s.seed == seed) {
                None => {
                    let why = rejections_of(&d, seed);
                    Err(stays(
                        &format!("{seed} does not fit"),
                        if why.is_empty() {
                            format!("the profile {} does not rank {seed}", cx.profile.name)
                        } else {
                            format!("{seed} does not fit: {}", why.join("; "))
                        },
                    ))
                }
                Some(s) => match destination_blocker(cx, shoot, &from, seed) {
                    Some(why) => Err(stays("migration refused", why)),
                    None => Ok(Move {
                        shoot: key.clone(),
                        index: i,
                        from: from.clone(),
                        to: seed.to_string(),
                        score: s.total.into_inner(),
                        reason: format!("back to {seed}: {}", reason_line(&d, seed, &[])),
                        explanation: explain(
                            &key,
                            &d,
                            cx.explain,
                            &cx.landscape.default_notes(&key),
                        ),
                        warnings: super::move_warnings(cx, &from, seed),
                        migration: migration_of(cx, shoot, &from, seed, &snap),
                        gain: None,
                        timing: Timing::Unscheduled,
                    }),
                },
            },
        };
        match verdict {
            Ok(m) => {
                snap.upsert_shoot(&placed_on(shoot, seed));
                moves.push(m);
                move_windows.push(window);
            }
            Err(b) => {
                snap.upsert_shoot(shoot);
                blocked.push(b);
            }
        }
    }
    before.assign(&mut moves, &move_windows, &settings, cx.now);
    let after = snap.usage().shoots_on(seed);
    Ok(Plan {
        goal: Goal::Failback {
            seed: seed.to_string(),
        },
        profile: cx.profile.name.clone(),
        now: cx.now,
        moves,
        blocked,
        seeds: before.loads(&snap),
        figures: vec![Figure {
            name: format!("shoots on {seed}"),
            before: was as f64,
            after: after as f64,
            unit: "shoots".into(),
        }],
        windows: settings,
        stamp: super::Stamp::of(cx),
    })
}

#[cfg(test)]
pub(crate) mod tests;
