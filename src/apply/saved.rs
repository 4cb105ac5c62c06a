//! A saved plan (`plan drain|rebalance -o json`) read back: the moves and the settings `apply`
//! needs, checked before anything is done. Fields the reader does not use are ignored, so a
//! plan written by a newer version with more fields still reads.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
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
    moves: Vec<FileMove>,
    windows: FileSettings,
    stamp: FileStamp,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileSettings {
    max_concurrent: usize,
    move_duration_seconds: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileStamp {
    landscape: String,
    profile: String,
    live_migration: bool,
}

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
    /// The digest of the landscape the plan was computed from.
    pub landscape: String,
    pub profile: String,
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
    let file: File = serde_path_to_error::deserialize(de).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { "(document)".into() } else { at };
        field(at, e.into_inner().to_string())
    })?;
    if file.windows.max_concurrent == 0 {
        return Err(field(
            "windows.maxConcurrent".into(),
            "must be at least 1".into(),
        ));
    }
    if file.windows.move_duration_seconds <= 0 {
        return Err(field(
            "windows.moveDurationSeconds".into(),
            "must be positive".into(),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut moves = Vec::with_capacity(file.moves.len());
    for (i, m) in file.moves.into_iter().enumerate() {
        let at = |f: &str| format!("moves[{i}].{f}");
        let (namespace, name) = match m.shoot.split_once('/') {
            Some((ns, n)) if !ns.is_empty() && !n.is_empty() && !n.contains('/') => {
                (ns.to_string(), n.to_string())
            }
            _ => {
                return Err(field(
                    at("shoot"),
                    format!("{:?} is not NAMESPACE/NAME", m.shoot),
                ));
            }
        };
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
        landscape: file.stamp.landscape,
        profile: file.stamp.profile,
        live_migration: file.stamp.live_migration,
    })
}

#[cfg(test)]
mod tests;
