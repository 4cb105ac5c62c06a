//! A planned move checked again, just before it starts, against the landscape as it is now:
//! the production decision ([`crate::schedule::schedule`]) must still accept the destination
//! (every filter, capacity counting the migrations in flight, which occupy their destination),
//! gardener-apiserver must still accept the seed change, and a move planned live must still
//! meet every live-migration prerequisite. A move that no longer holds is skipped, never forced.

use crate::api::{Shoot, object_key};
use crate::plan::{self, Context};
use crate::schedule::schedule;
use crate::snapshot::Snapshot;

use super::saved::Planned;

/// Checks `planned` for `shoot` (as just read) on `snap`, the landscape with every move started
/// so far counted. On success the shoot counts on its destination in `snap` from then on;
/// otherwise `snap` is left as it was and the reason is returned.
pub fn recheck(
    cx: &Context,
    shoot: &Shoot,
    planned: &Planned,
    snap: &mut Snapshot,
) -> Result<(), String> {
    if let Some((_, why)) = plan::source_blocker(cx, shoot, &planned.from) {
        return Err(why);
    }
    let key = object_key(&shoot.metadata);
    snap.remove_shoot(&key);
    let verdict = decide(cx, shoot, planned, snap);
    match &verdict {
        Ok(()) => snap.upsert_shoot(&plan::placed_on(shoot, &planned.to)),
        Err(_) => snap.upsert_shoot(shoot),
    }
    verdict
}

fn decide(cx: &Context, shoot: &Shoot, planned: &Planned, snap: &Snapshot) -> Result<(), String> {
    let to = planned.to.as_str();
    let decision = schedule(&plan::unplaced(shoot), snap, cx.profile, cx.now)
        .map_err(|e| format!("no seed fits the shoot any more: {e}"))?;
    if !decision.ranking.iter().any(|s| &*s.seed == to) {
        let rejected = plan::rejections_of(&decision, to);
        return Err(if rejected.is_empty() {
            format!(
                "destination {to} is no longer among the seeds the profile {} ranks",
                cx.profile.name
            )
        } else {
            format!("destination {to} no longer fits: {}", rejected.join("; "))
        });
    }
    if let Some(why) = plan::destination_blocker(cx, shoot, &planned.from, to) {
        return Err(why);
    }
    if planned.live() {
        let m = plan::migration_of(cx, shoot, &planned.from, to, snap);
        if !m.is_live() {
            return Err(format!(
                "planned live, but a live migration is no longer possible: {}",
                m.not_live.join("; ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
