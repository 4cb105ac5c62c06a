use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};

use super::*;
use crate::api::Condition;
use crate::fixtures::SeedBuilder;

fn at(minute: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 12, 0, 0).unwrap() + chrono::Duration::minutes(minute)
}

fn text(t: DateTime<Utc>) -> Option<String> {
    Some(t.to_rfc3339())
}

/// A seed whose conditions are `(type, status, lastTransitionTime minute)`.
fn seed(conditions: &[(&str, &str, Option<i64>)]) -> Seed {
    let mut s = SeedBuilder::new("s1").build();
    s.status.conditions = conditions
        .iter()
        .map(|(t, status, minute)| Condition {
            type_: (*t).into(),
            status: (*status).into(),
            last_transition_time: minute.and_then(|m| text(at(m))),
            ..Default::default()
        })
        .collect();
    s
}

const HEARTBEAT: Duration = Duration::from_secs(300);

#[test]
fn conditions_read_as_gardener_writes_them() {
    let cases: &[(&str, Seed, usize, Option<i64>)] = &[
        (
            "every condition true is well, since the last one came back",
            seed(&[
                ("GardenletReady", "True", Some(1)),
                ("ExtensionsReady", "True", Some(4)),
            ]),
            0,
            Some(4),
        ),
        (
            "progressing is not yet failing",
            seed(&[("GardenletReady", "Progressing", Some(2))]),
            0,
            Some(2),
        ),
        (
            "a false condition fails, since its transition",
            seed(&[
                ("GardenletReady", "True", None),
                ("ExtensionsReady", "False", Some(3)),
            ]),
            1,
            Some(3),
        ),
        (
            "unknown fails as false does; the earliest failure counts",
            seed(&[
                ("GardenletReady", "Unknown", Some(5)),
                ("BackupBucketsReady", "False", Some(2)),
                ("SeedSystemComponentsHealthy", "False", Some(7)),
            ]),
            3,
            Some(2),
        ),
        (
            "a seed without GardenletReady fails",
            seed(&[("ExtensionsReady", "True", None)]),
            1,
            None,
        ),
        (
            "conditions the judgement does not read change nothing",
            seed(&[
                ("GardenletReady", "True", None),
                ("SomethingElse", "False", Some(1)),
            ]),
            0,
            None,
        ),
        (
            "a transition time in the future is read as now",
            seed(&[("GardenletReady", "False", Some(90))]),
            1,
            Some(10),
        ),
    ];
    for (name, seed, failing, since) in cases {
        let seen = observe(seed, at(10), HEARTBEAT);
        assert_eq!(seen.failing.len(), *failing, "{name}: {:?}", seen.failing);
        assert_eq!(seen.since, since.map(at), "{name}");
    }
}

#[test]
fn a_failure_names_the_condition_its_reason_and_message() {
    let mut s = seed(&[("GardenletReady", "False", Some(1))]);
    s.status.conditions[0].reason = Some("GardenletNotReady".into());
    s.status.conditions[0].message = Some("lease not renewed".into());
    assert_eq!(
        observe(&s, at(2), HEARTBEAT).failing,
        ["GardenletReady is False (GardenletNotReady): lease not renewed"]
    );
}

#[test]
fn a_stopped_heartbeat_fails_from_when_it_timed_out() {
    let mut s = seed(&[("GardenletReady", "True", Some(0))]);
    s.status.conditions[0].last_update_time = text(at(1));
    // four minutes after the last beat: within the five-minute timeout
    assert!(!observe(&s, at(5), HEARTBEAT).is_failing());
    let seen = observe(&s, at(9), HEARTBEAT);
    assert_eq!(seen.since, Some(at(6)));
    assert!(
        seen.failing[0].starts_with("the gardenlet's heartbeat stopped"),
        "{:?}",
        seen.failing
    );
}

const SPANS: Spans = Spans {
    unhealthy_after: Duration::from_secs(600),
    healthy_after: Duration::from_secs(3600),
};

fn failing(since: Option<i64>) -> Observation {
    Observation {
        failing: vec!["GardenletReady is False".into()],
        since: since.map(at),
    }
}

fn well(since: Option<i64>) -> Observation {
    Observation {
        failing: Vec::new(),
        since: since.map(at),
    }
}

/// Runs the observations `(minute, observation)` from `start`; returns the transitions with
/// their minute and the last state.
fn run(start: Judge, steps: &[(i64, Observation)]) -> (Vec<(i64, Transition)>, Judge) {
    let mut judge = start;
    let mut seen = Vec::new();
    for (minute, o) in steps {
        let (next, t) = judge.step(o, at(*minute), SPANS);
        judge = next;
        seen.extend(t.map(|t| (*minute, t)));
    }
    (seen, judge)
}

#[test]
fn a_seed_failing_for_evacuation_after_is_judged_unhealthy_once() {
    let (t, judge) = run(
        Judge::Healthy,
        &[
            (0, failing(None)),
            (5, failing(None)),
            (10, failing(None)),
            (20, failing(None)),
        ],
    );
    assert_eq!(t, [(10, Transition::BecameUnhealthy)]);
    assert_eq!(judge, Judge::Unhealthy { since: at(10) });
}

#[test]
fn a_failure_that_began_before_it_was_seen_counts_from_its_transition() {
    // a new leader sees a seed failing since minute 0 at minute 12: unhealthy at once
    let (t, _) = run(Judge::Healthy, &[(12, failing(Some(0)))]);
    assert_eq!(t, [(12, Transition::BecameUnhealthy)]);
}

#[test]
fn a_flapping_seed_is_never_judged_unhealthy() {
    let steps: Vec<(i64, Observation)> = (0..60)
        .map(|m| (m, if m % 8 < 6 { failing(None) } else { well(None) }))
        .collect();
    let (t, judge) = run(Judge::Healthy, &steps);
    assert!(t.is_empty(), "{t:?}");
    assert!(!judge.is_unhealthy());
}

#[test]
fn an_unhealthy_seed_is_healthy_again_only_after_failback_after() {
    let start = Judge::Unhealthy { since: at(0) };
    let (t, judge) = run(
        start,
        &[
            (10, well(None)),
            (40, well(None)),
            (69, well(None)),
            (70, well(None)),
        ],
    );
    assert_eq!(t, [(70, Transition::BecameHealthy)]);
    assert_eq!(judge, Judge::Healthy);
}

#[test]
fn a_relapse_while_recovering_keeps_the_seed_unhealthy_and_restarts_the_span() {
    let start = Judge::Unhealthy { since: at(0) };
    let (t, judge) = run(
        start,
        &[
            (10, well(None)),
            (50, failing(None)),
            (60, well(None)),
            (100, well(None)),
        ],
    );
    assert!(t.is_empty(), "{t:?}");
    assert_eq!(
        judge,
        Judge::Recovering {
            since: at(0),
            well_since: at(60)
        }
    );
    let (t, _) = run(judge, &[(120, well(None))]);
    assert_eq!(t, [(120, Transition::BecameHealthy)]);
}
