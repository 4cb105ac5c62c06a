//! The pure core of `plan apply`: what the live shoot says about a move, and which moves may
//! start at an instant given every move's state. No I/O and no clock: the loop in
//! [`super::run`] reads the cluster, asks here, and writes.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::saved::Planned;
use crate::api::Shoot;
use crate::plan::windows::Window;

/// Where a move stands.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum State {
    /// Not started: the shoot is on its source.
    Waiting,
    /// Bound to the destination, the migration not finished; `since` on the apply's clock.
    #[serde(rename_all = "camelCase")]
    InFlight {
        #[serde(serialize_with = "crate::plan::windows::rfc3339")]
        since: DateTime<Utc>,
    },
    /// On its destination and its last operation succeeded.
    Done,
    /// Not carried out, and why (never forced).
    Skipped { reason: String },
    /// The migration failed or ran out of time.
    Failed { reason: String },
}

impl State {
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            State::Done | State::Skipped { .. } | State::Failed { .. }
        )
    }
}

/// What the live shoot says about its move.
#[derive(Clone, Debug, PartialEq)]
pub enum Observed {
    /// The shoot is gone.
    Gone,
    /// `spec.seedName` is still the source.
    OnSource,
    /// Bound to the destination; its migration is under way (`last`: the last operation).
    Migrating { last: String },
    /// On the destination, and the last operation succeeded.
    Arrived,
    /// Bound to the destination, and a Migrate or Restore operation failed.
    Failed { last: String },
    /// Bound to a third seed (someone else moved it), or to none.
    Elsewhere(Option<String>),
}

/// `Restore Processing (40%: ...)`, or `none` without a last operation.
pub fn last_operation(shoot: &Shoot) -> String {
    match shoot
        .status
        .as_ref()
        .and_then(|s| s.last_operation.as_ref())
    {
        None => "none".into(),
        Some(op) if op.description.is_empty() => format!("{} {}", op.type_, op.state),
        Some(op) => format!("{} {}: {}", op.type_, op.state, op.description),
    }
}

/// Reads the move of `planned` off the live `shoot` (`None`: gone).
pub fn observe(shoot: Option<&Shoot>, planned: &Planned) -> Observed {
    let Some(shoot) = shoot else {
        return Observed::Gone;
    };
    let spec = shoot.spec.seed_name.as_deref().filter(|s| !s.is_empty());
    if spec == Some(planned.from.as_str()) {
        return Observed::OnSource;
    }
    if spec != Some(planned.to.as_str()) {
        return Observed::Elsewhere(spec.map(str::to_string));
    }
    let status = shoot.status.as_ref();
    let op = status.and_then(|s| s.last_operation.as_ref());
    let last = last_operation(shoot);
    let migrating_op = op.is_some_and(|o| o.type_ == "Migrate" || o.type_ == "Restore");
    if migrating_op && op.is_some_and(|o| o.state == "Failed") {
        return Observed::Failed { last };
    }
    let arrived = status.and_then(|s| s.seed_name.as_deref()) == Some(planned.to.as_str());
    if arrived && op.is_some_and(|o| o.state == "Succeeded") {
        return Observed::Arrived;
    }
    Observed::Migrating { last }
}

/// The state a move takes from what the shoot says, when the apply (re)starts: a shoot already
/// on its destination or under way there is never bound again.
pub fn initial(observed: &Observed, planned: &Planned, now: DateTime<Utc>) -> State {
    match observed {
        Observed::OnSource => match &planned.start {
            Ok(_) => State::Waiting,
            Err(why) => State::Skipped {
                reason: why.clone(),
            },
        },
        Observed::Migrating { .. } => State::InFlight { since: now },
        Observed::Arrived => State::Done,
        Observed::Failed { last } => State::Failed {
            reason: format!("the migration failed before this apply: last operation {last}"),
        },
        Observed::Gone => State::Skipped {
            reason: "the shoot no longer exists".into(),
        },
        Observed::Elsewhere(seed) => State::Skipped {
            reason: elsewhere(seed.as_deref(), planned),
        },
    }
}

pub fn elsewhere(seed: Option<&str>, planned: &Planned) -> String {
    match seed {
        Some(s) => format!(
            "the shoot is on seed {s} now, neither {} nor {}: moved by someone else",
            planned.from, planned.to
        ),
        None => "the shoot has no seed any more".into(),
    }
}

/// How a move in flight goes on, given what its shoot says now.
pub fn follow(
    observed: &Observed,
    planned: &Planned,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    timeout: Duration,
) -> State {
    match observed {
        Observed::Arrived => State::Done,
        Observed::Failed { last } => State::Failed {
            reason: format!("last operation {last}"),
        },
        Observed::Migrating { last } if now - since > timeout => State::Failed {
            reason: format!(
                "not finished {}s after it started (--move-timeout); last operation {last}",
                timeout.num_seconds()
            ),
        },
        Observed::Migrating { .. } => State::InFlight { since },
        Observed::Gone => State::Failed {
            reason: "the shoot was deleted during its migration".into(),
        },
        Observed::OnSource => State::Failed {
            reason: format!(
                "spec.seedName is back on the source {}: the binding was undone",
                planned.from
            ),
        },
        Observed::Elsewhere(seed) => State::Failed {
            reason: elsewhere(seed.as_deref(), planned),
        },
    }
}

/// Bounds on starting moves.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Migrations in flight at most, in total and on any one source or destination seed.
    pub max_concurrent: usize,
    /// No move starts once this many have failed.
    pub max_failures: usize,
    /// How much of its window a move needs left to start.
    pub move_duration: Duration,
}

/// Why a waiting move does not start now.
#[derive(Clone, Debug, PartialEq)]
pub enum Hold {
    /// Its planned start is later.
    NotYet(DateTime<Utc>),
    /// Its maintenance window is closed (or too little of it is left); it opens again at the
    /// instant given, if ever.
    Window(Option<DateTime<Utc>>),
    /// `--max-concurrent` migrations are in flight (in total, or on its source or destination).
    Busy,
}

/// One step's answer: the moves to start now (in order), and what holds the others.
#[derive(Debug, Default, PartialEq)]
pub struct Pick {
    pub start: Vec<usize>,
    pub held: Vec<(usize, Hold)>,
}

impl Pick {
    /// The earliest instant a held move may become startable (a planned start or a window
    /// opening).
    pub fn next_start(&self) -> Option<DateTime<Utc>> {
        self.held
            .iter()
            .filter_map(|(_, h)| match h {
                Hold::NotYet(t) | Hold::Window(Some(t)) => Some(*t),
                _ => None,
            })
            .min()
    }
}

/// Whether `window` lets a move of `duration` start at `now`: `Ok` when `now` is inside an
/// occurrence with at least `duration` of it left, else the next instant that is.
pub fn window_gate(
    window: &Window,
    now: DateTime<Utc>,
    duration: Duration,
) -> Result<(), Option<DateTime<Utc>>> {
    // A daily window: looking at three occurrences finds the next one that fits, if any does.
    for (begin, end) in window.occurrences(now).take(3) {
        let from = begin.max(now);
        if from + duration <= end {
            return if from == now { Ok(()) } else { Err(Some(from)) };
        }
    }
    Err(None)
}

/// Which waiting moves start at `now`: those whose planned start has come, whose shoot's
/// window (`windows[i]`, read from the live shoot) is open, in order of planned start then
/// shoot, as long as fewer than `max_concurrent` migrations are in flight in total, on the
/// move's source and on its destination. Nothing starts when `stopping`.
pub fn pick(
    moves: &[Planned],
    states: &[State],
    windows: &[Option<Window>],
    now: DateTime<Utc>,
    limits: &Limits,
    stopping: bool,
) -> Pick {
    let mut total = 0;
    let mut per_seed: HashMap<&str, usize> = HashMap::new();
    for (m, s) in moves.iter().zip(states) {
        if matches!(s, State::InFlight { .. }) {
            total += 1;
            *per_seed.entry(m.from.as_str()).or_default() += 1;
            *per_seed.entry(m.to.as_str()).or_default() += 1;
        }
    }
    let mut order: Vec<usize> = (0..moves.len())
        .filter(|&i| states[i] == State::Waiting)
        .collect();
    order.sort_by(|&a, &b| {
        let key = |i: usize| (moves[i].start.as_ref().ok().copied(), &moves[i].shoot);
        key(a).cmp(&key(b))
    });
    let mut pick = Pick::default();
    if stopping {
        return pick;
    }
    for i in order {
        let m = &moves[i];
        let Ok(start) = m.start else { continue };
        if start > now {
            pick.held.push((i, Hold::NotYet(start)));
            continue;
        }
        if let Some(w) = &windows[i]
            && let Err(next) = window_gate(w, now, limits.move_duration)
        {
            pick.held.push((i, Hold::Window(next)));
            continue;
        }
        let on = |seed: &str| per_seed.get(seed).copied().unwrap_or(0);
        if total >= limits.max_concurrent
            || on(&m.from) >= limits.max_concurrent
            || on(&m.to) >= limits.max_concurrent
        {
            pick.held.push((i, Hold::Busy));
            continue;
        }
        total += 1;
        *per_seed.entry(m.from.as_str()).or_default() += 1;
        *per_seed.entry(m.to.as_str()).or_default() += 1;
        pick.start.push(i);
    }
    pick
}

/// Counts for the progress line and the summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub total: usize,
    pub done: usize,
    pub in_flight: usize,
    pub waiting: usize,
    pub waiting_for_window: usize,
    pub skipped: usize,
    pub failed: usize,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "optional_time"
    )]
    pub next_start: Option<DateTime<Utc>>,
}

fn optional_time<S: serde::Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => crate::plan::windows::rfc3339(t, s),
        None => s.serialize_none(),
    }
}

/// The counts of `states`, with what `pick` held.
pub fn counts(states: &[State], pick: &Pick) -> Counts {
    let mut c = Counts {
        total: states.len(),
        next_start: pick.next_start(),
        ..Counts::default()
    };
    for s in states {
        match s {
            State::Waiting => c.waiting += 1,
            State::InFlight { .. } => c.in_flight += 1,
            State::Done => c.done += 1,
            State::Skipped { .. } => c.skipped += 1,
            State::Failed { .. } => c.failed += 1,
        }
    }
    c.waiting_for_window = pick
        .held
        .iter()
        .filter(|(_, h)| matches!(h, Hold::Window(_)))
        .count();
    c
}

/// Whether the apply is over: nothing in flight, and nothing left that may still start.
pub fn finished(states: &[State], stopping: bool) -> bool {
    !states.iter().any(|s| matches!(s, State::InFlight { .. }))
        && (stopping || !states.contains(&State::Waiting))
}

#[cfg(test)]
mod tests;
