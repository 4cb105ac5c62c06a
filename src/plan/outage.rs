//! A seed outage rehearsed offline (`plan outage`): what the scheduler process would publish
//! for a seed failing from `from` to `to` under `schedulers.shoot.evacuation`: the evacuation
//! plan at `from + evacuation.after`, and, with its moves that start before the seed is well
//! again counted as done, the fail-back plan at `to + failback.after`.

use chrono::{DateTime, Utc};

use super::{Plan, Timing};
use crate::simulate::Landscape;

/// When the process would judge the seed unhealthy and healthy again, or why it never would.
pub fn judged(
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    unhealthy_after: std::time::Duration,
    healthy_after: std::time::Duration,
) -> Result<(DateTime<Utc>, DateTime<Utc>), String> {
    let span =
        |d: std::time::Duration| chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX);
    let unhealthy = from + span(unhealthy_after);
    if unhealthy > to {
        return Err(format!(
            "an outage of {} is shorter than evacuation.after ({}): the seed is never judged \
             unhealthy, so nothing is published",
            crate::go_duration::format((to - from).to_std().unwrap_or_default()),
            crate::go_duration::format(unhealthy_after)
        ));
    }
    Ok((unhealthy, to + span(healthy_after)))
}

/// The moves of `plan` that start before `until`, as (index into the landscape's shoots,
/// destination): the shoots that have left when the seed is well again.
pub fn started_before(plan: &Plan, until: DateTime<Utc>) -> Vec<(usize, String)> {
    plan.moves
        .iter()
        .filter(|m| matches!(m.timing, Timing::At { start, .. } if start < until))
        .map(|m| (m.index, m.to.clone()))
        .collect()
}

/// The landscape with `moves` done: each shoot on its destination.
pub fn moved(landscape: &mut Landscape, moves: &[(usize, String)]) {
    for (i, to) in moves {
        if let Some(shoot) = landscape.shoots.get_mut(*i) {
            shoot.spec.seed_name = Some(to.clone());
            if let Some(status) = shoot.status.as_mut() {
                status.seed_name = Some(to.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(h: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .unwrap()
            .to_utc()
            + chrono::Duration::hours(h)
    }

    #[test]
    fn an_outage_is_judged_after_the_configured_spans() {
        let ten_minutes = std::time::Duration::from_secs(600);
        let hour = std::time::Duration::from_secs(3600);
        assert_eq!(
            judged((at(0), at(5)), ten_minutes, hour),
            Ok((at(0) + chrono::Duration::minutes(10), at(6)))
        );
    }

    #[test]
    fn an_outage_shorter_than_evacuation_after_publishes_nothing() {
        let e = judged(
            (at(0), at(0) + chrono::Duration::minutes(5)),
            std::time::Duration::from_secs(600),
            std::time::Duration::ZERO,
        )
        .unwrap_err();
        assert!(
            e.starts_with("an outage of 5m0s is shorter than evacuation.after (10m0s)"),
            "{e}"
        );
    }
}
