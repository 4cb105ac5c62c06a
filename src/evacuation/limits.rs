//! The limits of the automatic evacuation (`evacuation.mode: automatic`), read off the shoots
//! alone, so that a new leader counts what the last one started: a move is in flight from its
//! binding until its shoot reports the destination and a finished migration, as Gardener runs a
//! control-plane migration; a move started by the scheduler process carries the time it started
//! in an annotation, and those of the last hour count against `maxMovesPerHour`. Pure: the time
//! is passed in.

use chrono::{DateTime, Duration, Utc};

use crate::api::Shoot;
use crate::config::Automatic;

/// Annotation of a shoot the automatic evacuation moved: when its binding was written
/// (RFC 3339) and from which seed, `2026-12-06T03:00:00Z from s1`.
pub const ANNOTATION_EVACUATED: &str = "scheduling.gardener.cloud/evacuated";

/// The span `maxMovesPerHour` counts over.
pub const HOUR: Duration = Duration::hours(1);

/// The value of [`ANNOTATION_EVACUATED`] for a move from `from` started at `at`.
pub fn stamp(at: DateTime<Utc>, from: &str) -> String {
    format!(
        "{} from {from}",
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

/// When the automatic evacuation last moved `shoot`, if it did and the annotation reads.
pub fn evacuated_at(shoot: &Shoot) -> Option<DateTime<Utc>> {
    let value = shoot
        .metadata
        .annotations
        .as_ref()?
        .get(ANNOTATION_EVACUATED)?;
    let at = value.split_whitespace().next()?;
    DateTime::parse_from_rfc3339(at).ok().map(|t| t.to_utc())
}

/// Whether `shoot`'s control plane is being migrated: `spec.seedName` differs from
/// `status.seedName` (the source's `Migrate`), or they agree and the last operation is a
/// `Migrate` or `Restore` not yet `Succeeded` (the destination's `Restore`). A failed migration
/// stays in flight: it is not finished.
pub fn in_flight(shoot: &Shoot) -> bool {
    let spec = shoot.spec.seed_name.as_deref().filter(|s| !s.is_empty());
    let status = shoot.status.as_ref();
    let at = status
        .and_then(|s| s.seed_name.as_deref())
        .filter(|s| !s.is_empty());
    let (Some(spec), Some(at)) = (spec, at) else {
        return false;
    };
    if spec != at {
        return true;
    }
    status
        .and_then(|s| s.last_operation.as_ref())
        .is_some_and(|op| {
            (op.type_ == "Migrate" || op.type_ == "Restore") && op.state != "Succeeded"
        })
}

/// What the limits are counted on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Shoots with a seed (`spec.seedName` set).
    pub scheduled: usize,
    /// Migrations in flight ([`in_flight`]).
    pub in_flight: usize,
    /// Moves the automatic evacuation started within the last hour ([`evacuated_at`]).
    pub last_hour: usize,
}

/// Counts `shoots` at `now`.
pub fn tally<'s>(shoots: impl IntoIterator<Item = &'s Shoot>, now: DateTime<Utc>) -> Tally {
    let mut t = Tally::default();
    for s in shoots {
        if s.spec.seed_name.as_deref().is_some_and(|n| !n.is_empty()) {
            t.scheduled += 1;
        }
        if in_flight(s) {
            t.in_flight += 1;
        }
        if evacuated_at(s).is_some_and(|at| at <= now && now - at < HOUR) {
            t.last_hour += 1;
        }
    }
    t
}

/// Which limit leaves no room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    InFlight,
    PerHour,
    Share,
}

/// How many moves may start now, and, when none may, which limit holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    pub moves: usize,
    pub held: Option<Held>,
}

/// Migrations in flight `maxShareInFlight` percent of `scheduled` shoots allows, rounded down:
/// the share is never exceeded, so a landscape too small for one move in its share moves none.
pub fn share_cap(share_percent: u32, scheduled: usize) -> usize {
    scheduled.saturating_mul(share_percent as usize) / 100
}

/// The moves that may start now: the least room left under the three limits.
pub fn room(limits: &Automatic, t: &Tally) -> Room {
    let left = [
        (
            Held::InFlight,
            (limits.max_moves_in_flight as usize).saturating_sub(t.in_flight),
        ),
        (
            Held::PerHour,
            (limits.max_moves_per_hour as usize).saturating_sub(t.last_hour),
        ),
        (
            Held::Share,
            share_cap(limits.max_share_in_flight, t.scheduled).saturating_sub(t.in_flight),
        ),
    ];
    let (held, moves) = left
        .into_iter()
        .min_by_key(|&(_, n)| n)
        .unwrap_or((Held::InFlight, 0));
    Room {
        moves,
        held: (moves == 0).then_some(held),
    }
}

/// Why no move starts, for the log: `2 migration(s) in flight (maxMovesInFlight 2)`.
pub fn held_line(limits: &Automatic, t: &Tally, held: Held) -> String {
    match held {
        Held::InFlight => format!(
            "{} migration(s) in flight (maxMovesInFlight {})",
            t.in_flight, limits.max_moves_in_flight
        ),
        Held::PerHour => format!(
            "{} move(s) started within the last hour (maxMovesPerHour {})",
            t.last_hour, limits.max_moves_per_hour
        ),
        Held::Share => format!(
            "{} migration(s) in flight of {} scheduled shoot(s): maxShareInFlight {}% allows {}",
            t.in_flight,
            t.scheduled,
            limits.max_share_in_flight,
            share_cap(limits.max_share_in_flight, t.scheduled)
        ),
    }
}

#[cfg(test)]
mod tests;
