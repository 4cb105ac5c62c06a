//! The profile chain: an ordered list of profiles with optional time windows. At each decision
//! the first entry whose window is open (or that has none) applies; a `freeze` entry, or no
//! open entry, defers scheduling until the chain changes.

mod window;

use chrono::{DateTime, Utc};

pub use window::{Window, parse_cron};

use crate::carbon::CarbonSettings;
use crate::config::{ProfileConfig, ShootScheduler};
use crate::field_error::FieldError;
use crate::plugin::ClusterData;
use crate::profile::Profile;

pub enum EntryKind {
    Profile(Box<Profile>),
    Freeze,
}

pub struct ChainEntry {
    pub id: String,
    pub window: Option<Window>,
    pub kind: EntryKind,
}

impl ChainEntry {
    fn is_active(&self, t: DateTime<Utc>) -> bool {
        self.window.as_ref().is_none_or(|w| w.is_active(t))
    }
}

/// What applies at an instant.
pub enum Selection<'a> {
    /// Schedule with this profile (`entry` is the chain entry's id).
    Profile {
        entry: &'a str,
        profile: &'a Profile,
    },
    /// Do not bind now. `retry_at` is when the chain next changes, if ever.
    Deferred {
        reason: String,
        retry_at: Option<DateTime<Utc>>,
    },
}

/// Transitions [`ProfileChain::timeline`] looks at before it stops.
pub const MAX_TIMELINE_STEPS: usize = 100_000;
/// Entries `schedulers.shoot.profiles` may hold: each decision and each transition looks at
/// every entry's window.
pub const MAX_PROFILES: usize = 64;

/// The active entry over a range: `(instant, entry id)` for every change, the first at the
/// start; `truncated_at` is set when [`MAX_TIMELINE_STEPS`] ran out before the end.
pub struct Timeline {
    pub changes: Vec<(DateTime<Utc>, Option<String>)>,
    pub truncated_at: Option<DateTime<Utc>>,
}

pub struct ProfileChain {
    pub entries: Vec<ChainEntry>,
}

/// Moves an error about a key a profile entry inherits from `schedulers.shoot` back to the
/// plain key's path.
fn as_written(e: FieldError, profile_path: &str, p: &ProfileConfig) -> FieldError {
    let Some(rest) = e.path.strip_prefix(profile_path) else {
        return e;
    };
    let inherited = (rest.starts_with(".priorities") && p.priorities.is_none())
        || (rest.starts_with(".candidateDeterminationStrategy")
            && p.candidate_determination_strategy.is_none());
    if inherited {
        FieldError::new(format!("schedulers.shoot{rest}"), e.message)
    } else {
        e
    }
}

impl ProfileChain {
    /// Builds the chain from `schedulers.shoot`; without `profiles`, one unconditional entry
    /// from the plain keys. Every problem is reported with its field path.
    pub fn from_config(cfg: &ShootScheduler) -> Result<ProfileChain, Vec<FieldError>> {
        let chain = Self::build_entries(cfg)?;
        let regions = crate::regions::Regions::with_overrides(&cfg.regions);
        let mut errors: Vec<FieldError> = Vec::new();
        for entry in &chain.entries {
            let EntryKind::Profile(profile) = &entry.kind else {
                continue;
            };
            for stage in &profile.stages {
                if let crate::predicates::Stage::Filter(f) = stage {
                    for e in f.check_regions(&regions) {
                        if !errors.contains(&e) {
                            errors.push(e);
                        }
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(chain)
        } else {
            Err(errors)
        }
    }

    fn build_entries(cfg: &ShootScheduler) -> Result<ProfileChain, Vec<FieldError>> {
        let Some(list) = &cfg.profiles else {
            let profile = Profile::from_config("default", cfg)?;
            return Ok(ProfileChain {
                entries: vec![ChainEntry {
                    id: "default".into(),
                    window: None,
                    kind: EntryKind::Profile(Box::new(profile)),
                }],
            });
        };
        let mut errors = Vec::new();
        if list.len() > MAX_PROFILES {
            // Not built at all: evaluating thousands of windows is what makes such a chain slow.
            return Err(vec![FieldError::new(
                "schedulers.shoot.profiles",
                format!(
                    "holds {} entries, more than the {MAX_PROFILES} accepted",
                    list.len()
                ),
            )]);
        }
        if list.is_empty() {
            errors.push(FieldError::new(
                "schedulers.shoot.profiles",
                "must hold at least one entry (omit the key for a single unconditional profile)",
            ));
        }
        let mut entries = Vec::new();
        for (i, e) in list.iter().enumerate() {
            let path = format!("schedulers.shoot.profiles[{i}]");
            let id = e.id.clone().unwrap_or_else(|| i.to_string());
            if id.is_empty() {
                errors.push(FieldError::new(format!("{path}.id"), "must not be empty"));
            }
            if let Some(j) = list[..i]
                .iter()
                .enumerate()
                .position(|(j, o)| o.id.clone().unwrap_or_else(|| j.to_string()) == id)
            {
                errors.push(FieldError::new(
                    format!("{path}.id"),
                    format!("duplicate id {id:?} (also profiles[{j}])"),
                ));
            }
            let window = match &e.schedule {
                None => None,
                Some(s) => match Window::from_config(s, &format!("{path}.schedule")) {
                    Ok(w) => Some(w),
                    Err(mut errs) => {
                        errors.append(&mut errs);
                        None
                    }
                },
            };
            let kind = match (&e.profile, e.freeze) {
                (Some(_), true) => {
                    errors.push(FieldError::new(
                        path.clone(),
                        "set either profile or freeze: true, not both",
                    ));
                    None
                }
                (None, false) => {
                    errors.push(FieldError::new(
                        path.clone(),
                        "needs a profile or freeze: true",
                    ));
                    None
                }
                (None, true) => Some(EntryKind::Freeze),
                (Some(p), false) => {
                    let strategy = p
                        .candidate_determination_strategy
                        .as_deref()
                        .unwrap_or(&cfg.candidate_determination_strategy);
                    let prios = p
                        .priorities
                        .clone()
                        .unwrap_or_else(|| cfg.priorities_or_default());
                    let filters = p
                        .filters
                        .as_ref()
                        .or(cfg.filters.as_ref())
                        .map(Vec::as_slice)
                        .unwrap_or_default();
                    let profile_path = format!("{path}.profile");
                    match Profile::build(&id, strategy, &prios, filters, &profile_path) {
                        Ok(profile) => Some(EntryKind::Profile(Box::new(profile))),
                        Err(errs) => {
                            // A value the entry inherits is reported where the user wrote it.
                            for e in errs {
                                let e = as_written(e, &profile_path, p);
                                if !errors.contains(&e) {
                                    errors.push(e);
                                }
                            }
                            None
                        }
                    }
                }
            };
            if let Some(kind) = kind
                && (e.schedule.is_none() || window.is_some())
            {
                entries.push(ChainEntry { id, window, kind });
            }
        }
        if errors.is_empty() {
            Ok(ProfileChain { entries })
        } else {
            Err(errors)
        }
    }

    /// The cluster data the chain's profiles declare they read, each once, in chain order: the
    /// controller watches it and `simulate --live` lists it.
    pub fn cluster_data(&self) -> Vec<ClusterData> {
        let mut data: Vec<ClusterData> = Vec::new();
        for e in &self.entries {
            if let EntryKind::Profile(p) = &e.kind {
                for d in p.cluster_data() {
                    if !data.contains(&d) {
                        data.push(d);
                    }
                }
            }
        }
        data
    }

    /// The settings of the first profile that reads carbon-intensity ConfigMaps, if any: the
    /// carbon metrics report with them.
    pub fn carbon_settings(&self) -> Option<CarbonSettings> {
        self.cluster_data()
            .into_iter()
            .find_map(ClusterData::into_carbon_settings)
    }

    /// The first active entry at `t`.
    pub fn active(&self, t: DateTime<Utc>) -> Option<&ChainEntry> {
        self.entries.iter().find(|e| e.is_active(t))
    }

    /// What applies at `t`.
    pub fn select(&self, t: DateTime<Utc>) -> Selection<'_> {
        match self.active(t) {
            Some(ChainEntry {
                id,
                kind: EntryKind::Profile(p),
                ..
            }) => Selection::Profile {
                entry: id,
                profile: p,
            },
            Some(ChainEntry {
                id,
                window,
                kind: EntryKind::Freeze,
            }) => {
                let until = window.as_ref().and_then(|w| w.closes_at(t));
                Selection::Deferred {
                    reason: match until {
                        Some(u) => format!("freeze window {id:?} until {}", window::fmt(u)),
                        None => format!("freeze window {id:?}"),
                    },
                    retry_at: self.next_switch(t),
                }
            }
            None => Selection::Deferred {
                reason: "no scheduling profile is active".into(),
                retry_at: self.next_switch(t),
            },
        }
    }

    /// The next instant after `t` at which the active entry may change.
    pub fn next_change(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.entries
            .iter()
            .filter_map(|e| e.window.as_ref()?.next_transition(t))
            .min()
    }

    /// The next instant after `t` at which a different entry (or none) becomes active.
    pub fn next_switch(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let current = self.active(t).map(|e| e.id.as_str());
        let mut at = t;
        for _ in 0..10_000 {
            at = self.next_change(at)?;
            if self.active(at).map(|e| e.id.as_str()) != current {
                return Some(at);
            }
        }
        None
    }

    /// Which entry is active when over `[from, to)`: one line per change, the first at `from`.
    /// At most [`MAX_TIMELINE_STEPS`] transitions are looked at; `truncated_at` says where the
    /// timeline stopped short of `to`.
    pub fn timeline(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Timeline {
        let mut timeline = Timeline {
            changes: Vec::new(),
            truncated_at: None,
        };
        for step in self.timeline_steps(from, to) {
            match step {
                TimelineStep::Change(at, entry) => timeline.changes.push((at, entry)),
                TimelineStep::Truncated(at) => timeline.truncated_at = Some(at),
            }
        }
        timeline
    }

    /// [`ProfileChain::timeline`] one change at a time, so that a long range can be written as
    /// it is worked out.
    pub fn timeline_steps(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> impl Iterator<Item = TimelineStep> + '_ {
        let describe = move |t| {
            self.active(t).map(|e| match e.kind {
                EntryKind::Freeze => format!("{} (freeze)", e.id),
                EntryKind::Profile(_) => e.id.clone(),
            })
        };
        let mut last = None;
        let mut t = from;
        let mut steps = 0;
        let mut done = false;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let Some(prev) = last.as_ref() else {
                let now = describe(from);
                last = Some(now.clone());
                return Some(TimelineStep::Change(from, now));
            };
            let mut prev = prev.clone();
            // Bounded: a minutely cron over a year would be 500k steps.
            while steps < MAX_TIMELINE_STEPS {
                steps += 1;
                let Some(next) = self.next_change(t).filter(|n| *n < to) else {
                    done = true;
                    return None;
                };
                t = next;
                let now = describe(next);
                if now != prev {
                    last = Some(now.clone());
                    return Some(TimelineStep::Change(next, now));
                }
                prev = now;
            }
            done = true;
            self.next_change(t)
                .is_some_and(|n| n < to)
                .then_some(TimelineStep::Truncated(t))
        })
    }
}

/// One line of a timeline.
#[derive(Clone, Debug, PartialEq)]
pub enum TimelineStep {
    /// From this instant this entry (or none) is active.
    Change(DateTime<Utc>, Option<String>),
    /// [`MAX_TIMELINE_STEPS`] transitions were looked at up to this instant, before the end.
    Truncated(DateTime<Utc>),
}

#[cfg(test)]
mod tests;
