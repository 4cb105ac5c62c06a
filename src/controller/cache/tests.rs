use crate::api::{CloudProfile, ConfigMap};
use crate::controller::cache::*;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use crate::schedule::FitError;

fn names() -> Vec<String> {
    vec!["default-scheduler".into()]
}

fn with_rv(mut s: Shoot, rv: &str) -> Shoot {
    s.metadata.resource_version = Some(rv.into());
    s
}

#[test]
fn a_new_pending_shoot_is_enqueued_and_kept_compact() {
    let mut st = Cache::new(names());
    let mut shoot = ShootBuilder::new("garden-a", "s1").build();
    shoot.metadata.managed_fields = Some(vec![Default::default()]);
    shoot.metadata.annotations = Some([("a".to_string(), "b".to_string())].into());
    assert!(st.apply_shoot(&shoot).enqueue);
    let cached = st.pending("garden-a/s1").unwrap();
    assert!(cached.metadata.managed_fields.is_none());
    assert!(cached.metadata.annotations.is_none());
    assert_eq!(st.pending_count(), 1);
}

#[test]
fn only_scheduling_relevant_changes_of_a_pending_shoot_enqueue_it_again() {
    let mut st = Cache::new(names());
    let shoot = ShootBuilder::new("garden-a", "s1").build();
    st.apply_shoot(&shoot);
    let mut status_only = shoot.clone();
    status_only.status = Some(crate::api::ShootStatus {
        last_operation: Some(Default::default()),
        ..Default::default()
    });
    assert!(!st.apply_shoot(&with_rv(status_only, "2")).enqueue);
    let mut spec = shoot.clone();
    spec.spec.purpose = Some("production".into());
    assert!(st.apply_shoot(&with_rv(spec, "3")).enqueue);
}

#[test]
fn the_residency_opt_out_is_kept_in_the_cache_and_its_change_enqueues_the_shoot() {
    use crate::api::ANNOTATION_RESIDENCY;
    let mut st = Cache::new(names());
    let shoot = ShootBuilder::new("garden-a", "s1").build();
    st.apply_shoot(&shoot);
    let opted = ShootBuilder::new("garden-a", "s1")
        .annotation(ANNOTATION_RESIDENCY, "ignore")
        .annotation("unrelated", "x")
        .build();
    assert!(st.apply_shoot(&with_rv(opted, "2")).enqueue);
    let cached = st.pending("garden-a/s1").unwrap();
    assert_eq!(
        cached.metadata.annotations,
        Some([(ANNOTATION_RESIDENCY.to_string(), "ignore".to_string())].into())
    );
}

#[test]
fn a_project_residency_opt_out_change_wakes_waiting_shoots() {
    use crate::api::{ANNOTATION_RESIDENCY, Project, ProjectSpec};
    let mut st = Cache::new(names());
    let mut project = Project {
        spec: ProjectSpec {
            namespace: Some("garden-a".into()),
        },
        ..Default::default()
    };
    project.metadata.name = Some("a".into());
    st.apply_project(&project);
    assert!(
        !st.apply_project(&project).retry_waiting,
        "an identical resync"
    );
    project.metadata.annotations =
        Some([(ANNOTATION_RESIDENCY.to_string(), "ignore".to_string())].into());
    assert!(st.apply_project(&project).retry_waiting);
    assert!(st.snapshot.project_opts_out_of_residency("a"));
}

#[test]
fn shoots_of_other_schedulers_and_bound_shoots_are_not_pending() {
    let mut st = Cache::new(names());
    let mut other = ShootBuilder::new("garden-a", "other").build();
    other.spec.scheduler_name = Some("custom".into());
    assert!(!st.apply_shoot(&other).enqueue);
    assert!(
        !st.apply_shoot(&ShootBuilder::new("garden-a", "b").seed("s").build())
            .enqueue
    );
    assert_eq!(st.pending_count(), 0);
    assert_eq!(st.known_shoots(), 2);
}

#[test]
fn an_assumption_counts_until_the_watch_shows_the_seed_even_past_a_stale_event() {
    let mut st = Cache::new(names());
    let shoot = with_rv(ShootBuilder::new("garden-a", "s1").build(), "1");
    st.apply_shoot(&shoot);
    st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
    assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 1);
    assert!(
        st.pending("garden-a/s1").is_none(),
        "assumed shoots are not decided again"
    );
    st.confirm_bind("garden-a/s1");
    // a stale pre-bind event arrives after the bind
    let c = st.apply_shoot(&shoot);
    assert_eq!(c, Change::default());
    assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 1, "still counted");
    // the watch shows the bound version
    let bound = with_rv(
        ShootBuilder::new("garden-a", "s1").seed("seed-1").build(),
        "2",
    );
    st.apply_shoot(&bound);
    assert!(st.assumption("garden-a/s1").is_none());
    assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 1);
}

#[test]
fn a_failed_bind_frees_the_assumed_slot_and_makes_the_shoot_pending_again() {
    let mut st = Cache::new(names());
    st.apply_shoot(&ShootBuilder::new("garden-a", "s1").build());
    st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
    let c = st.forget_assumption("garden-a/s1");
    assert!(c.enqueue, "pending again");
    assert!(
        !c.retry_waiting,
        "capacity that was never used is no landscape change: nobody else is woken"
    );
    assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 0);
    assert!(st.pending("garden-a/s1").is_some());
}

fn refused_for_capacity(seed: &str) -> FitError {
    FitError::no_fit(
        1,
        vec![crate::schedule::Rejection {
            seed: seed.into(),
            stage: "filter",
            reason: crate::reason::testing::full(),
        }],
    )
}

#[test]
fn a_dropped_assumption_requeues_only_the_shoots_its_seed_turned_away_and_only_once() {
    let mut st = Cache::new(names());
    for name in ["a", "b", "c", "d"] {
        st.apply_shoot(&ShootBuilder::new("garden-a", name).build());
    }
    // no assumption counts yet: a full seed is a fact, not a reason to hope
    st.note_refused("garden-a/d", &refused_for_capacity("seed-1"));
    st.assume(&st.pending("garden-a/a").unwrap(), "seed-1");
    st.note_refused("garden-a/b", &refused_for_capacity("seed-1"));
    st.note_refused("garden-a/c", &refused_for_capacity("seed-2"));
    let c = st.forget_assumption("garden-a/a");
    assert_eq!(c.requeue, vec![Arc::<str>::from("garden-a/b")]);
    assert!(!c.retry_waiting);
    st.assume(&st.pending("garden-a/a").unwrap(), "seed-1");
    assert!(
        st.forget_assumption("garden-a/a").requeue.is_empty(),
        "b was handed out once"
    );
}

#[test]
fn the_schedulers_own_writes_coming_back_through_the_watch_wake_nobody() {
    let mut st = Cache::new(names());
    let shoot = with_rv(ShootBuilder::new("garden-a", "s1").build(), "1");
    st.apply_shoot(&shoot);
    // lastOperation written by the scheduler
    let mut status = shoot.clone();
    status.status = Some(crate::api::ShootStatus {
        last_operation: Some(Default::default()),
        ..Default::default()
    });
    assert_eq!(st.apply_shoot(&with_rv(status, "2")), Change::default());
    // its bind, assumed and then shown by the watch
    st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
    st.confirm_bind("garden-a/s1");
    let bound = with_rv(
        ShootBuilder::new("garden-a", "s1").seed("seed-1").build(),
        "3",
    );
    assert_eq!(st.apply_shoot(&bound), Change::default());
}

#[test]
fn a_shoot_deleted_while_being_bound_frees_nothing_others_counted_on() {
    let mut st = Cache::new(names());
    st.apply_shoot(&ShootBuilder::new("garden-a", "a").build());
    st.assume(&st.pending("garden-a/a").unwrap(), "seed-1");
    assert!(!st.remove_shoot("garden-a/a").retry_waiting);
}

#[test]
fn a_seed_chosen_by_someone_else_replaces_the_assumption() {
    let mut st = Cache::new(names());
    st.apply_shoot(&ShootBuilder::new("garden-a", "s1").build());
    st.assume(&st.pending("garden-a/s1").unwrap(), "seed-1");
    st.apply_shoot(&ShootBuilder::new("garden-a", "s1").seed("seed-2").build());
    assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 0);
    assert_eq!(st.snapshot.usage().shoots_on("seed-2"), 1);
    assert!(st.forget_assumption("garden-a/s1") == Change::default());
}

#[test]
fn heartbeats_do_not_wake_waiting_shoots_but_a_removed_taint_does() {
    let mut st = Cache::new(names());
    let tainted = SeedBuilder::new("s1").taint("protected", None).build();
    assert!(st.apply_seed(&tainted).retry_waiting);
    let mut heartbeat = tainted.clone();
    heartbeat.status.conditions[0].message = Some("still ready".into());
    assert!(!st.apply_seed(&heartbeat).retry_waiting);
    assert!(st.apply_seed(&SeedBuilder::new("s1").build()).retry_waiting);
}

#[test]
fn a_deleted_shoot_frees_its_seed() {
    let mut st = Cache::new(names());
    st.apply_shoot(&ShootBuilder::new("garden-a", "b").seed("s").build());
    assert!(st.remove_shoot("garden-a/b").retry_waiting);
    assert_eq!(st.snapshot.usage().shoots_on("s"), 0);
}

#[test]
fn a_relist_removes_what_was_deleted_while_the_watch_was_down() {
    let mut st = Cache::new(names());
    st.apply_shoot(&ShootBuilder::new("garden-a", "gone").seed("s").build());
    st.apply_shoot(&ShootBuilder::new("garden-a", "kept").build());
    st.apply_seed(&SeedBuilder::new("old").build());
    st.begin_relist(WatchedKind::Shoot);
    st.apply_shoot(&ShootBuilder::new("garden-a", "kept").build());
    assert!(st.end_relist(WatchedKind::Shoot).retry_waiting);
    assert_eq!(st.known_shoots(), 1);
    assert_eq!(st.snapshot.usage().shoots_on("s"), 0);
    st.begin_relist(WatchedKind::Seed);
    st.end_relist(WatchedKind::Seed);
    assert_eq!(st.snapshot.seeds().len(), 0);
}

/// A project owning the namespace `ns-<name>`.
fn project(name: &str) -> crate::api::Project {
    let mut p = crate::api::Project::default();
    p.metadata.name = Some(name.into());
    p.spec.namespace = Some(format!("ns-{name}"));
    p
}

#[test]
fn a_relist_keeps_every_object_it_lists_again_and_only_those() {
    let mut st = Cache::new(names());
    for s in ["s1", "s2"] {
        st.apply_seed(&SeedBuilder::new(s).build());
    }
    st.apply_shoot(&ShootBuilder::new("garden-a", "bound").seed("s1").build());
    st.apply_shoot(&ShootBuilder::new("garden-a", "deleted").seed("s2").build());
    st.apply_shoot(&ShootBuilder::new("garden-a", "pending").build());
    st.apply_project(&project("a"));
    st.apply_project(&project("b"));
    for kind in [WatchedKind::Shoot, WatchedKind::Seed, WatchedKind::Project] {
        st.begin_relist(kind);
    }
    // listed again: a bound shoot as before, a pending one unchanged, one seed, one project
    st.apply_shoot(&ShootBuilder::new("garden-a", "bound").seed("s1").build());
    let pending = st.apply_shoot(&ShootBuilder::new("garden-a", "pending").build());
    assert!(
        !pending.enqueue,
        "an unchanged pending shoot is not queued again"
    );
    st.apply_seed(&SeedBuilder::new("s1").build());
    st.apply_project(&project("a"));

    assert!(
        st.end_relist(WatchedKind::Shoot).retry_waiting,
        "s2 was freed"
    );
    assert_eq!(st.known_shoots(), 2);
    assert_eq!(st.snapshot.usage().shoots_on("s1"), 1);
    assert_eq!(st.snapshot.usage().shoots_on("s2"), 0);
    assert_eq!(st.pending_keys(), vec![Arc::from("garden-a/pending")]);
    assert!(st.end_relist(WatchedKind::Seed).retry_waiting);
    let seeds: Vec<_> = st.snapshot.seeds().map(|s| s.name.to_string()).collect();
    assert_eq!(seeds, ["s1"]);
    assert!(st.end_relist(WatchedKind::Project).retry_waiting);
    assert_eq!(st.snapshot.project_of("ns-a"), "a");
    assert_eq!(st.snapshot.project_of("ns-b"), "ns-b", "b is gone");

    // a list that is over removes nothing more, and nor does the next list's end without it
    assert_eq!(st.end_relist(WatchedKind::Shoot), Change::default());
    assert_eq!(st.known_shoots(), 2);
}

#[test]
fn a_relist_interrupted_and_started_again_removes_what_only_the_interrupted_one_listed() {
    let mut st = Cache::new(names());
    st.apply_shoot(&ShootBuilder::new("garden-a", "a").seed("s").build());
    st.apply_shoot(&ShootBuilder::new("garden-a", "b").seed("s").build());
    st.begin_relist(WatchedKind::Shoot);
    st.apply_shoot(&ShootBuilder::new("garden-a", "a").seed("s").build());
    st.apply_shoot(&ShootBuilder::new("garden-a", "b").seed("s").build());
    // the list fails on its second page and starts over; b was deleted meanwhile
    st.begin_relist(WatchedKind::Shoot);
    st.apply_shoot(&ShootBuilder::new("garden-a", "a").seed("s").build());
    assert!(st.end_relist(WatchedKind::Shoot).retry_waiting);
    assert_eq!(st.known_shoots(), 1);
    assert_eq!(st.snapshot.usage().shoots_on("s"), 1);
    assert!(st.snapshot.usage().seeds_of("garden-a/b").is_empty());
}

#[test]
fn an_object_listed_again_but_malformed_keeps_what_was_known_of_it() {
    let mut st = Cache::new(names());
    st.apply_seed(&SeedBuilder::new("s1").build());
    st.apply_shoot(&ShootBuilder::new("garden-a", "a").seed("s1").build());
    st.apply_project(&project("a"));
    // each listed again, but failing to decode: the watch marks it by its key alone
    for (kind, key) in [
        (WatchedKind::Shoot, "garden-a/a"),
        (WatchedKind::Seed, "s1"),
        (WatchedKind::Project, "a"),
    ] {
        st.begin_relist(kind);
        st.mark_seen(kind, key);
    }
    assert!(!st.end_relist(WatchedKind::Shoot).retry_waiting);
    assert!(!st.end_relist(WatchedKind::Seed).retry_waiting);
    assert!(!st.end_relist(WatchedKind::Project).retry_waiting);
    assert_eq!(st.snapshot.usage().shoots_on("s1"), 1);
    assert_eq!(st.snapshot.project_of("ns-a"), "a");
}

#[test]
fn a_shoot_the_watch_brought_before_a_relist_is_removed_when_the_relist_misses_it() {
    let mut st = Cache::new(names());
    st.begin_relist(WatchedKind::Shoot);
    st.apply_shoot(&ShootBuilder::new("garden-a", "a").seed("s").build());
    st.end_relist(WatchedKind::Shoot);
    // after the list, the watch brings b; then a 410, and the relist lists only a
    st.apply_shoot(&ShootBuilder::new("garden-a", "b").build());
    st.begin_relist(WatchedKind::Shoot);
    st.apply_shoot(&ShootBuilder::new("garden-a", "a").seed("s").build());
    st.end_relist(WatchedKind::Shoot);
    assert_eq!(st.known_shoots(), 1);
    assert!(st.pending("garden-a/b").is_none());
}

#[test]
fn watched_kinds_are_indexed_by_their_place_in_all() {
    for (i, kind) in WatchedKind::ALL.iter().enumerate() {
        assert_eq!(kind.index(), i, "{kind:?}");
    }
}

#[test]
fn unchanged_cloud_profiles_do_not_wake_but_new_ones_do() {
    let mut st = Cache::new(names());
    let mut cp = CloudProfile::default();
    cp.metadata.name = Some("aws".into());
    assert!(st.apply_cloud_profile(&cp).retry_waiting);
    cp.metadata.resource_version = Some("9".into());
    assert!(!st.apply_cloud_profile(&cp).retry_waiting);
    assert!(
        st.remove_other(WatchedKind::CloudProfile, "aws")
            .retry_waiting
    );
}

fn carbon(value: f64) -> ConfigMap {
    crate::fixtures::CarbonConfigMapBuilder::new("carbon-se")
        .points("SE", "2026-12-01T00:00:00Z", 60, 48, value)
        .build()
}

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

#[test]
fn a_changed_forecast_wakes_waiting_shoots_and_an_identical_resync_does_not() {
    let mut st = Cache::new(names());
    assert!(st.apply_carbon_config_map(&carbon(35.0)).retry_waiting);
    let mut resync = carbon(35.0);
    resync.metadata.resource_version = Some("7".into());
    assert!(!st.apply_carbon_config_map(&resync).retry_waiting);
    assert!(st.apply_carbon_config_map(&carbon(400.0)).retry_waiting);
    let sources: Vec<_> = st.snapshot.carbon_sources().for_location("SE").collect();
    assert_eq!(sources.len(), 1);
    let points = sources[0].data.forecasts("data").unwrap()["SE"].points();
    assert_eq!(points[0].value, 400.0);
}

#[test]
fn a_deleted_forecast_keeps_counting_from_the_deletion_and_a_recreation_replaces_it() {
    let mut st = Cache::new(names());
    st.apply_carbon_config_map(&carbon(35.0));
    let c = st.remove_carbon_config_map("kube-system/carbon-se", t("2026-12-01T06:00:00Z"));
    assert!(c.retry_waiting);
    // when the source of SE was removed
    let removed_at = |st: &Cache| {
        let source = st.snapshot.carbon_sources().for_location("SE").next();
        source.unwrap().removed_at
    };
    assert_eq!(removed_at(&st), Some(t("2026-12-01T06:00:00Z")));
    assert!(
        st.apply_carbon_config_map(&carbon(35.0)).retry_waiting,
        "a recreated ConfigMap is news even with the same content"
    );
    assert_eq!(removed_at(&st), None);
}

#[test]
fn a_forecast_missing_from_a_relist_starts_its_grace_period_instead_of_vanishing() {
    let mut st = Cache::new(names());
    st.apply_carbon_config_map(&carbon(35.0));
    st.begin_relist(WatchedKind::CarbonConfigMap);
    assert!(st.end_relist(WatchedKind::CarbonConfigMap).retry_waiting);
    let s = st.snapshot.carbon_sources().for_location("SE").next();
    assert!(s.is_some_and(|s| s.removed_at.is_some()), "{s:?}");
}

#[test]
fn carbon_and_region_configmaps_do_not_disturb_each_other() {
    let mut st = Cache::new(names());
    st.apply_carbon_config_map(&carbon(35.0));
    let mut region = ConfigMap::default();
    region.metadata.name = Some("regions".into());
    region.metadata.namespace = Some("garden".into());
    region.metadata.labels = Some(
        [(
            crate::api::LABEL_SCHEDULING_PURPOSE.to_string(),
            crate::api::PURPOSE_REGION_CONFIG.to_string(),
        )]
        .into(),
    );
    st.apply_config_map(&region);
    st.begin_relist(WatchedKind::ConfigMap);
    st.end_relist(WatchedKind::ConfigMap);
    let s = st.snapshot.carbon_sources().for_location("SE").next();
    assert!(
        s.is_some_and(|s| s.removed_at.is_none()),
        "a relist of region ConfigMaps leaves forecasts alone: {s:?}"
    );
}

#[test]
fn a_watch_event_older_than_a_read_never_replaces_it() {
    let mut st = Cache::new(names());
    st.apply_seed(&SeedBuilder::new("s1").build());
    let pending = ShootBuilder::new("garden-a", "a").build();
    st.apply_shoot(&with_rv(pending.clone(), "10"));
    // read after a bind: bound at 12, ahead of the watch
    let bound = with_rv(ShootBuilder::new("garden-a", "a").seed("s1").build(), "12");
    let raw = serde_json::to_value(&bound).unwrap();
    st.apply_read_shoot(&bound, &raw);
    assert!(st.pending("garden-a/a").is_none());
    // the watch still delivers the pending version 11 (a label change before the bind)
    let change = st.apply_shoot(&with_rv(pending.clone(), "11"));
    assert_eq!(change, Change::default());
    assert!(
        st.pending("garden-a/a").is_none(),
        "an older object replaced a newer one"
    );
    assert_eq!(st.snapshot.usage().shoots_on("s1"), 1);
    // the watch catches up, and later versions apply again
    st.apply_shoot(&with_rv(bound.clone(), "12"));
    let unbound = with_rv(pending, "13");
    assert!(st.apply_shoot(&unbound).enqueue);
    assert!(st.pending("garden-a/a").is_some());
    assert_eq!(st.snapshot.usage().shoots_on("s1"), 0);
}

/// 256 KiB of gates, the most annotations the API server takes; `last` ends the list.
fn largest_gates(last: &str) -> String {
    let mut value = String::new();
    let mut i = 0;
    while value.len() + 32 < 256 * 1024 {
        value.push_str(&format!("g{i},"));
        i += 1;
    }
    value.push_str(last);
    value
}

#[test]
fn a_shoot_is_prepared_without_the_cache_and_its_gates_are_kept_parsed() {
    use crate::api::ANNOTATION_GATES;
    let shoot = ShootBuilder::new("garden-a", "s1")
        .annotation(ANNOTATION_GATES, &largest_gates("last-gate"))
        .build();
    let raw = serde_json::to_value(&shoot).unwrap();
    let text = raw.to_string();
    // prepared while the cache is held elsewhere: nothing of it needs the lock
    let shared = std::sync::Mutex::new(Cache::new(names()));
    let held = shared.lock().unwrap();
    let update = ShootUpdate::new(&shoot, Some(Sent::Text(&text)), &names());
    drop(held);
    assert!(shared.lock().unwrap().apply_shoot_update(update).enqueue);
    let st = shared.lock().unwrap();
    let (_, gates) = st.pending_with_gates("garden-a/s1").unwrap();
    let Gates::Closed(listed) = &*gates else {
        panic!("{gates:?}")
    };
    assert!(listed.len() > 35_000, "{}", listed.len());
    assert_eq!(listed.last().map(String::as_str), Some("last-gate"));
    assert!(st.pending_raw("garden-a/s1").unwrap().contains("last-gate"));
}

#[test]
fn removing_the_last_of_many_gates_enqueues_the_shoot_and_an_unrelated_edit_does_not() {
    use crate::api::ANNOTATION_GATES;
    let mut st = Cache::new(names());
    let gated = |last: &str, rv: &str| {
        with_rv(
            ShootBuilder::new("garden-a", "s1")
                .annotation(ANNOTATION_GATES, &largest_gates(last))
                .annotation("unrelated", rv)
                .build(),
            rv,
        )
    };
    st.apply_shoot(&gated("last-gate", "1"));
    assert!(!st.apply_shoot(&gated("last-gate", "2")).enqueue);
    assert!(st.apply_shoot(&gated("other-gate", "3")).enqueue);
    let open = with_rv(ShootBuilder::new("garden-a", "s1").build(), "4");
    assert!(st.apply_shoot(&open).enqueue);
    assert_eq!(
        *st.pending_with_gates("garden-a/s1").unwrap().1,
        Gates::Open
    );
}
