use chrono::{DateTime, Utc};

use super::*;
use crate::compile::load_str;
use crate::predicates::SetStep;
use crate::strategies::{MinimalDistance, SameRegion};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn chain(profiles_yaml: &str) -> ProfileChain {
    let cfg = load_str(&format!(
        "schedulers:\n  shoot:\n    profiles:\n{profiles_yaml}"
    ))
    .unwrap()
    .config;
    ProfileChain::from_config(&cfg.schedulers.shoot).unwrap()
}

fn errors(profiles_yaml: &str) -> Vec<String> {
    let cfg: crate::config::SchedulerConfiguration = serde_yaml_ng::from_str(&format!(
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\nschedulers:\n  shoot:\n    profiles:\n{profiles_yaml}"
    ))
    .unwrap();
    match ProfileChain::from_config(&cfg.schedulers.shoot) {
        Ok(_) => vec![],
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

fn window(schedule_yaml: &str) -> Window {
    let cfg: crate::config::ScheduleConfig = serde_yaml_ng::from_str(schedule_yaml).unwrap();
    Window::from_config(&cfg, "s").unwrap()
}

#[test]
fn an_active_period_reads_go_durations_and_the_days_and_spaces_documented_before() {
    for (text, minutes) in [
        ("6h", 360),
        ("1.5h", 90),
        ("1h30m", 90),
        ("1h 30m", 90),
        ("1d", 1440),
        ("2d 12h", 3600),
    ] {
        let w = window(&format!(
            "activePeriod: {{startCron: '0 0 * * *', duration: '{text}'}}"
        ));
        assert_eq!(
            w.period.unwrap().duration,
            Some(chrono::Duration::minutes(minutes)),
            "{text}"
        );
    }
    let cfg: crate::config::ScheduleConfig =
        serde_yaml_ng::from_str("activePeriod: {startCron: '0 0 * * *', duration: '-1h'}").unwrap();
    let errors = Window::from_config(&cfg, "s").unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        "s.activePeriod.duration: must not be negative, got \"-1h\""
    );
}

#[test]
fn activity_table() {
    let between = window("between: {start: '2026-12-01T00:00:00Z', end: '2026-12-02T00:00:00Z'}");
    let friday_night = window("activePeriod: {startCron: '0 22 * * 5', duration: 4h}");
    let new_york_sunday =
        window("activePeriod: {startCron: '0 1 * * 0', timezone: America/New_York, duration: 2h}");
    let until_next_fire =
        window("activePeriod: {startCron: '0 8 * * 1'}\nbetween: {start: '2026-11-30T09:00:00Z'}");
    let daily = window("activePeriod: {startCron: '@daily', duration: 90m}");
    let cases: Vec<(&str, &Window, &str, bool)> = vec![
        ("inside between", &between, "2026-12-01T12:00:00Z", true),
        ("before between", &between, "2026-11-30T23:59:59Z", false),
        (
            "exactly at start is active",
            &between,
            "2026-12-01T00:00:00Z",
            true,
        ),
        (
            "exactly at end is inactive",
            &between,
            "2026-12-02T00:00:00Z",
            false,
        ),
        (
            "cron window just opened",
            &friday_night,
            "2026-12-04T22:00:00Z",
            true,
        ),
        (
            "window spans midnight into saturday",
            &friday_night,
            "2026-12-05T01:59:00Z",
            true,
        ),
        (
            "cron window just closed",
            &friday_night,
            "2026-12-05T02:00:00Z",
            false,
        ),
        (
            "before the friday fire",
            &friday_night,
            "2026-12-04T21:59:59Z",
            false,
        ),
        (
            "new york 01:00 sunday is 06:00 utc",
            &new_york_sunday,
            "2026-12-06T06:00:00Z",
            true,
        ),
        (
            "new york window before fire",
            &new_york_sunday,
            "2026-12-06T05:59:00Z",
            false,
        ),
        (
            "new york window after duration",
            &new_york_sunday,
            "2026-12-06T08:00:00Z",
            false,
        ),
        (
            "no duration lasts until the next fire",
            &until_next_fire,
            "2026-12-06T23:00:00Z",
            true,
        ),
        (
            "no duration still bounded by between",
            &until_next_fire,
            "2026-11-30T08:30:00Z",
            false,
        ),
        (
            "descriptor daily opens at midnight",
            &daily,
            "2026-12-03T01:29:00Z",
            true,
        ),
        (
            "descriptor daily closes after 90m",
            &daily,
            "2026-12-03T01:30:00Z",
            false,
        ),
    ];
    for (name, w, at, want) in cases {
        assert_eq!(w.is_active(t(at)), want, "{name} at {at}");
    }
}

#[test]
fn spring_forward_in_berlin_moves_a_fire_in_the_gap_to_the_end_of_the_gap() {
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z). 02:30 does not exist that day; the
    // cron crate documents that a fixed-time job then fires at the first valid time after the
    // gap on the same day: 03:00 CEST = 01:00Z.
    let w =
        window("activePeriod: {startCron: '30 2 * * *', timezone: Europe/Berlin, duration: 1h}");
    assert!(!w.is_active(t("2026-03-29T00:59:00Z")));
    assert!(w.is_active(t("2026-03-29T01:00:00Z")));
    assert!(w.is_active(t("2026-03-29T01:59:00Z")));
    assert!(!w.is_active(t("2026-03-29T02:00:00Z")));
    // The day before and after fire at 02:30 local as usual (01:30Z CET, 00:30Z CEST).
    assert!(w.is_active(t("2026-03-28T01:30:00Z")));
    assert!(w.is_active(t("2026-03-30T00:30:00Z")));
    assert!(!w.is_active(t("2026-03-30T00:29:00Z")));
}

#[test]
fn fall_back_in_berlin_fires_a_repeated_time_once() {
    // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens at 00:30Z and at 01:30Z.
    // Fixed-time jobs fire once, at the first occurrence.
    let w =
        window("activePeriod: {startCron: '30 2 * * *', timezone: Europe/Berlin, duration: 30m}");
    assert!(w.is_active(t("2026-10-25T00:30:00Z")));
    assert!(w.is_active(t("2026-10-25T00:59:00Z")));
    assert!(!w.is_active(t("2026-10-25T01:00:00Z")));
    assert!(
        !w.is_active(t("2026-10-25T01:45:00Z")),
        "no second fire in the repeated hour"
    );
}

#[test]
fn first_active_entry_wins_and_freeze_defers_with_its_end() {
    let c = chain(
        r#"
    - id: release-weekend
      schedule:
        between: {start: '2026-12-04T18:00:00Z', end: '2026-12-06T06:00:00Z'}
      freeze: true
    - id: weekday
      schedule:
        activePeriod: {startCron: '0 6 * * 1-5', duration: 12h}
      profile: {candidateDeterminationStrategy: MinimalDistance}
    - id: fallback
      profile: {}
"#,
    );
    match c.select(t("2026-12-05T10:00:00Z")) {
        Selection::Deferred { reason, retry_at } => {
            assert_eq!(
                reason,
                "freeze window \"release-weekend\" until 2026-12-06T06:00:00Z"
            );
            assert_eq!(retry_at, Some(t("2026-12-06T06:00:00Z")));
        }
        Selection::Profile { entry, .. } => panic!("expected freeze, got {entry}"),
    }
    match c.select(t("2026-12-07T07:00:00Z")) {
        Selection::Profile { entry, profile } => {
            assert_eq!(entry, "weekday");
            assert_eq!(profile.strategy, MinimalDistance.name());
        }
        Selection::Deferred { reason, .. } => panic!("{reason}"),
    }
    match c.select(t("2026-12-07T19:00:00Z")) {
        Selection::Profile { entry, profile } => {
            assert_eq!(entry, "fallback");
            assert_eq!(profile.strategy, SameRegion.name(), "plain keys fill in");
        }
        Selection::Deferred { reason, .. } => panic!("{reason}"),
    }
}

#[test]
fn no_active_entry_defers_until_the_next_window_opens() {
    let c = chain(
        r#"
    - id: nights
      schedule:
        activePeriod: {startCron: '0 22 * * *', duration: 2h}
      profile: {}
"#,
    );
    match c.select(t("2026-12-01T12:00:00Z")) {
        Selection::Deferred { reason, retry_at } => {
            assert_eq!(reason, "no scheduling profile is active");
            assert_eq!(retry_at, Some(t("2026-12-01T22:00:00Z")));
        }
        Selection::Profile { .. } => panic!("nothing should be active at noon"),
    }
}

#[test]
fn absent_profiles_key_keeps_existing_configs_working() {
    let cfg = load_str("").unwrap().config;
    let c = ProfileChain::from_config(&cfg.schedulers.shoot).unwrap();
    assert!(matches!(
        c.select(t("2026-12-01T00:00:00Z")),
        Selection::Profile {
            entry: "default",
            ..
        }
    ));
}

#[test]
fn ids_default_to_the_index() {
    let c = chain("    - profile: {}\n    - freeze: true\n");
    assert_eq!(
        c.entries.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["0", "1"]
    );
}

#[test]
fn timeline_lists_one_line_per_change() {
    let c = chain(
        r#"
    - id: freeze
      schedule:
        between: {start: '2026-12-02T00:00:00Z', end: '2026-12-03T00:00:00Z'}
      freeze: true
    - id: business-hours
      schedule:
        activePeriod: {startCron: '0 8 * * *', duration: 10h}
      profile: {}
"#,
    );
    let lines: Vec<(String, Option<String>)> = c
        .timeline(t("2026-12-01T00:00:00Z"), t("2026-12-03T12:00:00Z"))
        .changes
        .into_iter()
        .map(|(at, id)| (window::fmt(at), id))
        .collect();
    let want: Vec<(String, Option<String>)> = vec![
        ("2026-12-01T00:00:00Z".into(), None),
        ("2026-12-01T08:00:00Z".into(), Some("business-hours".into())),
        ("2026-12-01T18:00:00Z".into(), None),
        (
            "2026-12-02T00:00:00Z".into(),
            Some("freeze (freeze)".into()),
        ),
        ("2026-12-03T00:00:00Z".into(), None),
        ("2026-12-03T08:00:00Z".into(), Some("business-hours".into())),
    ];
    assert_eq!(lines, want);
}

#[test]
fn validation_table() {
    let many = "    - {freeze: true}\n".repeat(65);
    let cases: Vec<(&str, &str, &str)> = vec![
        (
            "empty list",
            "      []\n",
            "schedulers.shoot.profiles: must hold at least one entry",
        ),
        (
            "duplicate ids",
            "    - {id: a, freeze: true}\n    - {id: a, freeze: true}\n",
            "schedulers.shoot.profiles[1].id: duplicate id \"a\"",
        ),
        (
            "end not after start",
            "    - freeze: true\n      schedule: {between: {start: '2026-12-02T00:00:00Z', end: '2026-12-01T00:00:00Z'}}\n",
            "schedulers.shoot.profiles[0].schedule.between.end: must be after between.start",
        ),
        (
            "timestamp without offset",
            "    - freeze: true\n      schedule: {between: {start: '2026-12-02T00:00:00'}}\n",
            "schedulers.shoot.profiles[0].schedule.between.start: \"2026-12-02T00:00:00\" is not an RFC 3339 timestamp",
        ),
        (
            "unparsable cron",
            "    - freeze: true\n      schedule: {activePeriod: {startCron: '61 * * * *'}}\n",
            "schedulers.shoot.profiles[0].schedule.activePeriod.startCron: \"61 * * * *\"",
        ),
        (
            "cron that never fires",
            "    - freeze: true\n      schedule: {activePeriod: {startCron: '0 0 31 2 *'}}\n",
            "schedulers.shoot.profiles[0].schedule.activePeriod.startCron: \"0 0 31 2 *\": never fires: no date matches every field",
        ),
        (
            "too many entries",
            &many,
            "schedulers.shoot.profiles: holds 65 entries, more than the 64 accepted",
        ),
        (
            "six field cron",
            "    - freeze: true\n      schedule: {activePeriod: {startCron: '0 0 1 * * *'}}\n",
            "expected 5 fields",
        ),
        (
            "zoned cron",
            "    - freeze: true\n      schedule: {activePeriod: {startCron: 'CRON_TZ=Europe/Berlin 0 1 * * *'}}\n",
            "a CRON_TZ=/TZ= prefix is not supported: set activePeriod.timezone instead",
        ),
        (
            "unknown timezone",
            "    - freeze: true\n      schedule: {activePeriod: {startCron: '0 1 * * *', timezone: Mars/Olympus}}\n",
            "schedulers.shoot.profiles[0].schedule.activePeriod.timezone: unknown time zone \"Mars/Olympus\"",
        ),
        (
            "zero duration",
            "    - freeze: true\n      schedule: {activePeriod: {startCron: '0 1 * * *', duration: 0s}}\n",
            "schedulers.shoot.profiles[0].schedule.activePeriod.duration: must be positive",
        ),
        (
            "unparsable duration",
            "    - freeze: true\n      schedule: {activePeriod: {startCron: '0 1 * * *', duration: soon}}\n",
            "schedulers.shoot.profiles[0].schedule.activePeriod.duration: invalid duration \"soon\"",
        ),
        (
            "neither profile nor freeze",
            "    - id: x\n",
            "schedulers.shoot.profiles[0]: needs a profile or freeze: true",
        ),
        (
            "both profile and freeze",
            "    - {freeze: true, profile: {}}\n",
            "schedulers.shoot.profiles[0]: set either profile or freeze: true, not both",
        ),
        (
            "bad strategy in entry",
            "    - profile: {candidateDeterminationStrategy: Foo}\n",
            "schedulers.shoot.profiles[0].profile.candidateDeterminationStrategy: unsupported value \"Foo\"",
        ),
        (
            "bad weight in entry",
            "    - profile: {priorities: [{name: ShootCount, weight: -1}]}\n",
            "schedulers.shoot.profiles[0].profile.priorities[0].weight: must be a positive number",
        ),
    ];
    for (name, yaml, want) in cases {
        let got = errors(yaml);
        assert!(
            got.iter().any(|e| e.contains(want)),
            "{name}: want {want:?} in {got:#?}"
        );
    }
}

#[test]
fn every_problem_of_a_chain_is_reported() {
    let got = errors(
        "    - {id: a, freeze: true, schedule: {activePeriod: {startCron: 'x', timezone: Nowhere, duration: '-5m'}}}\n    - {id: a}\n",
    );
    assert!(got.len() >= 4, "{got:#?}");
}
