//! `plan drain`: where every shoot on the given seeds should go.
//!
//! Shoots leave in creation order (then namespace/name); each planned move is counted on its
//! destination before the next shoot is decided. The drained seeds are no destination.

use std::collections::BTreeSet;

use crate::api::object_key;

use super::{
    Blocked, Choice, Context, Figure, Goal, Move, Plan, PlanError, Timing, choose, move_warnings,
    placed_on, shoots_on, source_blocker, windows,
};

/// Plans moving every shoot off `seeds`; fails before planning when a seed is unknown or a
/// shoot's maintenance window cannot be read.
pub fn drain(
    cx: &Context,
    seeds: &[String],
    settings: windows::Settings,
) -> Result<Plan, PlanError> {
    if seeds.is_empty() {
        return Err(PlanError::NoSeeds);
    }
    let known: BTreeSet<String> = cx
        .landscape
        .seeds
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    for name in seeds {
        if !known.contains(name) {
            return Err(PlanError::UnknownSeed {
                name: name.clone(),
                known: known.iter().cloned().collect::<Vec<_>>().join(", "),
            });
        }
    }
    let drained: BTreeSet<String> = seeds.iter().cloned().collect();
    let mut snap = cx.snapshot();
    let before = super::Before::of(&snap, &drained);
    for name in &drained {
        snap.remove_seed(name);
    }
    let candidates = shoots_on(cx.landscape, &drained);
    // Read every window first: a bad one fails the whole plan, not half of it.
    let mut all_windows = Vec::with_capacity(candidates.len());
    for &i in &candidates {
        let key = object_key(&cx.landscape.shoots[i].metadata);
        let doc = cx.landscape.shoot_docs.get(i).and_then(|d| d.value());
        all_windows.push(windows::window_of(&key, doc.as_ref())?);
    }
    let mut moves = Vec::new();
    let mut move_windows = Vec::new();
    let mut blocked = Vec::new();
    let none = BTreeSet::new();
    for (&i, window) in candidates.iter().zip(all_windows) {
        let shoot = &cx.landscape.shoots[i];
        let key = object_key(&shoot.metadata);
        let from = shoot.spec.seed_name.clone().unwrap_or_default();
        if let Some((category, reason)) = source_blocker(cx, shoot, &from) {
            blocked.push(Blocked {
                shoot: key,
                from,
                category,
                reason,
            });
            continue;
        }
        // The shoot's own load leaves with it: decide as if it were pending.
        snap.remove_shoot(&key);
        match choose(cx, shoot, &snap, &none) {
            Choice::To {
                seed,
                score,
                reason,
                explanation,
                migration,
            } => {
                snap.upsert_shoot(&placed_on(shoot, &seed));
                moves.push(Move {
                    shoot: key,
                    index: i,
                    warnings: move_warnings(cx, &from, &seed),
                    migration,
                    from,
                    to: seed,
                    score,
                    reason,
                    explanation,
                    gain: None,
                    timing: Timing::Unscheduled,
                });
                move_windows.push(window);
            }
            Choice::None {
                mut category,
                mut reason,
            } => {
                let names = || drained.iter().cloned().collect::<Vec<_>>().join(", ");
                if snap.seeds().next().is_none() {
                    // Not "no seeds are registered": they are, and they are all being drained.
                    category = "every seed drained".into();
                    reason = format!(
                        "0/0 seeds are available: every seed of the landscape is being drained \
                         ({})",
                        names()
                    );
                } else if snap.seeds().all(|s| s.usable.is_err()) {
                    category = "every usable seed drained".into();
                    reason = format!("{reason} Every usable seed is being drained ({}).", names());
                }
                snap.upsert_shoot(shoot);
                blocked.push(Blocked {
                    shoot: key,
                    from,
                    category,
                    reason,
                });
            }
        }
    }
    before.assign(&mut moves, &move_windows, &settings, cx.now);
    let seeds_after = before.loads(&snap);
    let left: u64 = seeds_after
        .iter()
        .filter(|s| s.drained)
        .map(|s| s.after)
        .sum();
    let was: u64 = seeds_after
        .iter()
        .filter(|s| s.drained)
        .map(|s| s.before)
        .sum();
    Ok(Plan {
        goal: Goal::Drain {
            seeds: drained.into_iter().collect(),
        },
        profile: cx.profile.name.clone(),
        now: cx.now,
        moves,
        blocked,
        seeds: seeds_after,
        figures: vec![Figure {
            name: "shoots on the drained seeds".into(),
            before: was as f64,
            after: left as f64,
            unit: "shoots".into(),
        }],
        windows: settings,
        stamp: super::Stamp::of(cx),
    })
}
