//! A seed's health as Gardener reports it, and the judgement with hysteresis.
//!
//! [`observe`] reads one seed at one instant: which of its conditions say it is failing, and
//! since when. [`Judge::step`] turns a series of such observations into a verdict that changes
//! only after the seed has been failing for `evacuation.after`, and back only after it has been
//! well for `failback.after`; a seed that flaps within either span changes nothing. Both are
//! pure: the time is passed in.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::api::Seed;

/// The conditions read, in the order a failure names them. `GardenletReady` must be there; the
/// others count only when the gardenlet reports them.
pub const CONDITIONS: [&str; 4] = [
    "GardenletReady",
    "BackupBucketsReady",
    "ExtensionsReady",
    "SeedSystemComponentsHealthy",
];

/// What one look at a seed shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// Why the seed is failing now (`GardenletReady is False (reason): message`); empty when
    /// it is well.
    pub failing: Vec<String>,
    /// Since when the seed has been in this state, as far as its conditions tell (their
    /// `lastTransitionTime`, or when the heartbeat stopped), never later than the observation.
    pub since: Option<DateTime<Utc>>,
}

impl Observation {
    pub fn is_failing(&self) -> bool {
        !self.failing.is_empty()
    }
}

/// Reads `seed`'s conditions at `now`. `Progressing` counts as well (Gardener's step before
/// `False`, within the condition's own threshold); `False` and `Unknown` as failing. A
/// `GardenletReady` whose `lastUpdateTime` is older than `heartbeat_timeout` is failing too.
pub fn observe(seed: &Seed, now: DateTime<Utc>, heartbeat_timeout: Duration) -> Observation {
    let mut failing = Vec::new();
    let mut failing_since: Vec<DateTime<Utc>> = Vec::new();
    let mut well_since: Vec<DateTime<Utc>> = Vec::new();
    for name in CONDITIONS {
        let Some(c) = seed.condition(name) else {
            if name == "GardenletReady" {
                failing.push("GardenletReady is not reported".to_string());
            }
            continue;
        };
        let transition = c.transition_time();
        match c.status.as_str() {
            "True" | "Progressing" => well_since.extend(transition),
            status => {
                let reason = c.reason.as_deref().unwrap_or_default();
                let mut line = format!("{name} is {status}");
                if !reason.is_empty() {
                    line.push_str(&format!(" ({reason})"));
                }
                if let Some(m) = c.message.as_deref().filter(|m| !m.is_empty()) {
                    line.push_str(&format!(": {m}"));
                }
                failing.push(line);
                failing_since.extend(transition);
            }
        }
    }
    if let Some(c) = seed.condition("GardenletReady")
        && let Some(beat) = c.update_time()
        && let Ok(timeout) = chrono::Duration::from_std(heartbeat_timeout)
        && now - beat > timeout
    {
        failing.push(format!(
            "the gardenlet's heartbeat stopped: GardenletReady was last updated at {}",
            beat.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
        failing_since.push(beat + timeout);
    }
    // Failing: since the earliest failure began. Well: since the last condition came back.
    let since = if failing.is_empty() {
        well_since.into_iter().max()
    } else {
        failing_since.into_iter().min()
    };
    Observation {
        failing,
        since: since.map(|t| t.min(now)),
    }
}

/// The hysteresis spans.
#[derive(Clone, Copy, Debug)]
pub struct Spans {
    /// `evacuation.after`: failing this long makes a healthy seed unhealthy.
    pub unhealthy_after: Duration,
    /// `failback.after`: well this long makes an unhealthy seed healthy.
    pub healthy_after: Duration,
}

/// Where a seed stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Judge {
    /// Judged healthy, and well.
    #[default]
    Healthy,
    /// Judged healthy, failing since `since`.
    Failing { since: DateTime<Utc> },
    /// Judged unhealthy since `since`, still failing.
    Unhealthy { since: DateTime<Utc> },
    /// Judged unhealthy since `since`, well again since `well_since`.
    Recovering {
        since: DateTime<Utc>,
        well_since: DateTime<Utc>,
    },
}

/// A change of verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    BecameUnhealthy,
    BecameHealthy,
}

impl Judge {
    /// Whether the verdict is unhealthy (a plan to leave the seed is kept).
    pub fn is_unhealthy(&self) -> bool {
        matches!(self, Judge::Unhealthy { .. } | Judge::Recovering { .. })
    }

    /// The state after `seen` at `now`, and the change of verdict it makes, if any.
    pub fn step(
        self,
        seen: &Observation,
        now: DateTime<Utc>,
        spans: Spans,
    ) -> (Judge, Option<Transition>) {
        let since = seen.since.unwrap_or(now).min(now);
        let lasted = |from: DateTime<Utc>, span: Duration| {
            chrono::Duration::from_std(span).is_ok_and(|span| now - from >= span)
        };
        match (self, seen.is_failing()) {
            (Judge::Healthy, false) => (Judge::Healthy, None),
            (Judge::Failing { .. }, false) => (Judge::Healthy, None),
            (Judge::Healthy, true) | (Judge::Failing { .. }, true) => {
                // a failure seen before keeps its start; a new one starts when it began
                let since = match self {
                    Judge::Failing { since: earlier } => earlier,
                    _ => since,
                };
                if lasted(since, spans.unhealthy_after) {
                    (
                        Judge::Unhealthy { since: now },
                        Some(Transition::BecameUnhealthy),
                    )
                } else {
                    (Judge::Failing { since }, None)
                }
            }
            (Judge::Unhealthy { since: judged }, true)
            | (Judge::Recovering { since: judged, .. }, true) => {
                (Judge::Unhealthy { since: judged }, None)
            }
            (Judge::Unhealthy { since: judged }, false)
            | (Judge::Recovering { since: judged, .. }, false) => {
                let well_since = match self {
                    Judge::Recovering { well_since, .. } => well_since,
                    _ => since,
                };
                if lasted(well_since, spans.healthy_after) {
                    (Judge::Healthy, Some(Transition::BecameHealthy))
                } else {
                    (
                        Judge::Recovering {
                            since: judged,
                            well_since,
                        },
                        None,
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
