//! A saved plan (`plan drain|rebalance -o json`) read back: the moves and the settings `apply`
//! needs, checked before anything is done. Fields the reader does not use are ignored, so a
//! plan written by a newer version with more fields still reads.

use std::collections::BTreeSet;

use chrono::{DateTime, Datelike, Utc};
use serde::Deserialize;

/// The plan file cannot be used; nothing was done.
#[derive(Debug, thiserror::Error)]
pub enum PlanFileError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: crate::input::ReadError,
    },
    #[error("{path}: {field}: {message}")]
    Field {
        path: String,
        field: String,
        message: String,
    },
}

/// How a move's migration runs, as the plan decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    Live,
    Classic,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    #[allow(dead_code)]
    goal: FileGoal,
    profile: String,
    #[serde(deserialize_with = "rfc3339")]
    now: Option<DateTime<Utc>>,
    moves: Vec<FileMove>,
    windows: FileSettings,
    stamp: FileStamp,
}

/// Only its kind is read: a goal this version does not know is refused, not guessed at.
#[derive(Deserialize)]
struct FileGoal {
    #[allow(dead_code)]
    kind: GoalKind,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum GoalKind {
    Drain,
    Failback,
    Rebalance,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileSettings {
    horizon_seconds: i64,
    max_concurrent: usize,
    move_duration_seconds: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileStamp {
    generator: String,
    landscape: String,
    seeds: usize,
    shoots: usize,
    profile: String,
    /// Absent from plans written before it was added: then not compared.
    #[serde(default)]
    profile_fingerprint: String,
    live_migration: bool,
}

/// The longest horizon a plan may have: `plan --horizon`'s own limit (ten years).
pub const MAX_HORIZON_SECONDS: i64 = 10 * 366 * 24 * 3600;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileMove {
    shoot: String,
    from: String,
    to: String,
    migration: FileMigration,
    timing: FileTiming,
}

#[derive(Deserialize)]
struct FileMigration {
    kind: Kind,
}

/// Read as plain fields (an internally tagged enum would lose the path of a bad field).
#[derive(Deserialize)]
struct FileTiming {
    state: TimingState,
    #[serde(default, deserialize_with = "rfc3339")]
    start: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "rfc3339")]
    end: Option<DateTime<Utc>>,
    #[serde(default)]
    reason: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum TimingState {
    Unscheduled,
    At,
    Deferred,
}

/// An instant as the plan writes it (RFC 3339).
fn rfc3339<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    let s = String::deserialize(d)?;
    DateTime::parse_from_rfc3339(&s)
        .map(|t| Some(t.to_utc()))
        .map_err(|e| serde::de::Error::custom(format!("{s:?} is not an RFC 3339 timestamp: {e}")))
}

/// One move of a saved plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// `namespace/name`
    pub shoot: String,
    pub namespace: String,
    pub name: String,
    pub from: String,
    pub to: String,
    pub kind: Kind,
    /// When the plan starts it, or why the plan did not schedule it.
    pub start: Result<DateTime<Utc>, String>,
}

impl Planned {
    pub fn live(&self) -> bool {
        self.kind == Kind::Live
    }
}

/// What `apply` reads from a saved plan.
#[derive(Clone, Debug)]
pub struct SavedPlan {
    pub moves: Vec<Planned>,
    /// The plan's `windows.maxConcurrent` (the default of `--max-concurrent`).
    pub max_concurrent: usize,
    /// How long the plan assumed one move takes: a move starts only when that much of its
    /// window is left.
    pub move_duration: chrono::Duration,
    /// The instant the plan planned from.
    pub now: DateTime<Utc>,
    /// `gardener-scheduler VERSION` that wrote the plan.
    pub generator: String,
    /// The digest of the landscape the plan was computed from, and its Seeds and Shoots.
    pub landscape: String,
    pub seeds: usize,
    pub shoots: usize,
    pub profile: String,
    /// [`crate::profile::Profile::fingerprint`] of the plan's profile; empty when not written.
    pub profile_fingerprint: String,
    /// Whether the plan was made with `--live-migration`.
    pub live_migration: bool,
}

/// Reads and checks the plan file at `path`.
pub fn load(path: &std::path::Path) -> Result<SavedPlan, PlanFileError> {
    let label = path.display().to_string();
    let text =
        crate::input::read_text(path, crate::simulate::MAX_PAGE_BYTES).map_err(|source| {
            PlanFileError::Read {
                path: label.clone(),
                source,
            }
        })?;
    parse(&label, &text)
}

/// Parses and checks a saved plan; `path` names it in errors.
pub fn parse(path: &str, text: &str) -> Result<SavedPlan, PlanFileError> {
    let field = |field: String, message: String| PlanFileError::Field {
        path: path.to_string(),
        field,
        message,
    };
    let de = &mut serde_json::Deserializer::from_str(crate::bom::strip_bom(text));
    let file: File = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { "(document)".into() } else { at };
        field(
            at,
            crate::field_error::serde_message(&e.into_inner().to_string()),
        )
    })?;
    de.end().map_err(|e| {
        field(
            "(document)".into(),
            format!("text after the plan's JSON object: {e}"),
        )
    })?;
    let Some(now) = file.now else {
        return Err(field("now".into(), "is required".into()));
    };
    let w = &file.windows;
    if !(1..=MAX_HORIZON_SECONDS).contains(&w.horizon_seconds) {
        return Err(field(
            "windows.horizonSeconds".into(),
            format!(
                "must be between 1 and {MAX_HORIZON_SECONDS} (ten years), got {}",
                w.horizon_seconds
            ),
        ));
    }
    if w.max_concurrent == 0 {
        return Err(field(
            "windows.maxConcurrent".into(),
            "must be at least 1".into(),
        ));
    }
    if !(1..=w.horizon_seconds).contains(&w.move_duration_seconds) {
        return Err(field(
            "windows.moveDurationSeconds".into(),
            format!(
                "must be between 1 and windows.horizonSeconds ({}), got {}",
                w.horizon_seconds, w.move_duration_seconds
            ),
        ));
    }
    // A plan starts its moves within its horizon after `now`: a start time outside it was not
    // written by `plan` (and one in the year 9999 would hold the Lease for ever).
    let last = now
        .checked_add_signed(chrono::Duration::seconds(w.horizon_seconds))
        .filter(|t| t.year() <= 9999)
        .ok_or_else(|| {
            field(
                "now".into(),
                "with windows.horizonSeconds, passes the year 9999".into(),
            )
        })?;
    if file.profile != file.stamp.profile {
        return Err(field(
            "profile".into(),
            format!(
                "{:?} differs from stamp.profile {:?}: the plan was edited",
                file.profile, file.stamp.profile
            ),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut moves = Vec::with_capacity(file.moves.len());
    for (i, m) in file.moves.into_iter().enumerate() {
        let at = |f: &str| format!("moves[{i}].{f}");
        let (namespace, name) = shoot_key(&m.shoot).map_err(|e| field(at("shoot"), e))?;
        for (f, v) in [("from", &m.from), ("to", &m.to)] {
            if v.is_empty() {
                return Err(field(at(f), "must name a seed".into()));
            }
        }
        if m.from == m.to {
            return Err(field(
                at("to"),
                format!("is the source seed {:?}: not a move", m.from),
            ));
        }
        if !seen.insert(m.shoot.clone()) {
            return Err(field(
                at("shoot"),
                format!("{} is moved twice in this plan", m.shoot),
            ));
        }
        let t = m.timing;
        let start = match t.state {
            TimingState::At => match (t.start, t.end) {
                (Some(start), _) if start < now || start > last => {
                    return Err(field(
                        at("timing.start"),
                        format!(
                            "{} is outside the plan's horizon ({} to {})",
                            ts(start),
                            ts(now),
                            ts(last)
                        ),
                    ));
                }
                (Some(_), Some(end)) if end > last => {
                    return Err(field(
                        at("timing.end"),
                        format!("{} is after the plan's horizon ({})", ts(end), ts(last)),
                    ));
                }
                (Some(start), Some(end)) if end > start => Ok(start),
                (Some(_), Some(_)) => {
                    return Err(field(at("timing.end"), "must be after timing.start".into()));
                }
                (None, _) => return Err(field(at("timing.start"), "is required".into())),
                (_, None) => return Err(field(at("timing.end"), "is required".into())),
            },
            TimingState::Deferred => Err(format!("deferred by the plan: {}", t.reason)),
            TimingState::Unscheduled => Err("not scheduled by the plan".into()),
        };
        moves.push(Planned {
            shoot: m.shoot,
            namespace,
            name,
            from: m.from,
            to: m.to,
            kind: m.migration.kind,
            start,
        });
    }
    Ok(SavedPlan {
        moves,
        max_concurrent: file.windows.max_concurrent,
        move_duration: chrono::Duration::seconds(file.windows.move_duration_seconds),
        now,
        generator: file.stamp.generator,
        landscape: file.stamp.landscape,
        seeds: file.stamp.seeds,
        shoots: file.stamp.shoots,
        profile: file.stamp.profile,
        profile_fingerprint: file.stamp.profile_fingerprint,
        live_migration: file.stamp.live_migration,
    })
}

/// Checks the plan's `now` against the apply's clock: a plan from more than ten years before or
/// after it (`now` in the year 1 or 9990) is not this landscape's, and its start times would hold
/// the Lease for as long.
pub fn check_clock(
    path: &str,
    plan: &SavedPlan,
    clock: DateTime<Utc>,
) -> Result<(), PlanFileError> {
    let apart = (plan.now - clock).num_seconds().unsigned_abs();
    if apart > MAX_HORIZON_SECONDS as u64 {
        return Err(PlanFileError::Field {
            path: path.to_string(),
            field: "now".into(),
            message: format!(
                "{} is more than ten years from this apply's clock ({}): plan again",
                ts(plan.now),
                ts(clock)
            ),
        });
    }
    Ok(())
}

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `NAMESPACE/NAME` of a shoot, each part a lowercase RFC 1123 label as the API server requires:
/// a name that could never be stored is refused before any request carries it.
pub fn shoot_key(key: &str) -> Result<(String, String), String> {
    let Some((namespace, name)) = key.split_once('/') else {
        return Err(format!(
            "\"{}\" is not NAMESPACE/NAME",
            crate::escape::line(key)
        ));
    };
    crate::names::dns1123_label(namespace).map_err(|e| format!("namespace: {e}"))?;
    crate::names::dns1123_label(name).map_err(|e| format!("name: {e}"))?;
    Ok((namespace.to_string(), name.to_string()))
}

#[cfg(test)]
mod tests;
