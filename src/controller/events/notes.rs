//! The notes of events and `status.lastOperation`, worded as upstream words them.

use crate::schedule::{Decision, FitError};

/// events.k8s.io accepts notes up to 1 kB.
pub(super) const MAX_NOTE_BYTES: usize = 1024;

/// Cuts `s` to at most `max` bytes on a char boundary, marking the cut.
pub fn truncate_note(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Upstream's `Scheduled to seed "X"`. With a profile chain configured the entry that placed
/// the shoot follows (`Scheduled to seed "X" by profile "P"`), and with configured priorities
/// the winner's score summary (`(score 1124.5: ...)`): both only exist in those configurations.
pub fn success_note(decision: &Decision, name_profile: bool, scores: bool) -> String {
    let mut note = format!("Scheduled to seed {:?}", decision.seed);
    if name_profile {
        note.push_str(&format!(" by profile {:?}", decision.profile));
    }
    if scores {
        note.push_str(&format!(" ({})", decision.winner().short()));
    }
    note
}

/// The upstream description, `Failed to schedule Shoot: <reason>`.
pub fn failure_description(err: &impl std::fmt::Display) -> String {
    format!("Failed to schedule Shoot: {err}")
}

pub(super) fn failure_note(err: &FitError) -> String {
    let hints = err.hints();
    if hints.is_empty() {
        failure_description(err)
    } else {
        format!(
            "{} To schedule it: {}.",
            failure_description(err),
            hints.join("; ")
        )
    }
}

#[cfg(test)]
mod tests;
