//! `gardener-scheduler simulate --timeline FROM..TO [--outage SEED@FROM..TO]`: the changes of the
//! active profile entry over a range, and with `--outage` a seed outage rehearsed among them:
//! when the process judges the seed, each move of the evacuation and fail-back plans it would
//! publish at its start, what cannot move, and the destinations' load while the seed is down.

use std::process::ExitCode;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use gardener_scheduler::chain::{ProfileChain, TimelineStep};
use gardener_scheduler::plan::{Plan, SeedLoad, Timing};

use super::args::Output;
use super::common::*;
use super::outage::Rehearsal;

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// One instant of a rehearsed outage.
#[derive(Debug, PartialEq)]
pub(crate) struct Event {
    pub(crate) at: DateTime<Utc>,
    /// One line, for the table.
    pub(crate) text: String,
    /// The same, for JSON.
    pub(crate) json: Value,
}

/// A rehearsed outage laid out in time.
pub(crate) struct OutageView {
    pub(crate) seed: String,
    pub(crate) window: (DateTime<Utc>, DateTime<Utc>),
    /// In time order.
    pub(crate) events: Vec<Event>,
    /// The shoots the evacuation plan cannot move, with why (`namespace/name`, reason).
    pub(crate) cannot_move: Vec<(String, String)>,
    /// The seeds whose load the evacuation changes: (load, shoots on it when the outage ends).
    pub(crate) destinations: Vec<(SeedLoad, u64)>,
}

/// The moves of `plan` as events: those starting before `until` (or all, without it).
fn move_events(
    plan: &Plan,
    (kind, label): (&str, &str),
    until: Option<DateTime<Utc>>,
    out: &mut Vec<Event>,
) {
    for m in &plan.moves {
        let Timing::At { start, end, window } = &m.timing else {
            continue;
        };
        if until.is_some_and(|u| *start >= u) {
            continue;
        }
        out.push(Event {
            at: *start,
            text: format!(
                "{label} {}: {} -> {} (until {}, {window})",
                m.shoot,
                m.from,
                m.to,
                rfc3339(*end)
            ),
            json: json!({"at": rfc3339(*start), "event": kind, "shoot": m.shoot, "from": m.from,
                "to": m.to, "end": rfc3339(*end), "window": window}),
        });
    }
}

/// What the process would do about `seed` over its outage `(from, to)`, in time order.
pub(crate) fn outage_view(
    seed: &str,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    r: &Rehearsal,
) -> OutageView {
    let at_event = |at: DateTime<Utc>, event: &str, text: String, extra: Value| {
        let mut json = json!({"at": rfc3339(at), "event": event});
        if let (Some(obj), Value::Object(more)) = (json.as_object_mut(), extra) {
            obj.extend(more);
        }
        Event { at, text, json }
    };
    let started = |t: DateTime<Utc>| {
        r.evacuation
            .moves
            .iter()
            .filter(|m| matches!(m.timing, Timing::At { start, .. } if start < t))
            .count()
    };
    let mut cannot_move: Vec<(String, String)> = r
        .evacuation
        .blocked
        .iter()
        .map(|b| (b.shoot.clone(), b.reason.clone()))
        .collect();
    cannot_move.extend(r.evacuation.moves.iter().filter_map(|m| match &m.timing {
        Timing::Deferred { reason, .. } => Some((m.shoot.clone(), reason.clone())),
        _ => None,
    }));
    let deferred = r
        .evacuation
        .moves
        .iter()
        .filter(|m| matches!(m.timing, Timing::Deferred { .. }))
        .count();
    let planned = r.evacuation.moves.len() - deferred;
    let mut events = vec![
        at_event(
            from,
            "outage",
            format!("seed {seed} fails"),
            json!({"seed": seed}),
        ),
        at_event(
            r.unhealthy_at,
            "evacuationPublished",
            format!(
                "seed {seed} judged unhealthy (evacuation.after): evacuation plan published, {} move(s), {} shoot(s) cannot move",
                planned,
                cannot_move.len()
            ),
            json!({"seed": seed, "moves": planned, "cannotMove": cannot_move.len()}),
        ),
    ];
    move_events(
        &r.evacuation,
        ("evacuate", "evacuate"),
        Some(to),
        &mut events,
    );
    let not_started = started(DateTime::<Utc>::MAX_UTC) - started(to);
    events.push(at_event(
        to,
        "recovered",
        format!(
            "seed {seed} is well again: {} shoot(s) have moved, {not_started} planned move(s) never start",
            r.left.len()
        ),
        json!({"seed": seed, "moved": r.left.len(), "notStarted": not_started}),
    ));
    events.push(at_event(
        r.healthy_at,
        "failbackPublished",
        format!(
            "seed {seed} judged healthy (failback.after): fail-back plan published, {} move(s) back, {} shoot(s) stay",
            r.failback.moves.len(),
            r.failback.blocked.len()
        ),
        json!({"seed": seed, "moves": r.failback.moves.len(), "stay": r.failback.blocked.len()}),
    ));
    move_events(&r.failback, ("failBack", "move back"), None, &mut events);
    // stable: at one instant, the judgement before the moves it publishes
    events.sort_by_key(|e| e.at);
    let done = |name: &str| {
        let moved = r
            .evacuation
            .moves
            .iter()
            .filter(|m| matches!(m.timing, Timing::At { start, .. } if start < to));
        let (mut into, mut off) = (0, 0);
        for m in moved {
            into += u64::from(m.to == name);
            off += u64::from(m.from == name);
        }
        (into, off)
    };
    let destinations = r
        .evacuation
        .seeds
        .iter()
        .filter(|s| s.after != s.before)
        .map(|s| {
            let (into, off) = done(&s.name);
            (s.clone(), (s.before + into).saturating_sub(off))
        })
        .collect();
    OutageView {
        seed: seed.to_string(),
        window: (from, to),
        events,
        cannot_move,
        destinations,
    }
}

/// `--timeline FROM..TO`: one line (or JSON object) per change of the active profile entry,
/// with the events of `outage` among them.
pub(crate) fn timeline(
    chain: &ProfileChain,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    output: Output,
    outage: Option<&OutageView>,
) -> ExitCode {
    let json = output == Output::Json;
    let in_range: Vec<&Event> = outage
        .map(|o| {
            o.events
                .iter()
                .filter(|e| e.at >= from && e.at <= to)
                .collect()
        })
        .unwrap_or_default();
    let write = |out: &mut dyn std::io::Write| -> std::io::Result<()> {
        let mut changes = 0;
        let mut pending = in_range.iter().peekable();
        if json {
            write!(
                out,
                "{{\"from\": \"{}\", \"to\": \"{}\", \"changes\": [",
                rfc3339(from),
                rfc3339(to)
            )?;
        }
        let mut truncated = None;
        for step in chain.timeline_steps(from, to) {
            if let TimelineStep::Change(at, _) | TimelineStep::Truncated(at) = &step
                && !json
            {
                // the outage's events up to this change, in their place
                while let Some(e) = pending.next_if(|e| e.at < *at) {
                    writeln!(out, "{}  {}", rfc3339(e.at), e.text)?;
                }
            }
            match step {
                TimelineStep::Change(at, entry) if json => {
                    let sep = if changes == 0 { "\n" } else { ",\n" };
                    changes += 1;
                    write!(
                        out,
                        "{sep}  {{\"at\": \"{}\", \"profile\": {}}}",
                        rfc3339(at),
                        serde_json::to_string(&entry.as_deref()).map_err(std::io::Error::other)?
                    )?;
                }
                TimelineStep::Change(at, entry) => {
                    changes += 1;
                    writeln!(
                        out,
                        "{}  {}",
                        rfc3339(at),
                        entry
                            .as_deref()
                            .unwrap_or("- (no profile active: scheduling deferred)")
                    )?;
                }
                TimelineStep::Truncated(at) if json => truncated = Some(at),
                TimelineStep::Truncated(at) => {
                    truncated = Some(at);
                    writeln!(
                        out,
                        "... truncated: the timeline stops at {} after {changes} changes; ask for a shorter range",
                        rfc3339(at),
                    )?
                }
            }
            // Each line as soon as it is known: a long range shows progress.
            out.flush()?;
        }
        let shown: Vec<&&Event> = in_range
            .iter()
            .filter(|e| truncated.is_none_or(|t| e.at < t))
            .collect();
        if json {
            let t = truncated.map_or("null".to_string(), |t| format!("\"{}\"", rfc3339(t)));
            write!(out, "\n], \"truncatedAt\": {t}")?;
            if let Some(o) = outage {
                let v = outage_json(o, &shown);
                write!(out, ", \"outage\": {v}")?;
            }
            writeln!(out, "}}")?;
        } else if let Some(o) = outage {
            if truncated.is_none() {
                for e in pending {
                    writeln!(out, "{}  {}", rfc3339(e.at), e.text)?;
                }
            }
            write_outage_summary(out, o, shown.len())?;
        }
        Ok(())
    };
    // JSON escapes what it carries itself; text shows control characters visibly
    if json {
        write_stdout(write)
    } else {
        write_stdout_text(write)
    }
}

fn outage_json(o: &OutageView, shown: &[&&Event]) -> Value {
    json!({
        "seed": o.seed,
        "from": rfc3339(o.window.0),
        "to": rfc3339(o.window.1),
        "events": shown.iter().map(|e| e.json.clone()).collect::<Vec<_>>(),
        "eventsOutsideRange": o.events.len() - shown.len(),
        "cannotMove": o.cannot_move.iter().map(|(shoot, reason)| json!({"shoot": shoot, "reason": reason})).collect::<Vec<_>>(),
        "destinations": o.destinations.iter().map(|(s, at_recovery)| json!({
            "seed": s.name, "before": s.before, "atRecovery": at_recovery,
            "planned": s.after, "capacity": s.capacity})).collect::<Vec<_>>(),
    })
}

/// After the lines: what cannot move, the destinations' load, and the events left out.
fn write_outage_summary(
    out: &mut dyn std::io::Write,
    o: &OutageView,
    shown: usize,
) -> std::io::Result<()> {
    if shown < o.events.len() {
        writeln!(
            out,
            "({} event(s) of the outage fall outside the range; widen --timeline to see them)",
            o.events.len() - shown
        )?;
    }
    writeln!(out, "\nCannot move off {}: {}", o.seed, o.cannot_move.len())?;
    for (shoot, reason) in &o.cannot_move {
        writeln!(out, "  {shoot}: {reason}")?;
    }
    // BEFORE: as the outage starts; AT RECOVERY: with the moves started by then; PLANNED: with
    // every move of the evacuation plan
    writeln!(out, "\nShoots per seed while {} is down:", o.seed)?;
    writeln!(
        out,
        "  {:<24} {:>7} {:>12} {:>8} {:>9}",
        "SEED", "BEFORE", "AT RECOVERY", "PLANNED", "CAPACITY"
    )?;
    for (s, at_recovery) in &o.destinations {
        let cap = s.capacity.map_or("-".to_string(), |c| c.to_string());
        writeln!(
            out,
            "  {:<24} {:>7} {:>12} {:>8} {:>9}",
            s.name, s.before, at_recovery, s.after, cap
        )?;
    }
    Ok(())
}
