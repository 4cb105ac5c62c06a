use chrono::{DateTime, Utc};

use super::*;
use crate::fixtures::ShootBuilder;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn limits(in_flight: u32, per_hour: u32, share: u32) -> Automatic {
    Automatic {
        max_moves_in_flight: in_flight,
        max_moves_per_hour: per_hour,
        max_share_in_flight: share,
    }
}

fn tally_of(scheduled: usize, in_flight: usize, last_hour: usize) -> Tally {
    Tally {
        scheduled,
        in_flight,
        last_hour,
    }
}

#[test]
fn a_shoot_is_in_flight_from_its_binding_until_its_restore_succeeded() {
    let shoot = |b: ShootBuilder| in_flight(&b.build());
    let base = || ShootBuilder::new("garden-a", "a");
    // bound to s2, the source's Migrate not begun or under way
    assert!(shoot(base().seed("s2").status_seed("s1")));
    assert!(shoot(
        base()
            .seed("s2")
            .status_seed("s1")
            .last_operation("Migrate", "Processing")
    ));
    // the destination's Restore under way, or failed: not finished
    assert!(shoot(
        base()
            .seed("s2")
            .status_seed("s2")
            .last_operation("Restore", "Processing")
    ));
    assert!(shoot(
        base()
            .seed("s2")
            .status_seed("s2")
            .last_operation("Restore", "Failed")
    ));
    // finished, or never moved
    assert!(!shoot(
        base()
            .seed("s2")
            .status_seed("s2")
            .last_operation("Restore", "Succeeded")
    ));
    assert!(!shoot(
        base()
            .seed("s1")
            .status_seed("s1")
            .last_operation("Reconcile", "Processing")
    ));
    // a new shoot before its first reconcile, and one without a seed
    assert!(!shoot(base().seed("s1")));
    assert!(!shoot(base()));
}

#[test]
fn moves_within_the_last_hour_count_and_older_or_unreadable_stamps_do_not() {
    let now = at("2026-12-06T03:00:00Z");
    let stamped = |name: &str, value: &str| {
        ShootBuilder::new("garden-a", name)
            .seed("s2")
            .status_seed("s2")
            .annotation(ANNOTATION_EVACUATED, value)
            .build()
    };
    let shoots = [
        stamped("recent", &stamp(at("2026-12-06T02:30:00Z"), "s1")),
        stamped("just-inside", &stamp(at("2026-12-06T02:00:01Z"), "s1")),
        stamped("an-hour-ago", &stamp(at("2026-12-06T02:00:00Z"), "s1")),
        stamped("yesterday", &stamp(at("2026-12-05T02:30:00Z"), "s1")),
        stamped("unreadable", "soon from s1"),
        ShootBuilder::new("garden-a", "moving")
            .seed("s2")
            .status_seed("s1")
            .build(),
        ShootBuilder::new("garden-a", "pending").build(),
    ];
    assert_eq!(tally(&shoots, now), tally_of(6, 1, 2));
    assert_eq!(evacuated_at(&shoots[0]), Some(at("2026-12-06T02:30:00Z")));
}

#[test]
fn the_room_is_the_least_left_under_the_three_limits() {
    // in flight: 2 allowed, 1 under way
    assert_eq!(
        room(&limits(2, 10, 100), &tally_of(100, 1, 1)),
        Room {
            moves: 1,
            held: None
        }
    );
    // per hour: 2 allowed, 2 started within the hour, none in flight any more
    assert_eq!(
        room(&limits(5, 2, 100), &tally_of(100, 0, 2)),
        Room {
            moves: 0,
            held: Some(Held::PerHour)
        }
    );
    // share: 10% of 30 shoots is 3, 3 in flight
    assert_eq!(
        room(&limits(5, 10, 10), &tally_of(30, 3, 3)),
        Room {
            moves: 0,
            held: Some(Held::Share)
        }
    );
    // more in flight than allowed (started by hand): no room, never a negative one
    assert_eq!(
        room(&limits(1, 10, 100), &tally_of(100, 4, 0)),
        Room {
            moves: 0,
            held: Some(Held::InFlight)
        }
    );
}

#[test]
fn the_share_rounds_down_so_it_is_never_exceeded() {
    assert_eq!(share_cap(10, 9), 0);
    assert_eq!(share_cap(10, 10), 1);
    assert_eq!(share_cap(10, 29), 2);
    assert_eq!(share_cap(100, 3), 3);
    assert_eq!(share_cap(50, usize::MAX), usize::MAX / 100);
}

#[test]
fn what_holds_the_moves_is_said_with_its_figures() {
    let l = limits(2, 10, 10);
    assert_eq!(
        held_line(&l, &tally_of(30, 3, 4), Held::Share),
        "3 migration(s) in flight of 30 scheduled shoot(s): maxShareInFlight 10% allows 3"
    );
    assert_eq!(
        held_line(&l, &tally_of(30, 0, 10), Held::PerHour),
        "10 move(s) started within the last hour (maxMovesPerHour 10)"
    );
}
