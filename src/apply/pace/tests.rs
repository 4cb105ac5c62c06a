use chrono::{DateTime, Duration, NaiveTime, Utc};

use super::*;
use crate::apply::saved::Kind;
use crate::fixtures::ShootBuilder;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn mv(shoot: &str, from: &str, to: &str, start: &str) -> Planned {
    Planned {
        shoot: format!("garden-p/{shoot}"),
        namespace: "garden-p".into(),
        name: shoot.into(),
        from: from.into(),
        to: to.into(),
        kind: Kind::Classic,
        start: Ok(t(start)),
    }
}

fn window(begin: &str, end: &str) -> Window {
    Window {
        begin: NaiveTime::parse_from_str(begin, "%H:%M:%S").unwrap(),
        end: NaiveTime::parse_from_str(end, "%H:%M:%S").unwrap(),
        offset: chrono::FixedOffset::east_opt(0).unwrap(),
        assumed: false,
    }
}

fn limits(k: usize) -> Limits {
    Limits {
        max_concurrent: k,
        max_failures: 1,
        move_duration: Duration::minutes(10),
    }
}

/// Shoot `garden-p/a`: `spec.seedName` `seed`, `status.seedName` `status_seed`, its last
/// operation `type_` in `state`.
fn shoot_a(seed: &str, status_seed: &str, type_: &str, state: &str) -> Shoot {
    ShootBuilder::new("garden-p", "a")
        .seed(seed)
        .status_seed(status_seed)
        .last_operation(type_, state)
        .build()
}

#[test]
fn a_shoot_still_on_its_source_waits_and_one_bound_to_the_destination_is_under_way() {
    let m = mv("a", "s1", "s2", "2026-01-01T22:00:00Z");
    let on_source = shoot_a("s1", "s1", "Reconcile", "Succeeded");
    assert_eq!(observe(Some(&on_source), &m), Observed::OnSource);
    // bound, the gardenlets have not begun: the old reconcile's success is no arrival
    let bound = shoot_a("s2", "s1", "Reconcile", "Succeeded");
    assert!(matches!(
        observe(Some(&bound), &m),
        Observed::Migrating { .. }
    ));
    let restoring = shoot_a("s2", "s2", "Restore", "Processing");
    assert!(matches!(
        observe(Some(&restoring), &m),
        Observed::Migrating { .. }
    ));
    let arrived = shoot_a("s2", "s2", "Restore", "Succeeded");
    assert_eq!(observe(Some(&arrived), &m), Observed::Arrived);
}

#[test]
fn a_failed_migrate_or_restore_is_a_failure_but_an_error_is_retried_by_the_gardenlet() {
    let m = mv("a", "s1", "s2", "2026-01-01T22:00:00Z");
    for op in ["Migrate", "Restore"] {
        let s = shoot_a("s2", "s1", op, "Failed");
        assert!(
            matches!(observe(Some(&s), &m), Observed::Failed { .. }),
            "{op}"
        );
    }
    let s = shoot_a("s2", "s1", "Migrate", "Error");
    assert!(matches!(observe(Some(&s), &m), Observed::Migrating { .. }));
}

#[test]
fn on_restart_a_move_done_or_under_way_is_never_started_again() {
    let m = mv("a", "s1", "s2", "2026-01-01T22:00:00Z");
    let now = t("2026-01-01T22:05:00Z");
    assert_eq!(initial(&Observed::Arrived, &m, now), State::Done);
    assert_eq!(
        initial(&Observed::Migrating { last: "x".into() }, &m, now),
        State::InFlight { since: now }
    );
    assert!(matches!(
        initial(&Observed::Elsewhere(Some("s3".into())), &m, now),
        State::Skipped { .. }
    ));
    assert!(matches!(
        initial(&Observed::Gone, &m, now),
        State::Skipped { .. }
    ));
    assert_eq!(initial(&Observed::OnSource, &m, now), State::Waiting);
    let deferred = Planned {
        start: Err("deferred by the plan: no slot".into()),
        ..m
    };
    assert!(
        matches!(initial(&Observed::OnSource, &deferred, now), State::Skipped { reason } if reason.contains("no slot"))
    );
}

#[test]
fn a_migration_past_its_timeout_fails_naming_its_last_operation() {
    let m = mv("a", "s1", "s2", "2026-01-01T22:00:00Z");
    let since = t("2026-01-01T22:00:00Z");
    let obs = Observed::Migrating {
        last: "Restore Processing".into(),
    };
    assert_eq!(
        follow(
            &obs,
            &m,
            since,
            since + Duration::minutes(59),
            Duration::hours(1)
        ),
        State::InFlight { since }
    );
    match follow(
        &obs,
        &m,
        since,
        since + Duration::minutes(61),
        Duration::hours(1),
    ) {
        State::Failed { reason } => assert!(reason.contains("Restore Processing"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn nothing_starts_before_its_planned_time_nor_outside_its_window() {
    let moves = [
        mv("a", "s1", "s2", "2026-01-01T22:00:00Z"),
        mv("b", "s1", "s3", "2026-01-01T22:30:00Z"),
    ];
    let states = vec![State::Waiting, State::Waiting];
    let windows = vec![
        Some(window("22:00:00", "23:00:00")),
        Some(window("22:00:00", "23:00:00")),
    ];
    let p = pick(
        &moves,
        &states,
        &windows,
        t("2026-01-01T22:10:00Z"),
        &limits(3),
        false,
    );
    assert_eq!(p.start, vec![0]);
    assert_eq!(p.held, vec![(1, Hold::NotYet(t("2026-01-01T22:30:00Z")))]);
    // the window has less than a move's duration left: wait for tomorrow's
    let p = pick(
        &moves,
        &states,
        &windows,
        t("2026-01-01T22:55:00Z"),
        &limits(3),
        false,
    );
    assert!(p.start.is_empty());
    assert_eq!(
        p.held,
        vec![
            (0, Hold::Window(Some(t("2026-01-02T22:00:00Z")))),
            (1, Hold::Window(Some(t("2026-01-02T22:00:00Z")))),
        ]
    );
    assert_eq!(p.next_start(), Some(t("2026-01-02T22:00:00Z")));
}

#[test]
fn at_most_k_in_flight_in_total_and_on_any_one_seed() {
    let at = "2026-01-01T22:00:00Z";
    let moves = [
        mv("a", "s1", "d1", at),
        mv("b", "s1", "d2", at),
        mv("c", "s1", "d3", at),
        mv("d", "s2", "d1", at),
        mv("e", "s3", "d4", at),
    ];
    let now = t("2026-01-01T22:01:00Z");
    let windows = vec![None; 5];
    let mut states = vec![State::Waiting; 5];
    states[0] = State::InFlight { since: now };
    // s1 has one in flight: two more from s1 fit with k = 3... but only 2 in total remain
    let p = pick(&moves, &states, &windows, now, &limits(3), false);
    assert_eq!(p.start, vec![1, 2]);
    // per seed: with k = 1 and a in flight on s1 and d1, only e (s3 -> d4) may start
    let p = pick(&moves, &states, &windows, now, &limits(2), false);
    assert_eq!(p.start, vec![1]);
    let p = pick(&moves, &states, &windows, now, &limits(1), false);
    assert!(p.start.is_empty(), "{p:?}");
    let mut states = vec![State::Waiting; 5];
    states[0] = State::Done;
    let p = pick(&moves, &states, &windows, now, &limits(1), false);
    assert_eq!(p.start, vec![1]);
    // stopping: nothing starts
    let p = pick(&moves, &states, &windows, now, &limits(5), true);
    assert!(p.start.is_empty());
}

#[test]
fn moves_start_in_planned_order_then_by_shoot() {
    let moves = [
        mv("z", "s1", "d1", "2026-01-01T22:00:00Z"),
        mv("b", "s2", "d2", "2026-01-01T22:05:00Z"),
        mv("a", "s3", "d3", "2026-01-01T22:00:00Z"),
    ];
    let p = pick(
        &moves,
        &[State::Waiting, State::Waiting, State::Waiting],
        &[None, None, None],
        t("2026-01-01T22:06:00Z"),
        &limits(2),
        false,
    );
    assert_eq!(p.start, vec![2, 0]);
    assert_eq!(p.held, vec![(1, Hold::Busy)]);
}

#[test]
fn the_apply_ends_when_nothing_is_in_flight_and_nothing_may_start() {
    let now = t("2026-01-01T22:00:00Z");
    assert!(!finished(&[State::Waiting, State::Done], false));
    assert!(finished(&[State::Waiting, State::Done], true));
    assert!(!finished(&[State::InFlight { since: now }], true));
    assert!(finished(
        &[State::Done, State::Skipped { reason: "x".into() }],
        false
    ));
}

#[test]
fn a_window_across_midnight_in_another_offset_is_read_in_utc() {
    let w = Window {
        begin: NaiveTime::from_hms_opt(23, 0, 0).unwrap(),
        end: NaiveTime::from_hms_opt(1, 0, 0).unwrap(),
        offset: chrono::FixedOffset::east_opt(3600).unwrap(),
        assumed: false,
    };
    // 23:00+01:00 is 22:00Z; 01:00+01:00 is 00:00Z
    assert_eq!(
        window_gate(&w, t("2026-01-01T22:30:00Z"), Duration::minutes(30)),
        Ok(())
    );
    assert_eq!(
        window_gate(&w, t("2026-01-01T23:45:00Z"), Duration::minutes(30)),
        Err(Some(t("2026-01-02T22:00:00Z")))
    );
    assert_eq!(
        window_gate(&w, t("2026-01-01T12:00:00Z"), Duration::minutes(30)),
        Err(Some(t("2026-01-01T22:00:00Z")))
    );
    // a window shorter than a move never lets it start
    assert_eq!(
        window_gate(&w, t("2026-01-01T12:00:00Z"), Duration::hours(3)),
        Err(None)
    );
}
